"""The analyzer: each step checked against what its definition says it does."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rankscope.retrieval.analysis import (
    Analyzer,
    get_analyzer,
    register_stopwords,
    register_tokenizer,
    restore_analyzer,
    saved_analyzer_param,
    stopword_list,
)


def test_default_pipeline_normalises_lowercases_drops_stopwords_and_stems() -> None:
    # NFKC turns the full-width letters into ASCII; "the"/"of" are sklearn stopwords;
    # Snowball English stems "flows" -> "flow", "boundaries" -> "boundari".
    assert Analyzer().tokenize("The ＦＬＯＷＳ of Boundaries") == ["flow", "boundari"]


def test_english_stopwords_are_sklearns_list_read_without_importing_sklearn() -> None:
    # the list is read from sklearn's _stop_words.py alone: the same 318 words, and the sklearn
    # package (seconds of scipy.stats imports) is not imported for it
    code = (
        "import sys; from rankscope.retrieval.analysis import stopword_list; "
        "words = stopword_list('english'); print(len(words), 'sklearn' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert shown == ["318", "False"]
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    assert stopword_list("english") == ENGLISH_STOP_WORDS


def test_steps_can_be_switched_off() -> None:
    plain = Analyzer(normalization=None, lowercase=False, stopwords=None, stemmer=None)
    assert plain.tokenize("The ＦＬＯＷＳ of") == ["The", "ＦＬＯＷＳ", "of"]


def test_token_pattern_is_used() -> None:
    assert Analyzer(token_pattern=r"[a-z]{3,}", stopwords=None, stemmer=None).tokenize("a bc def 12 ghij") == [
        "def",
        "ghij",
    ]


def test_tokenize_many_equals_tokenize_one_by_one() -> None:
    texts = ["Flowing flows flowed", "", "the of and", "Boundary layers, boundary flows."]
    analyzer = Analyzer()
    assert analyzer.tokenize_many(texts) == [analyzer.tokenize(t) for t in texts]
    assert analyzer.tokenize_many(texts)[0] == ["flow", "flow", "flow"]


def test_tokenize_many_refuses_a_single_string() -> None:
    with pytest.raises(TypeError, match="tokenize\\(\\)"):
        Analyzer().tokenize_many("one text")


def test_config_round_trip_through_json() -> None:
    analyzer = Analyzer(stemmer="porter", stopwords=None, token_pattern=r"\w\w+")
    again = Analyzer.from_config(json.loads(json.dumps(analyzer.to_config())))
    assert again == analyzer
    assert again.tokenize("Flows in a pipe") == analyzer.tokenize("Flows in a pipe") == ["flow", "in", "pipe"]


def test_config_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown analyzer setting.*'colour'"):
        Analyzer.from_config({"colour": "red"})
    with pytest.raises(ValueError, match="newer"):
        Analyzer.from_config({"config_version": 99})
    with pytest.raises(ValueError, match="unknown stemmer 'klingon'"):
        Analyzer(stemmer="klingon")
    with pytest.raises(ValueError, match="unknown stopword list 'nope'"):
        Analyzer(stopwords="nope")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        Analyzer(token_pattern="(")
    with pytest.raises(ValueError, match="unknown analyzer preset 'nope'.*english"):
        get_analyzer("nope")


def test_other_languages_plug_in_by_name() -> None:
    register_stopwords("test-french", ["le", "la", "les"])
    register_tokenizer("test-whitespace", str.split)
    analyzer = Analyzer(tokenizer="test-whitespace", stopwords="test-french", stemmer="french")
    # whitespace keeps "l'eau" one token; French Snowball strips the elision and the plural.
    assert analyzer.tokenize("Les maisons l'eau") == ["maison", "eau"]
    assert Analyzer.from_config(analyzer.to_config()) == analyzer


@pytest.mark.slow
def test_jieba_segments_chinese_words() -> None:
    pytest.importorskip("jieba")
    # \w+ keeps a run of Chinese characters as one token; jieba splits it into words.
    assert Analyzer().tokenize("我爱北京天安门") == ["我爱北京天安门"]
    assert Analyzer(tokenizer="jieba", stopwords=None).tokenize("我爱北京天安门！") == ["我", "爱", "北京", "天安门"]
    assert get_analyzer("chinese").tokenize("我爱北京天安门！") == ["爱", "北京", "天安门"]  # 我 (I): a stopword


def test_restore_analyzer_keeps_the_preset_name_only_if_it_still_matches() -> None:
    english = get_analyzer("english").to_config()
    assert restore_analyzer(saved_analyzer_param("english"), english) == ("english", Analyzer())
    porter = Analyzer(stemmer="porter")
    param, analyzer = restore_analyzer(saved_analyzer_param(porter), porter.to_config())
    assert param == analyzer == porter
    param, _ = restore_analyzer("english", porter.to_config())  # the preset means something else now
    assert param == porter


def test_missing_jieba_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jieba", None)  # makes `import jieba` fail
    with pytest.raises(ImportError, match=r'pip install "rankscope\[zh\]"'):
        get_analyzer("chinese").tokenize("中文")


def _split_reference(analyzer: Analyzer, texts: list[str]) -> tuple[list[int], list[int], list[str]]:
    """What word_codes must give, from split (the regex) and pandas.factorize's first-appearance order."""
    import pandas as pd

    split = [analyzer.split(text) for text in texts]
    codes, distinct = pd.factorize(pd.Series([tok for toks in split for tok in toks], dtype=object))
    return codes.tolist(), [len(toks) for toks in split], list(distinct)


