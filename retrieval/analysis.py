"""Text analysis shared by every retriever, recorded in every saved index.

An :class:`Analyzer` turns text into index terms in five steps:

1. Unicode normalisation (NFKC by default: full-width letters and ligatures
   become their plain forms, so ``ｆｉｌｅ`` matches ``file``);
2. lowercasing;
3. tokenisation: a regular expression (default ``\\w\\w+``, words of 2+ characters,
   scikit-learn's default pattern) or a named tokenizer
   (``jieba`` for Chinese, or one registered with :func:`register_tokenizer`);
4. stopword removal with a named list (``english`` is scikit-learn's
   ``ENGLISH_STOP_WORDS``, 318 words; add lists with :func:`register_stopwords`);
5. Snowball stemming with PyStemmer (any of ``Stemmer.algorithms()``).

Everything is named, never a function object, so that :meth:`Analyzer.to_config`
is plain JSON and a saved index can rebuild exactly the analyzer that built it.

The default (``english`` preset: NFKC, lowercase, ``\\w\\w+``, scikit-learn English
stopwords, Snowball English stemmer) scored best, with BM25, of the combinations
measured on Cranfield and CISI (``benchmarks/bench_bm25.py quality``; table in
``docs/retrievers.md``).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import Stemmer

from rankscope.core.extras import require_extra
from rankscope.retrieval.params import Param

Normalization = Literal["NFC", "NFKC", "NFD", "NFKD"]
"""The Unicode normal forms an analyzer may apply (``unicodedata.normalize``)."""

CONFIG_VERSION = 1
"""Bumped when the meaning of a configuration key changes."""

Tokenizer = Callable[[str], list[str]]

_STOPWORD_LISTS: dict[str, frozenset[str] | Callable[[], frozenset[str]]] = {}
_TOKENIZERS: dict[str, Tokenizer] = {}


def _sklearn_english() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS``, read from the module that defines it.

    scikit-learn is a core dependency, but importing it (``sklearn/__init__`` pulls in
    scipy.stats) costs seconds, more than indexing CISI; its stopword module imports
    nothing, so it is run alone. tests/retrieval/test_analysis.py checks the list equals
    ``sklearn.feature_extraction.text.ENGLISH_STOP_WORDS``.
    """
    import importlib.util

    package = importlib.util.find_spec("sklearn")
    if package is None or not package.submodule_search_locations:
        raise ImportError("the english stopword list is scikit-learn's: pip install scikit-learn")
    path = Path(next(iter(package.submodule_search_locations))) / "feature_extraction" / "_stop_words.py"
    spec = importlib.util.spec_from_file_location("_rankscope_sklearn_stop_words", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: scikit-learn's english stopword list cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.ENGLISH_STOP_WORDS)


_STOPWORD_LISTS["english"] = _sklearn_english


def _iso_chinese() -> frozenset[str]:
    # stopwords-iso's Chinese list (794 words and punctuation), maintained upstream; the `zh` extra
    stopwordsiso = require_extra("stopwordsiso", "zh", "the Chinese stopword list")
    return frozenset(stopwordsiso.stopwords("zh"))


_STOPWORD_LISTS["chinese"] = _iso_chinese


def register_stopwords(name: str, words: Iterable[str]) -> None:
    """Make a stopword list available to analyzers under ``name`` (e.g. another language)."""
    _STOPWORD_LISTS[name] = frozenset(words)


def stopword_list(name: str) -> frozenset[str]:
    """The stopwords registered under ``name``; unknown names list the known ones."""
    if name not in _STOPWORD_LISTS:
        raise ValueError(f"unknown stopword list {name!r}; known: {sorted(_STOPWORD_LISTS)}")
    words = _STOPWORD_LISTS[name]
    if callable(words):
        words = words()
        _STOPWORD_LISTS[name] = words
    return words


def register_tokenizer(name: str, tokenizer: Tokenizer) -> None:
    """Make a tokenizer (text -> tokens, applied after normalisation and lowercasing) available by name."""
    if name == "regex":
        raise ValueError("'regex' is the built-in pattern tokenizer and cannot be replaced")
    _TOKENIZERS[name] = tokenizer


_WORD = re.compile(r"\w", re.UNICODE)
DEFAULT_PATTERN = r"\w\w+"
"""scikit-learn's token pattern: words of 2 or more word characters."""


def _jieba_tokenize(text: str) -> list[str]:
    """Chinese word segmentation (jieba's precise mode); punctuation and spaces dropped."""
    jieba = require_extra("jieba", "zh", "the Chinese tokenizer")
    jieba.setLogLevel(60)  # jieba prints its dictionary loading to stderr otherwise
    return [tok for tok in jieba.lcut(text) if _WORD.search(tok)]


_TOKENIZERS["jieba"] = _jieba_tokenize


class Analyzer:
    """Normalise, lowercase, tokenise, drop stopwords and stem.

    ``stopwords`` and ``stemmer`` may be ``None`` to switch the step off.
    ``tokenizer`` is ``"regex"`` (uses ``token_pattern``) or a registered name.
    """

    def __init__(
        self,
        *,
        normalization: Normalization | None = "NFKC",
        lowercase: bool = True,
        tokenizer: str = "regex",
        token_pattern: str = DEFAULT_PATTERN,
        stopwords: str | None = "english",
        stemmer: str | None = "english",
    ) -> None:
        if normalization not in (None, "NFC", "NFKC", "NFD", "NFKD"):
            raise ValueError(f"normalization must be None, 'NFC', 'NFKC', 'NFD' or 'NFKD', got {normalization!r}")
        if tokenizer != "regex" and tokenizer not in _TOKENIZERS:
            raise ValueError(f"unknown tokenizer {tokenizer!r}; known: {sorted(['regex', *_TOKENIZERS])}")
        if stemmer is not None and stemmer not in Stemmer.algorithms():
            raise ValueError(f"unknown stemmer {stemmer!r}; known: {Stemmer.algorithms()}")
        try:
            self._pattern = re.compile(token_pattern)
        except re.error as exc:
            raise ValueError(f"token_pattern {token_pattern!r} is not a valid regular expression: {exc}") from None
        self.normalization = normalization
        self.lowercase = lowercase
        self.tokenizer = tokenizer
        self.token_pattern = token_pattern
        self.stopwords = stopwords
        self.stemmer = stemmer
        self._stop = stopword_list(stopwords) if stopwords is not None else frozenset()
        # no PyStemmer cache (size 0): term_codes stems each distinct token once anyway, and the cache's
        # upkeep made stemming 7x slower on large vocabularies (400,000 words: 1.14 s vs 0.17 s CPU)
        self._stemmer = Stemmer.Stemmer(stemmer, 0) if stemmer is not None else None
        # the compiled tokenizer of word_codes equals split's regex for this pattern on ASCII text
        self._compiled_ascii = tokenizer == "regex" and token_pattern == DEFAULT_PATTERN

    # --- configuration -----------------------------------------------------------
    def to_config(self) -> dict[str, Any]:
        """Plain-JSON description, stored in saved indexes."""
        return {
            "config_version": CONFIG_VERSION,
            "normalization": self.normalization,
            "lowercase": self.lowercase,
            "tokenizer": self.tokenizer,
            "token_pattern": self.token_pattern,
            "stopwords": self.stopwords,
            "stemmer": self.stemmer,
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Analyzer:
        """Rebuild from :meth:`to_config` output; unknown keys or a newer version are errors."""
        cfg = dict(config)
        version = cfg.pop("config_version", CONFIG_VERSION)
        if not isinstance(version, int) or version > CONFIG_VERSION:
            raise ValueError(
                f"analyzer config_version {version!r} is newer than this rankscope supports ({CONFIG_VERSION})"
            )
        known = set(cls().to_config()) - {"config_version"}
        unknown = sorted(set(cfg) - known)
        if unknown:
            raise ValueError(f"unknown analyzer setting(s) {unknown}; known: {sorted(known)}")
        return cls(**cfg)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Analyzer) and self.to_config() == other.to_config()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_config().items())))

    def __repr__(self) -> str:
        cfg = self.to_config()
        del cfg["config_version"]
        return f"Analyzer({', '.join(f'{k}={v!r}' for k, v in cfg.items())})"

    # --- analysis ----------------------------------------------------------------
    def split(self, text: str) -> list[str]:
        """Normalised, lowercased tokens before stopword removal and stemming."""
        if self.normalization is not None and not text.isascii():
            text = unicodedata.normalize(self.normalization, text)
        if self.lowercase:
            text = text.lower()
        if self.tokenizer == "regex":
            return self._pattern.findall(text)
        return _TOKENIZERS[self.tokenizer](text)

    def word_codes(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The tokens of :meth:`split` over ``texts`` as codes: (int32 index of each token in ``distinct``,
        all texts' tokens in order; int64 tokens per text; ``distinct``, the distinct tokens in order of
        first appearance).

        Indexing's hot loop: with the default pattern, ASCII texts are tokenised in C (``_word_codes.c``,
        tested token for token against :meth:`split`), so no Python object is made per token; other
        texts are split here and only coded in C.
        """
        from rankscope.retrieval import _word_codes

        if self._compiled_ascii:
            items = [text if text.isascii() else self.split(text) for text in texts]
        else:
            items = [self.split(text) for text in texts]
        codes, counts, distinct = _word_codes.code_words(items, self.lowercase)
        return np.frombuffer(codes, dtype=np.int32), np.frombuffer(counts, dtype=np.int64), distinct

    def tokenize(self, text: str) -> list[str]:
        """Index terms of one text, in order (duplicates kept: they are term frequencies)."""
        return self.tokenize_many([text])[0]

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        """Index terms of many texts; each distinct word is stemmed once, whatever the corpus size."""
        if isinstance(texts, str):
            raise TypeError("tokenize_many takes an iterable of texts, not one string; use tokenize()")
        split = [self.split(text) for text in texts]
        terms = self.term_map({tok for toks in split for tok in toks})
        return [[term for tok in toks if (term := terms[tok]) is not None] for toks in split]

    def term_codes(self, tokens: Sequence[str]) -> tuple[np.ndarray, list[str]]:
        """Index terms of distinct ``tokens`` (from :meth:`split`): each token's index in ``terms``, -1 for a
        stopword, and ``terms``, the distinct terms in order of first appearance. Each token is stemmed once
        and the stems are coded in C (``_word_codes.c``), so no dict is built per token."""
        from rankscope.retrieval import _word_codes

        kept = np.fromiter((tok not in self._stop for tok in tokens), dtype=bool, count=len(tokens))
        words = list(itertools.compress(tokens, kept))
        stems = self._stemmer.stemWords(words) if self._stemmer is not None else words
        codes, _, terms = _word_codes.code_words([stems], False)
        term_of = np.full(len(tokens), -1, dtype=np.int32)
        term_of[kept] = np.frombuffer(codes, dtype=np.int32)
        return term_of, terms

    def term_map(self, tokens: Iterable[str]) -> dict[str, str | None]:
        """Token (from :meth:`split`) -> index term, or None for a stopword (:meth:`term_codes` as a dict)."""
        tokens = list(dict.fromkeys(tokens))
        term_of, terms = self.term_codes(tokens)
        return {tok: terms[code] if code >= 0 else None for tok, code in zip(tokens, term_of.tolist())}


PRESETS: dict[str, dict[str, Any]] = {
    "english": {},
    "english-nostem": {"stemmer": None},
    "plain": {"stopwords": None, "stemmer": None},
    "chinese": {"tokenizer": "jieba", "stopwords": "chinese"},
}
"""Named analyzers, usable in retriever specs (``bm25:analyzer=chinese``)."""


class AnalyzerMismatchWarning(UserWarning):
    """The analyzer cannot split the corpus's text into words (see :func:`script_mismatch`)."""


