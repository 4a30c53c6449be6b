"""Corpora, queries and relevance judgments, from the formats people have."""