def _random_texts(seed: int, alphabet: str, n: int = 300) -> list[str]:
    import random

    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(n)]


# ASCII word characters next to everything else ASCII has: punctuation, every whitespace, controls, NUL, DEL
_ASCII_MIX = "aAbBzZ09_" * 4 + " \t\n\r\x0b\x0c\x00\x1f\x7f.,;:'\"-/\\@#$%^&*()[]{}<>?!~`|+="


@pytest.mark.parametrize("seed", range(5))
def test_word_codes_equal_the_regex_split_on_ascii_text(seed: int) -> None:
    # the compiled tokenizer must find exactly the tokens of \w\w+ after lowercasing, in order
    texts = _random_texts(seed, _ASCII_MIX)
    analyzer = Analyzer()
    codes, counts, distinct = analyzer.word_codes(texts)
    assert (codes.tolist(), counts.tolist(), distinct) == _split_reference(analyzer, texts)
    assert "ab" in distinct and "AB" not in distinct  # lowercased (each seed's 300 texts hold both)


def test_word_codes_keep_case_without_lowercasing() -> None:
    texts = _random_texts(7, _ASCII_MIX)
    analyzer = Analyzer(lowercase=False)
    codes, counts, distinct = analyzer.word_codes(texts)
    assert (codes.tolist(), counts.tolist(), distinct) == _split_reference(analyzer, texts)
    assert any(word != word.lower() for word in distinct)


@pytest.mark.parametrize("seed", range(3))
def test_word_codes_mix_ascii_and_unicode_texts_into_one_code_per_word(seed: int) -> None:
    # non-ASCII texts go through split (NFKC, Unicode \w, lowercasing that can change lengths: İ);
    # a word gets one code whichever path found it ("ab" in an ASCII text and in an accented one)
    alphabet = _ASCII_MIX + "éÉßİﬁＡＢ٣中文\u00a0\u2003\u0301"
    texts = _random_texts(seed, alphabet) + ["ab cafe", "ab café", "ＡＢ"]
    analyzer = Analyzer()
    codes, counts, distinct = analyzer.word_codes(texts)
    assert (codes.tolist(), counts.tolist(), distinct) == _split_reference(analyzer, texts)
    assert distinct.count("ab") == 1


def test_word_codes_follow_any_other_pattern_or_tokenizer() -> None:
    texts = _random_texts(11, _ASCII_MIX + "é中")
    for analyzer in (Analyzer(token_pattern=r"\w+"), Analyzer(token_pattern=r"[a-z]{3}")):
        codes, counts, distinct = analyzer.word_codes(texts)
        assert (codes.tolist(), counts.tolist(), distinct) == _split_reference(analyzer, texts)
    assert Analyzer(token_pattern=r"\w+").word_codes(["a b"])[2] == ["a", "b"]  # one-letter words kept
    empty = Analyzer().word_codes([])
    assert (len(empty[0]), len(empty[1]), empty[2]) == (0, 0, [])


def test_term_codes_give_one_code_per_stem_and_minus_one_for_stopwords() -> None:
    # "flows" and "flow" stem to one term; "the" is a stopword; terms in order of first appearance
    term_of, terms = Analyzer().term_codes(["flows", "the", "boundaries", "flow"])
    assert (term_of.tolist(), terms) == ([0, -1, 1, 0], ["flow", "boundari"])
    assert Analyzer().term_map(["flows", "the"]) == {"flows": "flow", "the": None}


def test_a_registered_preset_is_usable_in_a_spec_and_a_bad_one_is_refused_before_registering(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pandas as pd

    from rankscope.retrieval import analysis
    from rankscope.retrieval.registry import make_retriever

    monkeypatch.setattr(analysis, "PRESETS", dict(analysis.PRESETS))  # the registration stays in this test
    corpus = pd.DataFrame({"doc_id": ["d1", "d2"], "title": ["", ""], "text": ["the running cats", "a dog"]})
    queries = pd.DataFrame({"query_id": ["q1"], "text": ["the"]})
    with pytest.raises(ValueError, match="analyzer=keep-all is not allowed"):
        make_retriever("bm25:analyzer=keep-all")
    analysis.register_preset("keep-all", stopwords=None, stemmer=None, normalization=None)
    found = make_retriever("bm25:analyzer=keep-all").index(corpus).search(queries, k=10)
    assert found["doc_id"].tolist() == ["d1"]  # "the" is kept: the default english preset drops it
    assert make_retriever("bm25").index(corpus).search(queries, k=10).empty
    with pytest.raises(ValueError, match="unknown stemmer 'klingon'"):
        analysis.register_preset("broken", stemmer="klingon")
    assert "broken" not in analysis.PRESETS
