"""Answer matching: DPR's has_answer on its edge cases, written out from its definition
(NFD, SimpleTokenizer tokens, lowercase, contiguous sub-list), the regex mode, the looser
substring rule, and relevance from gold spans."""

from __future__ import annotations

import pandas as pd
import pytest

from rankscope.core.errors import RankscopeError  # noqa: E402
from rankscope.corpora.answers import (  # noqa: E402
    answer_qrels,
    dpr_tokens,
    has_answer,
    span_matches,
    squad_normalize,
)
from tests.needs import needs

pytestmark = needs("regex")


def test_simple_tokenizer_tokens():
    # letters/digits/marks runs, every other non-space non-control character alone
    assert dpr_tokens("the U.S. army's 2nd") == ["the", "u", ".", "s", ".", "army", "'", "s", "2nd"]
    assert dpr_tokens("a\u00a0b\u200bc") == ["a", "b", "c"]  # NBSP is \p{Z}, ZERO WIDTH SPACE is \p{Cf}


@pytest.mark.parametrize(
    ("answer", "passage", "expected"),
    [
        # Unicode: NFD makes precomposed and decomposed forms equal ...
        ("cafe\u0301", "Caf\u00e9 au lait", True),
        ("Caf\u00e9", "cafe\u0301 au lait", True),
        # ... but keeps the accent (a combining mark is part of the token) and does not fold compatibility forms
        ("Caf\u00e9", "Cafe au lait", False),
        ("finance", "\ufb01nance report", False),  # the fi ligature survives NFD (it is NFKD that splits it)
        ("na\u00efve", "a NAI\u0308VE view", True),
        # case
        ("PARIS", "paris is big", True),
        # punctuation is made of tokens of its own
        ("U.S.", "the U.S. army", True),
        ("U.S.", "the US army", False),
        ("Smith", "Smith's house", True),
        ("Smith,", "John Smith, the", True),
        ("Smith,", "John Smith the", False),
        # answers that are sub-tokens of a passage token do not match
        ("art", "a party", False),
        ("19", "in 1984", False),
        ("art", "the art of war", True),
        # contiguous, in order; whitespace kind does not matter
        ("New York", "york new", False),
        ("New York", "New\nYork", True),
        ("New York", "New\u00a0York", True),
        ("New York", "New\u200bYork", True),
        # empty answers: no tokens, a zero-length sub-list is found everywhere (DPR's behaviour)
        ("", "anything", True),
        ("   ", "anything", True),
        ("", "", True),
        ("x", "", False),
    ],
)
def test_dpr_string_match(answer, passage, expected):
    assert has_answer([answer], passage) is expected


def test_any_of_several_answers_and_none():
    assert has_answer(["Lyon", "Paris"], "Paris, France")
    assert not has_answer([], "Paris")


def test_regex_mode(monkeypatch: pytest.MonkeyPatch):
    from rankscope.corpora import answers

    assert has_answer([r"\d{4}"], "born in 1984", "regex")
    assert has_answer(["paris"], "PARIS", "regex")  # case-insensitive
    assert has_answer(["^York"], "New\nYork", "regex")  # multiline
    monkeypatch.setattr(answers, "_WARNED", set())
    with pytest.warns(UserWarning, match=r"^answer pattern '\(' does not compile"):
        assert has_answer(["(", "Yo+rk"], "New Yoork", "regex")  # the bad pattern matches nothing, the next one does
        assert not has_answer(["("], "(", "regex")
    assert has_answer(["cafe\u0301"], "Caf\u00e9", "regex")  # both sides in NFD
    assert has_answer(["art"], "party", "regex")  # a pattern is searched anywhere


def test_substring_mode_is_looser():
    assert squad_normalize("The  U.S. Army!") == "us army"
    assert has_answer(["art"], "a party", "substring")  # inside a word
    assert has_answer(["U.S."], "a bus", "substring")
    assert has_answer(["The Beatles"], "beatles!", "substring")
    assert not has_answer(["art"], "a party", "string")
    with pytest.raises(RankscopeError, match="unknown answer matching mode"):
        has_answer(["x"], "x", "exact")


def test_answer_qrels_give_dpr_top_k_accuracy():
    from rankscope.evaluation import evaluate

    pairs = pd.DataFrame(
        [("q1", "p1", "a party"), ("q1", "p2", "the art of war"), ("q2", "p1", "a party"), ("q2", "p3", "nothing")],
        columns=["query_id", "doc_id", "text"],
    )
    answers = {"q1": ["art"], "q2": ["Party"]}
    qrels = answer_qrels(pairs, answers)
    assert qrels["relevance"].tolist() == [0, 1, 1, 0]
    run = pairs.assign(score=[2.0, 1.0, 2.0, 1.0])[["query_id", "doc_id", "score"]]
    hits = evaluate(qrels, run, ["hit@1", "hit@2"]).wide()
    assert hits.loc["q1"].tolist() == [0.0, 1.0] and hits.loc["q2"].tolist() == [1.0, 1.0]
    assert answer_qrels(pairs, answers, "substring")["relevance"].tolist() == [1, 1, 1, 0]


def test_span_matches_with_thresholds():
    chunks = pd.DataFrame(
        [("d#0", "d", 0, 10), ("d#1", "d", 8, 20), ("e#0", "e", 0, 5)], columns=["chunk_id", "doc_id", "start", "end"]
    )
    spans = pd.DataFrame([("q", "d", 6, 10)], columns=["query_id", "doc_id", "start", "end"])
    # span 6-10: d#0 holds all 4 characters, d#1 holds 8-10 (half); e#0 is another document
    anyhow = span_matches(spans, chunks)
    assert anyhow[["doc_id", "coverage"]].values.tolist() == [["d#0", 1.0], ["d#1", 0.5]]
    assert anyhow["span"].unique().tolist() == ["d:6-10"]
    assert span_matches(spans, chunks, 0.6)["doc_id"].tolist() == ["d#0"]
    touching = pd.DataFrame([("q", "d", 10, 12)], columns=["query_id", "doc_id", "start", "end"])
    assert span_matches(touching, chunks)["doc_id"].tolist() == ["d#1"]  # d#0 ends at 10: no shared character
    with pytest.raises(RankscopeError, match="empty or reversed"):
        span_matches(pd.DataFrame([("q", "d", 5, 5)], columns=["query_id", "doc_id", "start", "end"]), chunks)


def test_a_pattern_that_does_not_compile_is_warned_once_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """It still matches nothing (DPR's numbers), but no longer silently; each rag system compiles the
    questions' patterns again, so the warning is once per pattern, not once per compiling."""
    from rankscope.corpora import answers

    monkeypatch.setattr(answers, "_WARNED", set())
    with pytest.warns(UserWarning) as caught:
        assert not has_answer(["(wing"], "wing flow", "regex")
        assert has_answer(["(wing", "w.ng"], "wing flow", "regex")  # the others still count
        assert not has_answer(["(?a)flow"], "wing flow", "regex")
        assert not has_answer(["(wing", "(?a)flow"], "wing flow", "regex")
    assert [str(w.message) for w in caught] == [
        "answer pattern '(wing' does not compile (missing ) at position 5): it matches no passage, as in DPR's "
        "regex mode",
        "answer pattern '(?a)flow' does not compile (ASCII, LOCALE and UNICODE flags are mutually incompatible): "
        "it matches no passage, as in DPR's regex mode",
    ]
