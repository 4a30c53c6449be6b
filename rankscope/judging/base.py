"""What every judge is: pairs in, one graded label with a status and the raw reply out, under an identity.

A judge's :class:`JudgeIdentity` (kind, model, prompt version and hash, parameters) is what the
cache keys labels by: two judges with the same identity must give the same labels, so anything
that changes a label (the prompt, the temperature, the seed, the server) belongs in it, and
nothing secret does (an API key is named by the variable that holds it, never by its value).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rankscope.core.errors import RankscopeError

OK = "ok"
"""The judge gave a label."""
INVALID = "invalid"
"""The judge answered, but the reply holds no label (kept and reported, never read as 0)."""
FAILED = "failed"
"""The judge could not be asked (timeouts, server errors after the retries): no reply at all."""
STATUSES = (OK, INVALID, FAILED)

LABELS = (0, 1, 2, 3)
"""The graded scale every judge answers on: 0 irrelevant ... 3 perfectly relevant."""


class JudgeError(RankscopeError, ValueError):
    """A judge spec, option or judgments file is unusable (said in one line)."""


class JudgeFailedError(RankscopeError):
    """Every call made to the judge failed (a server down, a wrong URL or key): its reasons in one line.
    The command ends with :attr:`exit_code` 3, not 2, so a script can tell a judge that answered
    nothing from a mistyped option; the calls are counted in the cache and asked again next run."""

    exit_code = 3


@dataclass(frozen=True)
class Pair:
    """One (query, document) to judge. Text judges read the texts; a qrels judge reads the ids."""

    query_id: str
    doc_id: str
    query: str
    document: str


@dataclass(frozen=True)
class Judgment:
    """A judge's answer to one pair: ``label`` is None unless ``status`` is ``ok``. ``tokens``: what the call
    cost as the server reported it (0 when it did not, or no call was made); not part of equality."""

    label: int | None
    status: str
    raw: str
    tokens: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        if (self.status == OK) != (self.label in LABELS):
            raise ValueError(f"a judgment with status {self.status!r} cannot have label {self.label!r}")


@dataclass(frozen=True)
class JudgeIdentity:
    """Everything that decides a judge's labels; :attr:`key` hashes it for the cache."""

    kind: str
    model: str
    prompt_version: str = ""
    prompt_hash: str = ""
    parameters: tuple[tuple[str, Any], ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "prompt_hash": self.prompt_hash,
            "parameters": dict(self.parameters),
        }

    @property
    def key(self) -> str:
        """SHA-256 of the identity's canonical JSON: equal identities, equal keys, in any process."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def __str__(self) -> str:
        shown = ",".join(f"{name}={value}" for name, value in self.parameters)
        return f"{self.kind}:{self.model}" + (f"[{shown}]" if shown else "")


class Judge:
    """The interface: :meth:`ask` answers one pair; :meth:`stream` answers many as they complete (one
    after the other unless a judge overrides it, as the HTTP judge does with threads); :meth:`judge`
    collects them in order.

    ``reads_ids`` is True for a judge that answers from the ids (a qrels file) rather than the
    texts; the cache then keys its labels by ids, since two documents with one text may differ there.
    """

    identity: JudgeIdentity
    reads_ids: bool = False
    shares: tuple[str, ...] = ()
    """Retriever kinds whose scores the judge reads (the trained judge's features): a compared system
    using one is flagged as circular, as one naming the judge's model is."""

    def ask(self, pair: Pair) -> Judgment:
        """The judgment of one pair; a judge's own failure is a ``failed`` judgment, not an exception."""
        raise NotImplementedError

    def stream(self, pairs: Sequence[Pair]) -> Iterator[tuple[int, Judgment]]:
        """(position in ``pairs``, judgment) for every pair, in the order the answers arrive."""
        for i, pair in enumerate(pairs):
            yield i, self.ask(pair)

    def estimate_tokens(self, pair: Pair) -> int:
        """Tokens one call is expected to cost (0 for judges that are not language models)."""
        return 0

    def judge(self, pairs: Sequence[Pair]) -> list[Judgment]:
        """One judgment per pair, in the order of ``pairs``."""
        answers: dict[int, Judgment] = dict(self.stream(pairs))
        return [answers[i] for i in range(len(pairs))]

    def close(self) -> None:
        """Release connections or threads (nothing by default)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.identity})"
