"""A diagnosis's loss and recall-failure summaries are made once (the terminal, summary.json and the report
each show them): each call gives the summary of its tables, and a caller changing what it got changes
nothing the next caller gets."""

from __future__ import annotations

import pandas as pd

from rankscope.workflows.common.systems import named_systems, produce_run
from rankscope.workflows.diagnose import workflow
from rankscope.workflows.diagnose.misses import loss_summary
from rankscope.workflows.diagnose.recall_failures import failure_summary
from tests.workflows.tiny_collection import small_dataset


def test_summaries_are_their_tables_summed_and_each_caller_gets_its_own(monkeypatch) -> None:
    monkeypatch.setenv("RANKSCOPE_FORK", "0")
    data = small_dataset()
    systems = [produce_run(s, data, 10) for s in named_systems([("bm25", "bm25"), ("tfidf", "tfidf")]).values()]
    for d in workflow.diagnose_runs(data, systems, 10).diagnoses:
        assert len(d.failures) and len(d.losses)
        for made, expected in (
            (d.loss_summary, loss_summary(d.losses)),
            (d.failure_summary, failure_summary(d.failures)),
        ):
            first = made()
            pd.testing.assert_frame_equal(first, expected)
            first.iloc[:, :] = -1  # the caller's own copy
            pd.testing.assert_frame_equal(made(), expected)
