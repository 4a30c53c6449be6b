"""Fuzz: the rest found by issue 50 item 9, each class now one line naming what and where, or a warning.

Framework retrievers (LangChain, LlamaIndex, Haystack, real objects) that answer None, a string, a dict, a
number, a list of non-results, or raise (a long message, terminal escapes, no message), asked one query
after another and several at once: before, tracebacks, or the framework's exception naming neither the
system nor the query.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from harness import check, run_call  # tests/fuzz/harness.py

sys.path.insert(0, str(Path(__file__).parents[1] / "workflows"))
import frameworks_cisi as built  # noqa: E402
from tiny_collection import small_dataset  # noqa: E402

import rankscope as rs  # noqa: E402
from rankscope.workflows.common.frameworks import adapt  # noqa: E402

FRAMEWORK_ANSWERS: dict[str, Any] = {
    "None": None,
    "empty string": "",
    "a string": "d01 d02",
    "bytes": b"d01",
    "a dict": {"d01": 1.0},
    "a number": 5,
    "a list of None": [None],
    "a list of numbers": [1, 2],
    "a long message": RuntimeError("x" * 20_000),
    "terminal escapes": RuntimeError("\x1b]0;pwned\x07\x1b[2Jdown\r\x08"),
    "no message": TimeoutError(),
}


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("framework", ["langchain", "llamaindex", "haystack"])
@pytest.mark.parametrize("answer", list(FRAMEWORK_ANSWERS))
def test_framework_retriever_answering_no_results(answer: str, framework: str, concurrency: int) -> None:
    pytest.importorskip({"langchain": "langchain_core", "llamaindex": "llama_index.core"}.get(framework, framework))
    retriever = adapt(built.misbehaving(framework, FRAMEWORK_ANSWERS[answer]), concurrency=concurrency)
    data = small_dataset()
    outcome = run_call(lambda: rs.compare(data, {"bm25": "bm25", "mine": retriever}, ["ndcg@10"]))
    if (answer, framework) == ("empty string", "llamaindex"):  # LlamaIndex's retrieve makes "" an empty list
        check(outcome, "error", "error: run 'mine' on 'small': the run is empty")
    else:
        check(outcome, "error", "error: system 'mine': query 'q0': ")
    assert len(outcome.err) < 600 and "\x1b" not in outcome.err
