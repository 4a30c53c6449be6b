"""rankscope: compare retrievers, tune them, and tell recall misses from ranking misses.

``import rankscope as rs`` gives the names a user needs, loaded on first use so that
importing the package (and starting the CLI) stays fast::

    data = rs.load_dataset("cranfield")
    run = rs.make_retriever("bm25").index(data.corpus).search(data.queries)
    rs.evaluate(data.qrels, run, ["ndcg@10", "map"]).mean

Layers, bottom to top (``tests/test_layers.py`` enforces them): ``rankscope.core``
(errors, file I/O, progress), ``rankscope.corpora`` (data), ``rankscope.evaluation``
and ``rankscope.retrieval`` (which never import each other at module level),
``rankscope.reporting`` (tables, plots, reports), ``rankscope.workflows`` (compare, tune,
diagnose, rag, judge), and the CLI (``rankscope.cli``).
"""

from __future__ import annotations

from rankscope.core.lazy import lazy_exports
from rankscope.core.version import __version__

# public name -> module that defines it; the one table the facade is built from
_EXPORTS: dict[str, str] = {
    "Dataset": "rankscope.corpora.dataset",
    "load_dataset": "rankscope.corpora.load",
    "read_trec_run": "rankscope.corpora.trec",
    "read_trec_qrels": "rankscope.corpora.trec",
    "evaluate": "rankscope.evaluation.engine",
    "Retriever": "rankscope.retrieval.base",
    "make_retriever": "rankscope.retrieval.registry",
    "fuse": "rankscope.retrieval.fusion",
    "compare": "rankscope.workflows.compare",
    "tune": "rankscope.workflows.tune",
    "diagnose": "rankscope.workflows.diagnose",
    "rag": "rankscope.workflows.rag",
    "judge": "rankscope.workflows.judge",
    "adapt": "rankscope.workflows.common.frameworks",
    "as_transformer": "rankscope.retrieval.pyterrier_transformer",
}

__all__ = ["__version__", *_EXPORTS]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
