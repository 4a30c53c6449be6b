"""EvaluationOptions (evaluation/options.py): the object and the keywords are the same settings, keywords
given beside an object override its fields, and every entry point takes both."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rankscope.core.errors import ParameterError
from rankscope.corpora.trec import write_trec_run
from rankscope.evaluation.engine import evaluate
from rankscope.evaluation.options import EvaluationOptions
from rankscope.evaluation.streaming import evaluate_run_file

QRELS = pd.DataFrame({"query_id": ["1", "1", "2", "3"], "doc_id": ["a", "b", "c", "d"], "relevance": [2, 1, 1, 0]})
RUN = pd.DataFrame({"query_id": ["1", "1", "2", "2"], "doc_id": ["b", "a", "1", "c"], "score": [2.0, 1.0, 3.0, 2.5]})


def test_the_object_and_the_keywords_give_the_same_numbers() -> None:
    for settings in ({"relevance_level": 2}, {"judged_only": True}, {"exclude_unjudged": True}):
        by_keyword = evaluate(QRELS, RUN, ["map", "mrr"], **settings).mean
        assert evaluate(QRELS, RUN, ["map", "mrr"], options=EvaluationOptions(**settings)).mean == by_keyword
    # level 2: query 1's only relevant document is at rank 2; queries 2 and 3 have none
    assert evaluate(QRELS, RUN, "mrr", relevance_level=2).mean == {"mrr": pytest.approx(0.5 / 3)}


def test_a_keyword_beside_the_object_overrides_its_field() -> None:
    options = EvaluationOptions(relevance_level=2, judged_only=True)
    assert (
        evaluate(QRELS, RUN, "mrr", options=options, relevance_level=1).mean
        == evaluate(QRELS, RUN, "mrr", judged_only=True).mean
    )
    assert options.relevance_level == 2  # never modified


def test_unknown_keywords_and_bad_values_are_refused_naming_the_function() -> None:
    with pytest.raises(TypeError, match=r"evaluate\(\) got unexpected keyword argument\(s\) \['relevance'\]"):
        evaluate(QRELS, RUN, "mrr", relevance=2)  # type: ignore[call-arg]
    with pytest.raises(ParameterError, match="evaluate_run_file: relevance_level=0 is not allowed"):
        evaluate_run_file(QRELS, "run.trec", relevance_level=0)
    with pytest.raises(ParameterError, match="EvaluationOptions: relevance_level=True is not allowed"):
        EvaluationOptions(relevance_level=True)
    with pytest.raises(TypeError, match="options must be an EvaluationOptions, got dict"):
        evaluate(QRELS, RUN, "mrr", options={"relevance_level": 2})  # type: ignore[arg-type]


def test_the_streamed_entry_point_takes_the_object(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    write_trec_run(RUN, path)
    options = EvaluationOptions(relevance_level=2, exclude_unjudged=True)
    streamed = evaluate_run_file(QRELS, path, ["map", "ndcg@10"], options=options)
    whole = evaluate(QRELS, RUN, ["map", "ndcg@10"], options=options)
    assert streamed.mean == pytest.approx(whole.mean) and streamed.n_queries == whole.n_queries == 1
