"""``export_dataset``: a collection as files other tools (and rankscope's own commands) read.

The folder is a BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``)
plus the same judgments as a TREC qrels file, ``qrels.txt``. So a collection rankscope
reads from its own format (Cranfield's SMART files, say) can be searched with
``rankscope search --dataset FOLDER`` and scored with ``rankscope evaluate FOLDER/qrels.txt
RUN``, or handed to BEIR, Pyserini, ir_measures or trec_eval as it is.
"""

from __future__ import annotations

from pathlib import Path

from rankscope.core.errors import RankscopeError
from rankscope.core.fileio import PathLike
from rankscope.corpora.beir import write_beir
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.trec import write_trec_qrels

TREC_QRELS_FILE = "qrels.txt"


def export_dataset(dataset: Dataset, folder: PathLike) -> list[Path]:
    """Write ``dataset`` into ``folder`` (BEIR files + TREC qrels, each atomically); returns the files.

    Refuses a folder that already holds files (an export never mixes with other data).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise RankscopeError(f"--out {folder}: exists and is not a folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise RankscopeError(f"--out {folder}: the folder is not empty; give a new or empty folder")
    write_beir(dataset, folder)
    write_trec_qrels(dataset.qrels, folder / TREC_QRELS_FILE)
    return [
        folder / "corpus.jsonl",
        folder / "queries.jsonl",
        folder / "qrels" / f"{dataset.split}.tsv",
        folder / TREC_QRELS_FILE,
    ]
