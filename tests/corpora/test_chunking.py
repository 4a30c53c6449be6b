"""Chunking: windows, sentence and paragraph packing, offsets, ids and token counters, by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from rankscope.corpora.chunking import (
    ChunkingError,
    PatternCounter,
    chunk_corpus,
    chunk_corpus_many,
    chunk_id,
    chunks_as_corpus,
    parse_chunk_id,
    parse_chunking,
    token_counter,
    windows,
)

TEXT = "One two three. Four five six seven! Eight nine.\n\nTen eleven twelve thirteen fourteen."
CORPUS = pd.DataFrame({"doc_id": ["a", "b#1", "empty"], "title": ["T", "", "E"], "text": [TEXT, "x y z", "  "]})


def texts(spec: str, counter=None) -> list[str]:
    chunks = chunk_corpus(CORPUS, spec) if counter is None else chunk_corpus(CORPUS, spec, counter)
    return list(chunks.loc[chunks["doc_id"] == "a", "text"])


def test_windows_by_hand():
    assert windows(7, 3, 1) == [(0, 3), (2, 5), (4, 7)]
    assert windows(8, 3, 1) == [(0, 3), (2, 5), (4, 7), (6, 8)]
    assert windows(3, 5) == [(0, 3)]
    assert windows(6, 3) == [(0, 3), (3, 6)]  # no empty or contained tail window


def test_word_windows_with_overlap():
    assert texts("words:3:1") == [
        "One two three.",
        "three. Four five",
        "five six seven!",
        "seven! Eight nine.",
        "nine.\n\nTen eleven",
        "eleven twelve thirteen",
        "thirteen fourteen.",
    ]


def test_sentences_are_packed_and_long_ones_cut():
    assert texts("sentences:5") == [
        "One two three.",
        "Four five six seven!",
        "Eight nine.",
        "Ten eleven twelve thirteen fourteen.",
    ]
    # sentence packing ignores paragraph breaks: "Eight nine." (2) + the last sentence (5) fit in 7
    assert texts("sentences:7") == ["One two three. Four five six seven!", TEXT[36:]]
    # a 4-token sentence over a 3-token limit becomes windows of its own
    assert texts("sentences:3")[1:3] == ["Four five six", "seven!"]


def test_paragraphs_pack_then_fall_back_to_sentences():
    assert texts("paragraphs:20") == [TEXT]
    assert texts("paragraphs:8") == ["One two three. Four five six seven!", "Eight nine.", TEXT[49:]]


def test_offsets_ids_and_parent_columns():
    chunks = chunk_corpus(CORPUS, "words:2:1")
    for row in chunks.itertuples(index=False):
        parent = CORPUS.set_index("doc_id").loc[row.doc_id]
        assert parent["text"][row.start : row.end] == row.text
        assert row.title == parent["title"]
        assert parse_chunk_id(row.chunk_id) == (row.doc_id, row.position)
    assert list(chunks.loc[chunks["doc_id"] == "b#1", "chunk_id"]) == ["b#1#0", "b#1#1"]
    assert "empty" not in set(chunks["doc_id"])  # no token, no chunk
    assert chunks["chunk_id"].is_unique
    whole = chunk_corpus(CORPUS, "whole")
    assert list(whole["tokens"]) == [14, 3]
    corpus = chunks_as_corpus(whole)
    assert list(corpus.columns) == ["doc_id", "title", "text"] and list(corpus["doc_id"]) == ["a#0", "b#1#0"]


def test_chunk_ids_are_collision_proof():
    # a doc id ending in '#<digits>' cannot produce another document's chunk id
    ids = {chunk_id(d, p) for d in ["a", "a#1", "a#1#0", "a#"] for p in range(12)}
    assert len(ids) == 4 * 12
    assert parse_chunk_id("a#1#0") == ("a#1", 0)
    assert parse_chunk_id("a##3") == ("a#", 3)
    for bad in ["a", "a#", "a#01", "a#x", "a#٣"]:
        with pytest.raises(ChunkingError, match="not a chunk id"):
            parse_chunk_id(bad)


def test_specs():
    assert parse_chunking("words:200:50").spec == "words:200:50"
    assert parse_chunking("words:200").overlap == 0
    assert parse_chunking("sentences:300").size == 300
    for bad, message in [
        ("words:100:100", "overlap"),
        ("words:0", "at least 1"),
        ("lines:3", "unknown chunking"),
        ("sentences:3:1", "expected"),
        ("whole:3", "expected"),
        ("words:-1", "expected"),
    ]:
        with pytest.raises(ChunkingError, match=message):
            parse_chunking(bad)


def test_analyzer_pattern_counts_differently():
    counter = token_counter("analyzer", r"\w\w+")  # the default analyzer's pattern: "x" is no token
    assert counter.name.startswith("analyzer tokens")
    chunks = chunk_corpus(CORPUS, "whole", counter)
    assert list(chunks["doc_id"]) == ["a"]
    assert chunk_corpus(CORPUS, "whole", PatternCounter(r"\w+", "w"))["tokens"].tolist() == [14, 3]
    assert token_counter(None).name == "whitespace words"


def test_hugging_face_tokenizer_file(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {w: i for i, w in enumerate(["[UNK]", "one", "two", "three", ".", "four", "five"])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()  # words and punctuation apart
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    counter = token_counter(str(path))
    assert counter.name == f"tokens of {path}"
    # "three." is two tokens here: 18 tokens in all (14 words + 4 split-off punctuation marks)
    chunks = chunk_corpus(CORPUS.iloc[:1], "words:4", counter)
    assert chunks["tokens"].sum() == 18
    assert list(chunks["text"])[:2] == ["One two three.", "Four five six seven"]
    with pytest.raises(ChunkingError, match="not a Hugging Face tokenizer.json"):
        (tmp_path / "bad.json").write_text("{}")
        token_counter(str(tmp_path / "bad.json"))


def test_several_chunkings_count_each_documents_tokens_once():
    calls = []

    class Counting(PatternCounter):
        def spans(self, text: str) -> list[tuple[int, int]]:
            calls.append(text)
            return super().spans(text)

    specs = ["whole", "words:2:1", "sentences:6", "paragraphs:9"]
    tables = chunk_corpus_many(CORPUS, specs, Counting())
    assert len(calls) == len(CORPUS)  # once per document, not once per chunking
    for spec, table in zip(specs, tables):
        pd.testing.assert_frame_equal(table, chunk_corpus(CORPUS, spec))
    assert [len(t) for t in tables] == [2, 15, 4, 3]  # words:2:1: 13 windows of 14 tokens, 2 of 3