_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")
SCRIPT_SAMPLE = 200
"""Documents looked at to tell the corpus's script: enough to be sure, cheap on millions."""


def script_mismatch(texts: list[str], analyzer: Analyzer) -> str | None:
    """Why ``analyzer`` cannot work on ``texts``, or None: Chinese, Japanese or Korean text has no
    spaces between words, so a pattern tokenizer keeps whole clauses as single tokens that no query
    repeats, and every score is 0. Looks at evenly spaced documents; needs most letters to be CJK."""
    if analyzer.tokenizer != "regex" or not texts:
        return None
    step = max(1, len(texts) // SCRIPT_SAMPLE)
    sample = "".join(texts[::step][:SCRIPT_SAMPLE])
    letters = len(_LETTER.findall(sample))
    cjk = len(_CJK.findall(sample))
    if letters == 0 or cjk / letters < 0.5:
        return None
    return (
        f"{cjk / letters:.0%} of the corpus's letters are Chinese, Japanese or Korean, which the "
        f"pattern tokenizer ({analyzer.token_pattern!r}) cannot split into words, so queries will "
        "match almost nothing; for Chinese pass --analyzer chinese (analyzer=chinese in a retriever spec) "
        '(pip install "rankscope[zh]" for jieba and the stopword list)'
    )


def register_preset(name: str, **settings: Any) -> None:
    """Name an analyzer configuration so retriever specs can refer to it."""
    Analyzer(**settings)  # validate now, not at first use
    PRESETS[name] = dict(settings)


def get_analyzer(analyzer: str | Analyzer) -> Analyzer:
    """An :class:`Analyzer` from a preset name, or the analyzer itself."""
    if isinstance(analyzer, Analyzer):
        return analyzer
    if analyzer not in PRESETS:
        raise ValueError(f"unknown analyzer preset {analyzer!r}; known: {sorted(PRESETS)}")
    return Analyzer(**PRESETS[analyzer])


ANALYZER: Param[str | Analyzer] = Param(
    str,
    "english",
    "text analysis: a preset (PRESETS, add with register_preset) or, from Python, an Analyzer",
    choices=lambda: tuple(PRESETS),
    objects=(Analyzer,),
    name="analyzer",
)
"""The ``analyzer`` parameter every retriever that analyses text declares."""


def saved_analyzer_param(analyzer: str | Analyzer) -> str | None:
    """The ``analyzer`` parameter as stored in an index's params: the preset name, or None
    for an :class:`Analyzer` object (the index's analyzer config is what rebuilds it)."""
    return analyzer if isinstance(analyzer, str) else None


def restore_analyzer(saved_param: str | None, config: Mapping[str, Any]) -> tuple[str | Analyzer, Analyzer]:
    """(parameter, analyzer) of a loaded index: the preset name is kept if it still means the
    saved config, so ``get_params()`` is the same as before saving; otherwise the saved config wins."""
    analyzer = Analyzer.from_config(config)
    if isinstance(saved_param, str) and saved_param in PRESETS and get_analyzer(saved_param) == analyzer:
        return saved_param, analyzer
    return analyzer, analyzer
