"""BM25 benchmarks: retrieval quality on Cranfield/CISI and speed on a synthetic corpus.

    python benchmarks/bench_bm25.py quality            # nDCG@10 table (needs RANKSCOPE_DATA)
    python benchmarks/bench_bm25.py speed              # every system, each in its own process
    python benchmarks/bench_bm25.py speed --system rankscope   # one system (what `speed` runs per process)

Quality: nDCG@10 (trec_eval definition, :func:`evaluation.evaluate`) of rankscope's
BM25 variants and analyzers, next to rank-bm25, bm25s and scikit-learn's
TfidfVectorizer given exactly the same tokens. Speed: a Zipfian corpus of
100,000 documents (~100 tokens, 50,000 word types) and 1,000 queries for top-10;
index time, queries/s, peak memory, first-call time and re-weighting time.
Systems that can use several threads are run twice: on one thread (bm25s's default
``n_threads=0``, rankscope's default) and on two (``n_threads=2``; rankscope with
``RANKSCOPE_NUM_THREADS=2``), so one-thread and all-core numbers are compared like for like.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
from extras import require  # benchmarks/extras.py, beside this script

SEED = 0
N_DOCS, DOC_LEN, N_TYPES, N_QUERIES, QUERY_LEN, TOP_K = 100_000, 100, 50_000, 1_000, 5, 10
RANK_BM25_QUERIES = 20
"""rank-bm25 scores every document in Python: it is timed on this many queries and extrapolated."""


# --- quality -------------------------------------------------------------------------
def _ndcg10(dataset, run: pd.DataFrame) -> float:
    from rankscope.evaluation import evaluate

    return evaluate(dataset.qrels, run, ["ndcg@10"]).mean["ndcg@10"]


def _run_from_scores(query_ids, doc_ids, score_rows, k: int = 1000) -> pd.DataFrame:
    """A run from dense per-query score vectors: top k among non-zero scores."""
    from rankscope.retrieval.base import make_run

    docs, scores = [], []
    for row in score_rows:
        row = np.asarray(row, dtype=np.float64)
        nonzero = np.flatnonzero(row)
        best = nonzero[np.argsort(-row[nonzero], kind="stable")[:k]]
        docs.append(np.asarray(doc_ids, dtype=object)[best])
        scores.append(row[best])
    return make_run(query_ids, docs, scores)


def _competitors(dataset, analyzer) -> dict[str, float]:
    """rank-bm25, bm25s and scikit-learn on the tokens ``analyzer`` produces."""
    import bm25s
    import rank_bm25
    from sklearn.feature_extraction.text import TfidfVectorizer

    from rankscope.retrieval.base import document_texts, query_texts

    doc_ids, texts = document_texts(dataset.corpus)
    query_ids, qtexts = query_texts(dataset.queries)
    docs = analyzer.tokenize_many(texts)
    queries = analyzer.tokenize_many(qtexts)
    out = {}
    okapi = rank_bm25.BM25Okapi(docs)
    out["rank-bm25 BM25Okapi"] = _ndcg10(dataset, _run_from_scores(query_ids, doc_ids, map(okapi.get_scores, queries)))
    for method in ("lucene", "robertson"):
        model = bm25s.BM25(method=method, k1=1.5, b=0.75)
        model.index(docs, show_progress=False)
        vocab = model.vocab_dict
        rows = []
        for q in queries:
            known = [t for t in q if t in vocab]
            rows.append(model.get_scores(known) if known else np.zeros(len(docs)))
        out[f"bm25s {method}"] = _ndcg10(dataset, _run_from_scores(query_ids, doc_ids, rows))
    vectorizer = TfidfVectorizer(analyzer=lambda tokens: tokens, sublinear_tf=True)
    doc_matrix = vectorizer.fit_transform(docs)
    cosine = (vectorizer.transform(queries) @ doc_matrix.T).toarray()
    out["sklearn TfidfVectorizer cosine"] = _ndcg10(dataset, _run_from_scores(query_ids, doc_ids, cosine))
    return out


def quality() -> None:
    from rankscope.corpora import load_dataset
    from rankscope.retrieval.analysis import Analyzer
    from rankscope.retrieval.bm25 import BM25

    data = os.environ.get("RANKSCOPE_DATA")
    if not data:
        sys.exit("set RANKSCOPE_DATA to the folder holding cranfield/ and cisi/")
    datasets = {name: load_dataset(os.path.join(data, name)) for name in ("cranfield", "cisi")}
    rows: list[dict[str, object]] = []

    def add(section: str, system: str, scores: Callable[[object], float]) -> None:
        row = {"section": section, "system": system}
        row.update({name: round(scores(ds), 3) for name, ds in datasets.items()})
        rows.append(row)
        print(row, flush=True)

    issue = Analyzer(token_pattern=r"\w+", stemmer=None)  # the issue's setting: \w+, English stopwords, no stemming
    for name, ds in datasets.items():
        for system, value in _competitors(ds, issue).items():
            rows.append({"section": "issue tokens", "system": system, name: round(value, 3)})
    for variant in ("okapi", "lucene", "bm25l", "bm25+"):
        add(
            "issue tokens",
            f"rankscope bm25 {variant}",
            lambda ds, v=variant: _ndcg10(ds, BM25(variant=v, analyzer=issue).index(ds.corpus).search(ds.queries)),
        )

    analyzers = {
        "\\w+, no stopwords, no stem": Analyzer(token_pattern=r"\w+", stopwords=None, stemmer=None),
        "\\w+, stopwords, no stem": Analyzer(token_pattern=r"\w+", stemmer=None),
        "\\w+, stopwords, snowball english": Analyzer(token_pattern=r"\w+"),
        "\\w\\w+, stopwords, porter": Analyzer(stemmer="porter"),
        "\\w\\w+, no stopwords, snowball english": Analyzer(stopwords=None),
        "\\w\\w+, stopwords, snowball english (default)": Analyzer(),
        "[^\\W\\d_]{2,} letters only, stopwords, snowball": Analyzer(token_pattern=r"[^\W\d_]{2,}"),
    }
    for label, analyzer in analyzers.items():
        add(
            "analyzers (bm25 okapi k1=1.5 b=0.75)",
            label,
            lambda ds, a=analyzer: _ndcg10(ds, BM25(variant="okapi", analyzer=a).index(ds.corpus).search(ds.queries)),
        )
    default = Analyzer()
    for name, ds in datasets.items():
        for system, value in _competitors(ds, default).items():
            rows.append({"section": "default tokens", "system": system, name: round(value, 3)})
    for variant in ("okapi", "lucene", "bm25l", "bm25+"):
        for k1, b in ((1.5, 0.75), (1.2, 0.75), (0.9, 0.4)):
            add(
                "default tokens",
                f"rankscope bm25 {variant} k1={k1} b={b}",
                lambda ds, v=variant, k1=k1, b=b: _ndcg10(
                    ds, BM25(variant=v, k1=k1, b=b).index(ds.corpus).search(ds.queries)
                ),
            )
    table = pd.DataFrame(rows).groupby(["section", "system"], sort=False).first().reset_index()
    print(table.to_markdown(index=False) if _has_tabulate() else table.to_string(index=False))


# --- speed ---------------------------------------------------------------------------
def synthetic(seed: int = SEED) -> tuple[list[str], list[str]]:
    """Zipfian documents and queries (Zipf exponent 1 over N_TYPES words named ``w<rank>``).

    Queries draw QUERY_LEN words from the same distribution, skipping the 100 most
    frequent words (the stopwords a real analyzer removes), and only words present in the corpus.
    """
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, N_TYPES + 1)
    prob = 1.0 / ranks
    prob /= prob.sum()
    words = np.array([f"w{r}" for r in ranks], dtype=object)
    lengths = rng.integers(DOC_LEN - 20, DOC_LEN + 21, size=N_DOCS)
    tokens = words[rng.choice(N_TYPES, size=int(lengths.sum()), p=prob)]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    docs = [" ".join(tokens[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    seen = set(tokens.tolist())
    query_prob = np.where([w in seen for w in words], prob, 0.0)
    query_prob[:100] = 0.0
    query_prob /= query_prob.sum()
    queries = [" ".join(words[rng.choice(N_TYPES, size=QUERY_LEN, p=query_prob)]) for _ in range(N_QUERIES)]
    return docs, queries


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _timed(func: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def _best_qps(func: Callable[[], object], n_queries: int, repeats: int = 3) -> dict[str, float]:
    """Queries/s by wall clock and by process CPU time (all threads), each the best of ``repeats`` runs.

    The machine is shared, so wall time depends on the neighbours' load; CPU time
    is the steadier measure of the work done (for one thread, wall and CPU agree
    on a quiet machine; with two, wall time shows the gain and CPU time the total work).
    """
    wall, cpu = [], []
    for _ in range(repeats):
        start_cpu = time.process_time()
        wall.append(_timed(func)[0])
        cpu.append(time.process_time() - start_cpu)
    return {"qps": n_queries / min(wall), "qps_cpu": n_queries / min(cpu)}


def speed_rankscope(docs: list[str], queries: list[str], threads: int) -> dict[str, float]:
    from rankscope.retrieval.analysis import Analyzer
    from rankscope.retrieval.bm25 import BM25
    from rankscope.retrieval.counts_retriever import THREADS_VARIABLE

    os.environ[THREADS_VARIABLE] = str(threads)  # this process only: each system runs in its own

    corpus = pd.DataFrame({"doc_id": [str(i) for i in range(len(docs))], "text": docs})
    table = pd.DataFrame({"query_id": [str(i) for i in range(len(queries))], "text": queries})
    plain = Analyzer(stopwords=None, stemmer=None)  # the synthetic words need no stemming; bm25s gets none either
    cpu = time.process_time()
    index_s, model = _timed(lambda: BM25(analyzer=plain).index(corpus))
    index_cpu_s = time.process_time() - cpu
    first_s, _ = _timed(lambda: model.search(table.iloc[:1], k=TOP_K))
    qps = _best_qps(lambda: model.search(table, k=TOP_K), len(queries))
    reweight_s = min(_timed(lambda k1=k1: model.set_params(k1=k1, b=0.5))[0] for k1 in (1.2, 0.9, 1.5))
    peak = _peak_mb()
    default_index_s, _ = _timed(lambda: BM25().index(corpus))
    return {
        "index_s": index_s,
        "index_cpu_s": index_cpu_s,
        "first_call_s": first_s,
        **qps,
        "reweight_s": reweight_s,
        "fresh_index_s": index_s,
        "peak_rss_mb": peak,
        "index_default_analyzer_s": default_index_s,
    }


def speed_bm25s(docs: list[str], queries: list[str], backend: str, threads: int) -> dict[str, float]:
    import bm25s

    def build():
        tokens = bm25s.tokenize(docs, stopwords=None, show_progress=False)
        model = bm25s.BM25(method="lucene", backend=backend)
        model.index(tokens, show_progress=False)
        return model

    cpu = time.process_time()
    index_s, model = _timed(build)
    index_cpu_s = time.process_time() - cpu
    query_tokens = bm25s.tokenize(queries, stopwords=None, return_ids=False, show_progress=False)
    n_threads = 0 if threads == 1 else threads  # bm25s: 0 (the default) = no worker threads

    def retrieve(tokens: list[list[str]]) -> object:
        return model.retrieve(tokens, k=TOP_K, show_progress=False, n_threads=n_threads)

    first_s, _ = _timed(lambda: retrieve(query_tokens[:1]))
    qps = _best_qps(lambda: retrieve(query_tokens), len(queries))
    return {"index_s": index_s, "index_cpu_s": index_cpu_s, "first_call_s": first_s, **qps, "fresh_index_s": index_s}


def speed_rank_bm25(docs: list[str], queries: list[str]) -> dict[str, float]:
    import rank_bm25

    cpu = time.process_time()
    index_s, model = _timed(lambda: rank_bm25.BM25Okapi([d.lower().split() for d in docs]))
    index_cpu_s = time.process_time() - cpu

    def top(query: str) -> np.ndarray:
        scores = model.get_scores(query.lower().split())
        return np.argpartition(-scores, TOP_K)[:TOP_K]

    first_s, _ = _timed(lambda: top(queries[0]))
    sample = queries[1 : 1 + RANK_BM25_QUERIES]
    qps = _best_qps(lambda: [top(q) for q in sample], len(sample), repeats=1)
    return {
        "index_s": index_s,
        "index_cpu_s": index_cpu_s,
        "first_call_s": first_s,
        **qps,
        "fresh_index_s": index_s,
    }


SYSTEMS: dict[str, Callable[[list[str], list[str]], dict[str, float]]] = {
    "rankscope": lambda d, q: speed_rankscope(d, q, 1),
    "rankscope 2 threads": lambda d, q: speed_rankscope(d, q, 2),
    "bm25s-numpy": lambda d, q: speed_bm25s(d, q, "numpy", 1),
    "bm25s-numba": lambda d, q: speed_bm25s(d, q, "numba", 1),
    "bm25s-numba 2 threads": lambda d, q: speed_bm25s(d, q, "numba", 2),
    "rank-bm25": speed_rank_bm25,
}


def speed_one(system: str) -> dict[str, float]:
    docs, queries = synthetic()
    baseline = _peak_mb()
    result = SYSTEMS[system](docs, queries)
    result.setdefault("peak_rss_mb", _peak_mb())
    result["data_rss_mb"] = baseline
    return result


def speed_all() -> None:
    load_before = os.getloadavg()
    rows = {}
    for system in SYSTEMS:
        out = subprocess.run(
            [sys.executable, __file__, "speed", "--system", system], capture_output=True, text=True, check=True
        )
        rows[system] = json.loads(out.stdout.strip().splitlines()[-1])
        print(system, rows[system], file=sys.stderr, flush=True)
    table = pd.DataFrame(rows).T
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    table["reweight_vs_fresh"] = table["fresh_index_s"] / table.get("reweight_s")
    print(
        f"{N_DOCS:,} docs x ~{DOC_LEN} tokens, {N_TYPES:,} types (Zipf s=1), {N_QUERIES:,} queries of {QUERY_LEN} words, "
        f"top-{TOP_K}; rank-bm25 QPS from {RANK_BM25_QUERIES} queries"
    )
    print(table.round(4).to_string())


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["quality", "speed"])
    parser.add_argument("--system", choices=list(SYSTEMS), help="speed: run only this system in this process")
    args = parser.parse_args()
    require(["bm25s", "rank_bm25"] + (["numba"] if args.mode == "speed" else []))
    if args.mode == "quality":
        quality()
    elif args.system:
        print(json.dumps(speed_one(args.system)))
    else:
        speed_all()


if __name__ == "__main__":
    main()
