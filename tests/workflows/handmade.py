"""Test helpers (not a test module): a five-document collection and two fixed "retrievers" whose runs
are below, so compare and diagnose can be checked against numbers worked out by hand.

qrels: q1 -> d1; q2 -> d3 (grade 2), d4; q3 -> d5; q4 -> d5.

A: q1 d2 .9, d1 .8           first relevant at 2
   q2 d3 .9                  first relevant at 1
   q3 d1 .5                  nothing relevant: recall miss
   q4 d1 .9 d2 .8 d3 .7 d5 .6 first relevant at 4
B: q1 d1 .9 -> 1; q2 d1 .9 d2 .8 d4 .7 -> 3; q3 d5 .9 -> 1; q4 d5 .9 -> 1
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rankscope.corpora.dataset import Dataset
from rankscope.retrieval.base import Retriever, make_run
from rankscope.retrieval.params import Param

RUNS = {
    "A": {
        "q1": {"d2": 0.9, "d1": 0.8},
        "q2": {"d3": 0.9},
        "q3": {"d1": 0.5},
        "q4": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d5": 0.6},
    },
    "B": {"q1": {"d1": 0.9}, "q2": {"d1": 0.9, "d2": 0.8, "d4": 0.7}, "q3": {"d5": 0.9}, "q4": {"d5": 0.9}},
}
DATA = Dataset.from_dicts(
    "tiny",
    {f"d{i}": f"document {i}" for i in range(1, 6)},
    {"q1": "one", "q2": "two", "q3": "three", "q4": "four"},
    {"q1": {"d1": 1}, "q2": {"d3": 2, "d4": 1}, "q3": {"d5": 1}, "q4": {"d5": 1}},
)


class Fixed(Retriever):
    """Returns a fixed table of scores; documents it does not list score 0."""

    name = "fixed"
    parameters = (Param("system", str, "A", "which of the fixed runs", choices=tuple(RUNS)),)

    def index(self, corpus: pd.DataFrame) -> Fixed:
        self.texts_ = {}
        return self

    def search(self, queries: pd.DataFrame, k: int = 1000) -> pd.DataFrame:
        table = RUNS[self.system]
        qids = list(queries["query_id"])
        run = make_run(
            qids, [np.array(list(table[q])) for q in qids], [np.array(list(table[q].values())) for q in qids]
        )
        return run[run["rank"] <= k].reset_index(drop=True)

    def score(self, query: str, doc_ids) -> np.ndarray:
        qid = dict(zip(DATA.queries["text"], DATA.queries["query_id"]))[query]
        return np.array([RUNS[self.system][qid].get(d, 0.0) for d in doc_ids])
