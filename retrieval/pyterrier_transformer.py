"""A rankscope retriever as a PyTerrier transformer, so ``pt.Experiment`` runs it beside PyTerrier's own.

The transformer takes PyTerrier's queries frame (``qid``, ``query``) and gives its results frame
(``qid``, ``query``, ``docno``, ``score``, ``rank``; rank from 0, as PyTerrier numbers them), ranked by
rankscope's tie rule (score descending, then doc_id descending: trec_eval's order, which
``pt.Experiment``'s scoring applies too). PyTerrier is imported only when one is made (extra
``frameworks``); no Java is needed: the retriever is rankscope's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankscope.core.errors import RankscopeError
from rankscope.core.extras import require_extra

if TYPE_CHECKING:
    import pandas as pd

    from rankscope.corpora.dataset import Dataset
    from rankscope.retrieval.base import Retriever


def as_transformer(retriever: str | Retriever, corpus: Dataset | pd.DataFrame | None = None, k: int = 1000) -> Any:
    """A PyTerrier transformer searching with ``retriever`` to depth ``k``.

    ``retriever`` is a spec (``"bm25:k1=0.9"``) or a Retriever; it is indexed on ``corpus`` (a Dataset or
    a corpus table) when one is given, else it must be indexed already.
    """
    require_extra("pyterrier", "frameworks", "a PyTerrier transformer")
    import pyterrier as pt

    from rankscope.retrieval.registry import make_retriever

    searcher = make_retriever(retriever) if isinstance(retriever, str) else retriever
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise RankscopeError(f"k={k!r}: expected a positive integer")
    if corpus is not None:
        searcher.index(getattr(corpus, "corpus", corpus))

    class RankscopeTransformer(pt.Transformer):
        """rankscope's search as a PyTerrier transformer (see the module doc)."""

        def __init__(self) -> None:
            self.retriever = searcher
            self.k = k

        def __repr__(self) -> str:
            return f"rankscope({self.retriever.spec()})"

        def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
            return _results(self.retriever, topics, self.k)

    return RankscopeTransformer()


def _results(retriever: Retriever, topics: pd.DataFrame, k: int) -> pd.DataFrame:
    import pandas as pd

    missing = [c for c in ("qid", "query") if c not in topics.columns]
    if missing:
        raise RankscopeError(f"a PyTerrier queries frame has the columns qid and query; this one lacks {missing[0]!r}")
    queries = pd.DataFrame({"query_id": topics["qid"].astype(str), "text": topics["query"].astype(str)})
    run = retriever.search(queries.drop_duplicates("query_id"), k=k)
    texts = dict(zip(queries["query_id"], queries["text"]))
    return pd.DataFrame(
        {
            "qid": run["query_id"].astype(str),
            "query": run["query_id"].map(texts),
            "docno": run["doc_id"].astype(str),
            "score": run["score"].astype(float),
            "rank": run["rank"].astype(int) - 1,
        }
    )
