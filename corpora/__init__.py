"""Corpora, queries and relevance judgments, from the formats people have."""

from rankscope.corpora.dataset import Dataset
from rankscope.corpora.load import load_dataset

__all__ = ["Dataset", "load_dataset"]
