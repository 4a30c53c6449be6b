"""A judge that answers from a qrels file, with a controlled share of its labels flipped.

For studies and tests where the truth is known: ``qrels:cisi.qrels,flip=0.2,seed=7`` (or ``qrels:flip=0.2``
in ``rankscope judge``: the dataset's own judgments) gives each
pair the file's grade (clamped to 0-3; a pair the file does not hold is 0, TREC's reading of an
unjudged document), and flips it for a share ``flip`` of the pairs: a relevant grade becomes 0,
a 0 becomes 1. Which pairs flip is decided by a hash of the seed and the two ids, not by the
order of calls, so a run that is interrupted, cached or batched differently flips the same pairs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from rankscope.judging.base import OK, Judge, JudgeError, JudgeIdentity, Judgment, Pair

if TYPE_CHECKING:
    import pandas as pd


class QrelsJudge(Judge):
    """Labels from a TREC qrels file; ``flip`` in [0, 1] of them flipped, chosen by ``seed``."""

    reads_ids = True

    def __init__(self, qrels: pd.DataFrame, *, flip: float = 0.0, seed: int = 0) -> None:
        """A judge answering from ``qrels`` (query_id, doc_id, relevance); its identity hashes their content."""
        if not 0.0 <= flip <= 1.0:
            raise JudgeError(f"qrels judge: flip={flip} is not allowed; flip must be a float in [0, 1]")
        self.flip, self.seed = float(flip), int(seed)
        ordered = qrels.sort_values(["query_id", "doc_id"], kind="stable")
        grades = ordered["relevance"].clip(0, 3).astype(int)
        self.grades = dict(zip(zip(ordered["query_id"], ordered["doc_id"]), grades))
        text = "".join(f"{q}\t{d}\t{r}\n" for (q, d), r in self.grades.items())
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        self.identity = JudgeIdentity(
            kind="qrels", model=f"sha256:{digest}", parameters=(("flip", self.flip), ("seed", self.seed))
        )

    @classmethod
    def from_file(cls, path: str | Path, *, flip: float = 0.0, seed: int = 0) -> QrelsJudge:
        """The judge of a TREC qrels file."""
        from rankscope.corpora.trec import read_trec_qrels

        return cls(read_trec_qrels(path), flip=flip, seed=seed)

    def flipped(self, query_id: str, doc_id: str) -> bool:
        """Whether this pair's label is flipped: a uniform draw from the hash of (seed, ids) below ``flip``."""
        text = f"{self.seed}\t{query_id}\t{doc_id}".encode()
        draw = int.from_bytes(hashlib.sha256(text).digest()[:8], "big") / 2.0**64
        return draw < self.flip

    def ask(self, pair: Pair) -> Judgment:
        label = self.grades.get((pair.query_id, pair.doc_id), 0)
        if self.flipped(pair.query_id, pair.doc_id):
            label = 0 if label > 0 else 1
        return Judgment(int(label), OK, str(label))
