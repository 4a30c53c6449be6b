"""Corpora, queries and relevance judgments, from the formats people have."""

from rankscope.core.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Dataset": "rankscope.corpora.dataset",
    "load_dataset": "rankscope.corpora.load",
}
__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
