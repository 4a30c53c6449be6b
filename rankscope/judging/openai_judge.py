"""A judge on any OpenAI-compatible chat-completions server (a hosted API, vLLM, llama.cpp's server, Ollama).

:mod:`rankscope.judging.chat_http` does the HTTP (urllib3, 0.66 ms of CPU a request
where the ``openai`` client library took 3.3): timeouts, and retries with exponential backoff that
honour 429 and 5xx answers and a server's ``Retry-After``. ``concurrency`` requests are in flight
at once, each on its own thread and kept-alive connection (a thread waiting on the network holds
no lock, so 32 or 64 of them cost little); answers are yielded as they arrive, so the caller can
commit each one at once. Chat completions take one conversation a request, so there is nothing to
batch on the client: servers that batch (vLLM, llama.cpp's ``--parallel``, hosted APIs) batch the
requests in flight, which is why keeping ``concurrency`` of them there is what speeds a judge up.
Temperature 0 and a fixed seed make the replies as repeatable as the server allows.

The API key is read from the environment variable named by ``key_env`` when the judge is made
and kept only in the client: the identity and ``repr`` carry the variable's name, never its value,
and every text a judgment keeps (a reply, ok or invalid, a body that is no completion, a failed
call's reason) goes through :class:`~rankscope.judging.kept_text.KeptText`, which replaces the key,
plain or base64-encoded, by ``***`` and bounds the length (a server echoing the request quotes it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from rankscope.judging.base import FAILED, INVALID, OK, Judge, JudgeError, JudgeIdentity, Judgment, Pair
from rankscope.judging.chat_http import REQUEST_ERRORS, ChatClient
from rankscope.judging.kept_text import KeptText
from rankscope.judging.prompt import (
    FINAL_SCORE_GRAMMAR,
    PROMPT_HASH,
    PROMPT_VERSION,
    SYSTEM,
    TEMPLATE,
    messages,
    parse_label,
)

NO_KEY = "none"
"""What is sent as the key when ``key_env`` is empty: local servers ignore it, the client needs one."""


class OpenAIJudge(Judge):
    """Grades pairs with :mod:`rankscope.judging.prompt` on a chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        key_env: str = "",
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 64,
        concurrency: int = 4,
        timeout: float = 60.0,
        retries: int = 5,
        grammar: int = 0,
    ) -> None:
        key = NO_KEY
        if key_env:
            key = os.environ.get(key_env, "")
            if not key:
                raise JudgeError(f"openai judge: environment variable {key_env} (key_env) is not set or empty")
        self._kept = KeptText(key if key_env else "")
        self._arguments = {
            "model": model, "base_url": base_url, "key_env": key_env, "temperature": temperature, "seed": seed,
            "max_tokens": max_tokens, "concurrency": concurrency, "timeout": timeout, "retries": retries,
            "grammar": grammar,
        }  # fmt: skip
        self._extra = {"grammar": FINAL_SCORE_GRAMMAR} if grammar else None
        self.model, self.base_url, self.key_env = model, base_url, key_env
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.concurrency = concurrency
        try:
            self._client = ChatClient(base_url, key, timeout=timeout, retries=retries, connections=concurrency)
        except ValueError as exc:
            raise JudgeError(f"openai judge: {exc}") from None
        self.identity = JudgeIdentity(
            kind="openai",
            model=model,
            prompt_version=PROMPT_VERSION,
            prompt_hash=PROMPT_HASH,
            parameters=(
                ("base_url", base_url),
                *((("grammar", FINAL_SCORE_GRAMMAR),) if grammar else ()),  # absent when off: older keys stay
                ("max_tokens", max_tokens),
                ("seed", seed),
                ("temperature", temperature),
            ),
        )

    def estimate_tokens(self, pair: Pair) -> int:
        """A rough count of the tokens one call costs (4 characters a token, plus the reply's limit)."""
        return (len(SYSTEM) + len(TEMPLATE) + len(pair.query) + len(pair.document)) // 4 + self.max_tokens

    def ask(self, pair: Pair) -> Judgment:
        """One pair, one request (retried by the client); never raises for what the server does."""
        body = {
            "model": self.model,
            "messages": messages(pair.query, pair.document),
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            **(self._extra or {}),
        }
        try:
            reply = self._client.create(body)
        except REQUEST_ERRORS as exc:
            return Judgment(None, FAILED, self._kept(str(exc)))  # the reason, naming the server
        text, tokens = _reply_text(reply), _tokens(reply)
        if text is None:
            return Judgment(None, INVALID, self._kept(repr(reply)), tokens)
        label = parse_label(text)  # read from the whole reply; only what is kept is cut
        if label is None:
            return Judgment(None, INVALID, self._kept(text), tokens)
        return Judgment(label, OK, self._kept(text), tokens)

    def stream(self, pairs: Sequence[Pair]) -> Iterator[tuple[int, Judgment]]:
        if not pairs:
            return
        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(pairs))) as pool:
            futures = {pool.submit(self.ask, pair): i for i, pair in enumerate(pairs)}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            finally:
                for future in futures:
                    future.cancel()

    def close(self) -> None:
        self._client.close()

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        """Sent to a task as its arguments, never its key or client: the task's process makes its own
        client and reads the key from its own environment (``key_env``)."""
        return _remade, (self._arguments,)


def _remade(arguments: dict[str, Any]) -> OpenAIJudge:
    return OpenAIJudge(**arguments)


def _reply_text(reply: dict[str, Any]) -> str | None:
    """The first choice's message text, or None when the response has none (a garbled body)."""
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, str) else None


def _tokens(reply: dict[str, Any]) -> int:
    """The tokens the server says the call cost (``usage.total_tokens``), 0 when it does not say."""
    usage = reply.get("usage")
    total = usage.get("total_tokens") if isinstance(usage, dict) else None
    return total if isinstance(total, int) and total >= 0 else 0
