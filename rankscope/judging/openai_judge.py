"""A judge on any OpenAI-compatible chat-completions server (a hosted API, vLLM, llama.cpp's server, Ollama).

The ``openai`` client library (extra ``judge``) does the HTTP: timeouts, and retries with
exponential backoff that honour 429 and 5xx answers and a server's ``Retry-After``. Requests go
out on at most ``concurrency`` threads; answers are yielded as they arrive, so the caller can
commit each one at once. Temperature 0 and a fixed seed make the replies as repeatable as the
server allows.

The API key is read from the environment variable named by ``key_env`` when the judge is made
and kept only in the client: the identity, ``repr`` and every error text carry the variable's
name, never its value (an error message that quotes it has it replaced by ``***``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from rankscope.judging.base import FAILED, INVALID, OK, Judge, JudgeError, JudgeIdentity, Judgment, Pair
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
        try:
            import openai
        except ModuleNotFoundError:
            raise JudgeError("the openai judge needs the openai package: pip install 'rankscope[judge]'") from None
        key = NO_KEY
        if key_env:
            key = os.environ.get(key_env, "")
            if not key:
                raise JudgeError(f"openai judge: environment variable {key_env} (key_env) is not set or empty")
        self._secret = key if key_env else ""
        self._arguments = {
            "model": model, "base_url": base_url, "key_env": key_env, "temperature": temperature, "seed": seed,
            "max_tokens": max_tokens, "concurrency": concurrency, "timeout": timeout, "retries": retries,
            "grammar": grammar,
        }  # fmt: skip
        self._extra = {"grammar": FINAL_SCORE_GRAMMAR} if grammar else None
        self.model, self.base_url, self.key_env = model, base_url, key_env
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.concurrency = concurrency
        self._errors = (openai.OpenAIError, ValueError)  # ValueError: a body that is not JSON
        self._client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=retries)
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
        try:
            reply = self._client.chat.completions.create(
                model=self.model,
                messages=messages(pair.query, pair.document),  # type: ignore[arg-type]
                temperature=self.temperature,
                seed=self.seed,
                max_tokens=self.max_tokens,
                extra_body=self._extra,
            )
            text = _reply_text(reply)
        except self._errors as exc:
            return Judgment(None, FAILED, self._scrub(f"{type(exc).__name__}: {exc}"))
        if text is None:
            return Judgment(None, INVALID, self._scrub(repr(reply)[:2000]))
        label = parse_label(text)
        return Judgment(None, INVALID, text) if label is None else Judgment(label, OK, text)

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

    def _scrub(self, text: str) -> str:
        return text.replace(self._secret, "***") if self._secret else text


def _remade(arguments: dict[str, Any]) -> OpenAIJudge:
    return OpenAIJudge(**arguments)


def _reply_text(reply: Any) -> str | None:
    """The first choice's message text, or None when the response has none (a garbled body)."""
    choices = getattr(reply, "choices", None)
    if not choices:
        return None
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else None
