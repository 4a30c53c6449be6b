"""Which fusion default cannot lose much: candidates for ``hybrid`` chosen on one collection, reported on another.

    python benchmarks/fusion_defaults.py                    # Cranfield and CISI, the candidates below
    python benchmarks/fusion_defaults.py --metric map
    python benchmarks/fusion_defaults.py --parts bm25 dense:model=model2vec   # a weak second part

Every candidate fuses the same two parts (``--parts``: ``bm25`` and ``w2v`` by default, the default
hybrid's; a weak second part such as the static ``dense:model=model2vec`` shows which fusion survives
one bad component, as on collections where ``w2v`` is weak); only the fusion differs, so one hybrid
index per collection serves them all (``set_params`` re-fuses the parts' cached runs). Printed:

1. per collection, each candidate's mean of ``--metric`` (and MAP, Recall@1000) against its best
   component alone, with the paired randomization test's p (10,000 sign flips, seed 0);
2. leave one collection out: the candidate with the best mean on one collection, its difference from
   the other collection's best component there, and its p;
3. within each collection, 5-fold cross-validation over queries repeated under 5 fold seeds
   (rankscope's ``tune``): each fold picks the candidate best on the other folds; the held-out
   mean against the best component.
"""

from __future__ import annotations

import argparse
import warnings

import pandas as pd
from extras import require

CANDIDATES = {
    "combsum zscore (1:1)": {"method": "combsum", "norm": "zscore", "weight": None},
    "combsum zscore (first 0.6)": {"method": "combsum", "norm": "zscore", "weight": 0.6},
    "combsum zscore (first 0.7)": {"method": "combsum", "norm": "zscore", "weight": 0.7},
    "combsum zscore (first 0.75)": {"method": "combsum", "norm": "zscore", "weight": 0.75},
    "combsum zscore (first 0.8)": {"method": "combsum", "norm": "zscore", "weight": 0.8},
    "combsum minmax (1:1)": {"method": "combsum", "norm": "minmax", "weight": None},
    "rrf k=60 (1:1)": {"method": "rrf", "k": 60.0, "weight": None},
    "rrf k=60 (first 0.7)": {"method": "rrf", "k": 60.0, "weight": 0.7},
    "rrf k=60 (first 0.8)": {"method": "rrf", "k": 60.0, "weight": 0.8},
}
PARTS = ["bm25", "w2v"]
METRICS = ("ndcg@10", "map", "recall@1000")


def scores(name: str, parts: list[str]) -> dict[str, pd.DataFrame]:
    """Per query (rows) and system (columns): each metric of the parts alone and of every candidate."""
    from rankscope.corpora import load_dataset
    from rankscope.evaluation import evaluate
    from rankscope.retrieval.registry import make_retriever

    data = load_dataset(name)
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for part in parts:
            runs[part] = make_retriever(part).index(data.corpus).search(data.queries, k=1000)
        hybrid = make_retriever(f"hybrid:retrievers={'+'.join(f'[{p}]' for p in parts)}").index(data.corpus)
        for label, params in CANDIDATES.items():
            runs[label] = hybrid.set_params(**params).search(data.queries, k=1000)
    results = evaluate(data.qrels, runs, list(METRICS))
    return {m: pd.DataFrame({system: result.wide()[m] for system, result in results.items()}) for m in METRICS}


def versus(values: pd.DataFrame, system: str, base: str) -> tuple[float, float]:
    """Mean difference of ``system`` from ``base`` and the paired randomization test's p."""
    from rankscope.evaluation.significance import randomization_test

    a, b = values[system].to_numpy(), values[base].to_numpy()
    return float((a - b).mean()), randomization_test(a, b, n_permutations=10_000, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs=2, default=["cranfield", "cisi"])
    parser.add_argument("--metric", default="ndcg@10", choices=METRICS)
    parser.add_argument("--parts", nargs=2, default=PARTS, help="the two specs to fuse, the first weighted")
    args = parser.parse_args()
    parts = args.parts
    require(["gensim", "faiss", "model2vec"], extra="dense")
    from rankscope.workflows.tune.crossval import fold_seeds, repeated_cross_validate

    tables = {name: scores(name, parts) for name in args.datasets}
    best_part = {name: max(parts, key=lambda p: tables[name][args.metric][p].mean()) for name in args.datasets}
    print(f"1. each candidate against the collection's best component ({args.metric}; p: paired randomization)")
    for name, table in tables.items():
        print(f"\n{name}: best component {best_part[name]}")
        rows = []
        for system in [*parts, *CANDIDATES]:
            row = {"system": system, **{m: round(table[m][system].mean(), 4) for m in METRICS}}
            diff, p = versus(table[args.metric], system, best_part[name])
            rows.append({**row, "diff": round(diff, 4), "p": round(p, 4)})
        print(pd.DataFrame(rows).to_string(index=False))
    print(f"\n2. leave one collection out ({args.metric}): chosen on one, reported on the other")
    for chosen_on, reported_on in (args.datasets, args.datasets[::-1]):
        values = tables[chosen_on][args.metric]
        choice = max(CANDIDATES, key=lambda c: values[c].mean())
        diff, p = versus(tables[reported_on][args.metric], choice, best_part[reported_on])
        print(
            f"  chosen on {chosen_on}: {choice}; on {reported_on} "
            f"{tables[reported_on][args.metric][choice].mean():.4f} vs {best_part[reported_on]} "
            f"{tables[reported_on][args.metric][best_part[reported_on]].mean():.4f}: {diff:+.4f} (p {p:.4f})"
        )
    worst = {c: min(versus(tables[n][args.metric], c, best_part[n])[0] for n in args.datasets) for c in CANDIDATES}
    print("  worst difference from the best component over both collections:")
    for candidate, value in sorted(worst.items(), key=lambda item: -item[1]):
        print(f"    {candidate}: {value:+.4f}")
    print(f"\n3. within each collection: 5-fold CV x 5 fold seeds choosing among the candidates ({args.metric})")
    for name, table in tables.items():
        values = table[args.metric][list(CANDIDATES)]
        repeated = repeated_cross_validate(values, 5, fold_seeds(0, 5))
        base = table[args.metric][best_part[name]]
        gains = [mean - base.mean() for mean in repeated.means]
        held = pd.DataFrame({"held_out": repeated.held_out, "base": base})
        diff, p = versus(held, "held_out", "base")
        picks = {
            str(k): int(v) for k, v in pd.concat([r.choices["point"] for r in repeated.runs]).value_counts().items()
        }
        print(
            f"  {name}: held-out {repeated.mean:.4f} vs {best_part[name]} {base.mean():.4f}: {diff:+.4f} (p {p:.4f}; "
            f"sd over fold seeds {pd.Series(gains).std():.4f}); folds chose {picks}"
        )


if __name__ == "__main__":
    main()
