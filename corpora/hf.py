"""``hf:OWNER/NAME``: a BEIR-layout collection of the Hugging Face Hub, read through the ``datasets`` library.

The repository holds the configs ``corpus`` (``_id``, ``title``, ``text``) and ``queries`` (``_id``,
``text``), and its judgments (``query-id``, ``corpus-id``, ``score``, one split each) in a config
``qrels`` or ``default`` (MTEB's copies) or in the companion repository ``OWNER/NAME-qrels`` (BEIR's
own). ``datasets``' rules find it: a local folder of that name first (a clone of the repository), else
its cache, offline when ``HF_HUB_OFFLINE=1`` (or ``RANKSCOPE_OFFLINE``) and the cache has it, else a download.
As with a BEIR folder, the split (default ``test``) holds the queries its judgments name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from rankscope.core.errors import DatasetNotFoundError, SchemaError
from rankscope.core.extras import require_extra
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.remote_sources import OFFLINE, catalogue_name, downloads_off
from rankscope.corpora.tabular import Columns

_QRELS_CONFIGS = ("qrels", "default")


def load_hf(name: str, split: str | None = None, columns: Mapping[str, Columns] | None = None) -> Dataset:
    """The Hub collection ``name`` (``OWNER/NAME``) as a Dataset, one split of its judgments (see the module doc)."""
    if any(columns.values() if columns else ()):
        raise SchemaError(f"hf:{name}: a BEIR-layout dataset has fixed fields (_id, title, text); no column mapping")
    catalogue_name("hf:", name, "hf:OWNER/NAME (hf:BeIR/scifact), or hf:FOLDER for a clone of one")
    datasets = _library(name)
    with _offline_when_asked(datasets):
        return _loaded(datasets, name, split or "test")


@contextlib.contextmanager
def _offline_when_asked(datasets: Any) -> Iterator[None]:
    """With ``RANKSCOPE_OFFLINE`` set, the Hub's offline mode for this call (what ``HF_HUB_OFFLINE=1`` sets when
    the libraries are imported: both read it then): its cache only, no connection tried."""
    if not downloads_off():
        yield
        return
    from huggingface_hub import constants

    before = constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = before


def _loaded(datasets: Any, name: str, split: str) -> Dataset:
    configs = _configs(datasets, name)
    for needed in ("corpus", "queries"):
        if needed not in configs:
            raise DatasetNotFoundError(
                f"hf:{name} has no config {needed!r} (it has {', '.join(configs) or 'none'}): a BEIR-layout dataset "
                "has the configs corpus and queries"
            )
    corpus = _frame(datasets.load_dataset(name, "corpus"))
    queries = _frame(datasets.load_dataset(name, "queries"))
    qrels_config = next((c for c in _QRELS_CONFIGS if c in configs), None)
    source = name if qrels_config else f"{name}-qrels"
    judged = datasets.load_dataset(source, qrels_config) if qrels_config else _companion(datasets, source)
    if split not in judged:
        raise DatasetNotFoundError(
            f"hf:{name}: its judgments ({source}) have no split {split!r}; splits: {', '.join(judged)} "
            "(choose one with --split NAME; split= in Python)"
        )
    qrels = judged[split].to_pandas()
    missing = [c for c in ("query-id", "corpus-id", "score") if c not in qrels.columns]
    if missing:
        raise SchemaError(f"hf:{name}: its judgments ({source}, split {split}) lack the column {missing[0]!r}")
    scores = pd.to_numeric(qrels["score"], errors="coerce")
    if scores.isna().any() or (scores != scores.round()).any():
        bad = qrels["score"][scores.isna() | (scores != scores.round())].iloc[0]
        raise SchemaError(f"hf:{name}: its judgments ({source}, split {split}) hold the score {bad!r}, not an integer")
    qrels = pd.DataFrame(
        {
            "query_id": qrels["query-id"].astype(str),
            "doc_id": qrels["corpus-id"].astype(str),
            "relevance": scores.astype("int64"),
        }
    )
    corpus_frame = pd.DataFrame(
        {
            "doc_id": corpus["_id"].astype(str),
            "title": corpus["title"].fillna("").astype(str) if "title" in corpus else "",
            "text": corpus["text"].fillna("").astype(str),
        }
    )
    all_queries = pd.DataFrame({"query_id": queries["_id"].astype(str), "text": queries["text"].astype(str)})
    in_split = all_queries["query_id"].isin(qrels["query_id"])
    warnings = []
    if not in_split.all():
        warnings.append(
            f"{int((~in_split).sum())} of {len(all_queries)} queries of hf:{name} are not in its {split} "
            "judgments (other splits; not loaded)"
        )
    return Dataset(
        name=f"hf:{name}",
        corpus=corpus_frame,
        queries=all_queries[in_split].reset_index(drop=True),
        qrels=qrels,
        split=split,
        warnings=tuple(warnings),
    )


def _library(name: str) -> Any:
    return require_extra("datasets", "hf-datasets", f"hf:{name}")


def _configs(datasets: Any, name: str) -> list[str]:
    try:
        return list(datasets.get_dataset_config_names(name))
    except (FileNotFoundError, ConnectionError, ValueError) as exc:
        why = OFFLINE if downloads_off() else "not fetched"
        raise DatasetNotFoundError(
            f"hf:{name}: not found as a local folder nor in the Hugging Face cache, and {why} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
        ) from None


def _companion(datasets: Any, source: str) -> Any:
    try:
        return datasets.load_dataset(source)
    except (FileNotFoundError, ConnectionError, ValueError):
        raise DatasetNotFoundError(
            f"hf:{source.removesuffix('-qrels')}: no judgments: neither a config qrels or default nor the "
            f"repository {source}"
        ) from None


def _frame(loaded: Any) -> pd.DataFrame:
    """The first split of a corpus or queries config (BEIR's one split is named after its config) as a DataFrame."""
    return next(iter(loaded.values())).to_pandas()
