"""Runs over the real collections for evaluation's tests: a TF-IDF run, optionally with many ties."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer

from rankscope.corpora import load_dataset


def tfidf_run(folder: Path, depth: int, granularity: float | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Top-``depth`` cosine TF-IDF run; scores made exact in float32 (trec_eval's precision).

    ``granularity`` rounds scores to a multiple of it, which creates many ties.
    """
    data = load_dataset(folder)
    vectorizer = TfidfVectorizer(sublinear_tf=True)
    docs = vectorizer.fit_transform((data.corpus["title"] + " " + data.corpus["text"]).tolist())
    scores = (vectorizer.transform(data.queries["text"].tolist()) @ docs.T).toarray()
    scores = scores.astype(np.float32).astype(np.float64)
    if granularity is not None:
        scores = np.round(scores / granularity) * granularity  # multiples of a power of two: exact
    top = np.argsort(-scores, axis=1)[:, :depth]
    run = pd.DataFrame(
        {
            "query_id": np.repeat(data.queries["query_id"].to_numpy(dtype=object), depth),
            "doc_id": data.corpus["doc_id"].to_numpy(dtype=object)[top.reshape(-1)],
            "score": np.take_along_axis(scores, top, axis=1).reshape(-1),
        }
    )
    return data.qrels, run
