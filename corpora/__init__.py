"""Corpora, queries and relevance judgments, from the formats people have."""

from corpora.dataset import Dataset
from corpora.load import load_dataset

__all__ = ["Dataset", "load_dataset"]
