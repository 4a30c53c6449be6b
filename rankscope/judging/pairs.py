"""Judging many pairs through the cache: each distinct pair asked at most once, ever.

:func:`judge_pairs` keys every pair (:func:`~rankscope.judging.cache.pair_key`), answers the
keys the cache holds from it, asks the judge the rest (one call per distinct key, whatever the
number of (query_id, doc_id) pairs sharing the texts) and commits each answer as it arrives. The
progress bar counts calls and shows requests per second, cache hits and the tokens spent (as the
server reports them, else estimated); :class:`Outcome` keeps the same numbers.

With a ``scheduler`` (``local:N``, a Dask address or client) the keys to ask are split into
chunks, each a task (:func:`ask_chunk`) that opens the same cache file and commits its answers
there as they arrive, so the one cache is shared (the workers must see its folder: one machine
or a shared file system), a killed run loses only the calls in flight, and each key is asked
once, by one task. A key's label does not depend on which task asked it, so the labels are the
same on 1 or N workers. Several processes judging at once through one cache share it the same way
(:meth:`~rankscope.judging.cache.JudgmentCache.share`): each key is asked by the first to claim it,
and the others count its answer as a cache hit.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankscope.core.printable import printable
from rankscope.core.progress import progress
from rankscope.judging.base import FAILED, INVALID, Judge, JudgeFailedError, Judgment, Pair
from rankscope.judging.cache import JudgmentCache, pair_key


@dataclass(frozen=True)
class Outcome:
    """Judgments in the order of the pairs, and what getting them took."""

    judgments: tuple[Judgment, ...]
    calls: int
    cache_hits: int
    distinct: int
    estimated_tokens: int
    tokens: int = 0
    """Tokens the server reported for the calls made (0 when it reports none)."""
    seconds: float = 0.0
    """Wall time from the first call sent to the last answer."""
    failures: tuple[str, ...] = ()
    """The reason of each call that failed (its judgment's ``raw``), in the order the pairs were asked."""

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0

    @property
    def invalid(self) -> int:
        return sum(j.status == INVALID for j in self.judgments)

    @property
    def failed(self) -> int:
        return sum(j.status == FAILED for j in self.judgments)

    def reasons(self, shown: int = 3) -> str:
        """The most frequent reasons of the failed calls, each with its count, in one printable line."""
        counts = Counter(printable(" ".join(reason.split()))[:300] for reason in self.failures)
        said = "; ".join(f"{reason} ({n} call{'s' * (n > 1)})" for reason, n in counts.most_common(shown))
        return said + (f"; and {len(counts) - shown} other reasons" if len(counts) > shown else "")

    def failure_warning(self) -> str | None:
        """A warning naming how many calls failed and why (None when none did); raises
        :class:`~rankscope.judging.base.JudgeFailedError` when every call made failed."""
        if not self.failures:
            return None
        if len(self.failures) == self.calls:
            raise JudgeFailedError(
                f"the judge failed all {self.calls} calls, so no label came from it: {self.reasons()}"
            )
        return (
            f"the judge failed {len(self.failures)} of {self.calls} calls (their pairs stay unjudged and are asked "
            f"again next run): {self.reasons()}"
        )


def judge_pairs(judge: Judge, pairs: Sequence[Pair], cache: JudgmentCache, scheduler: Any = None) -> Outcome:
    """Every pair's judgment: from the cache where it has one, from the judge (once per key) otherwise;
    with ``scheduler``, the calls made by tasks on that cluster (:func:`ask_chunk`)."""
    identity = judge.identity
    cache.add_judge(identity)
    keys = [pair_key(identity, pair, judge.reads_ids) for pair in pairs]
    first: dict[str, Pair] = {}
    for key, pair in zip(keys, pairs):
        first.setdefault(key, pair)
    answers = cache.lookup(first)
    hits = len(answers)
    todo = [key for key in first if key not in answers]
    estimated = reported = calls = 0
    failed: dict[str, str] = {}
    started = time.perf_counter()

    def status(_: object) -> str:
        rate = calls / max(time.perf_counter() - started, 1e-9)
        spent = f"{reported:,} tokens" if reported else f"~{estimated:,} tokens"
        return f"{rate:.0f} calls/s, cache hits {hits}, {spent}"

    def ask(keys: list[str]) -> Iterator[tuple[str, Judgment]]:
        chosen = [first[key] for key in keys]
        made = (
            judge.stream(chosen)
            if scheduler is None
            else _tasks(judge, chosen, keys, cache.folder.resolve(), scheduler)
        )
        return ((keys[position], judgment) for position, judgment in made)

    # linked before asking: an answer committed by a run killed later is found by its ids (collection export)
    cache.link(identity.key, [(pair.query_id, pair.doc_id, key) for key, pair in zip(keys, pairs)])
    shared = cache.share(identity.key, todo, ask, commit=scheduler is None)  # a task commits its answers itself
    for key, judgment, asked in progress(shared, desc="judging", total=len(todo), unit="call", label=status):
        answers[key] = judgment
        if not asked:  # another process sharing the cache asked it meanwhile
            hits += 1
            continue
        if judgment.status == FAILED:
            failed[key] = judgment.raw
        calls += 1
        estimated += judge.estimate_tokens(first[key])
        reported += judgment.tokens
    seconds = time.perf_counter() - started if calls else 0.0
    failures = tuple(failed[key] for key in todo if key in failed)
    judgments = tuple(answers[key] for key in keys)
    return Outcome(judgments, calls, hits, len(first), estimated, reported, seconds, failures)


def ask_chunk(judge: Judge, folder: Path, keys: Sequence[str], pairs: Sequence[Pair]) -> list[Judgment]:
    """A task: ask ``judge`` about ``pairs`` (keyed ``keys``), committing each answer to the cache in
    ``folder`` as it arrives; the judgments in the order of ``pairs``."""
    answers: dict[int, Judgment] = {}
    with JudgmentCache(folder) as cache:
        for position, judgment in judge.stream(pairs):
            cache.record(judge.identity.key, keys[position], judgment)
            answers[position] = judgment
    return [answers[i] for i in range(len(pairs))]


def _tasks(
    judge: Judge, pairs: Sequence[Pair], keys: Sequence[str], folder: Path, scheduler: Any
) -> Iterator[tuple[int, Judgment]]:
    """(position, judgment) of every pair, asked by tasks of about equal size, four per worker, as each task ends."""
    from rankscope.core.scheduler import using, worker_count

    if not pairs:
        return
    with using(scheduler) as client:
        from distributed import as_completed

        count = min(len(pairs), 4 * worker_count(client))
        bounds = [len(pairs) * i // count for i in range(count + 1)]
        futures = {
            client.submit(ask_chunk, judge, folder, keys[a:b], pairs[a:b], pure=False): a
            for a, b in zip(bounds, bounds[1:])
        }
        for future in as_completed(futures):
            start = futures[future]
            for offset, judgment in enumerate(future.result()):
                yield start + offset, judgment
