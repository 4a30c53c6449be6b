"""Coverage of recall beyond the pool on Cranfield and CISI (issue 45's must-show), written into docs/recall.md.

Each collection's full judgments are hidden but for the depth-10 pool of bm25 and tfidf; a share of
the unjudged documents is drawn outside it (strata by bm25's ranks 1-100, 101-1000, the rest) and
labelled by the hidden judgments; over ``--repetitions`` seeds, the share of 95% intervals of each
query's R, each system's per-query Recall@100 and its mean over queries that hold the full-judgment
value (``rankscope.evaluation.recall_simulation.simulate``). A second, shorter run over more shares
gives the width of R's interval against the labels per query.

    RANKSCOPE_DATA=... python benchmarks/bench_recall_outside.py                      # 200 repetitions, 500 draws: about 10 min of CPU
    RANKSCOPE_DATA=... python benchmarks/bench_recall_outside.py --repetitions 20 --write no
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from rankscope.corpora import load_dataset
from rankscope.evaluation.recall_simulation import simulate
from rankscope.retrieval.registry import make_retriever

DOC = Path(__file__).resolve().parents[1] / "docs" / "recall.md"
BEGIN, END = "<!-- simulation: written by benchmarks/bench_recall_outside.py -->", "<!-- end of simulation -->"


def runs(name: str) -> tuple[pd.DataFrame, dict[str, pd.DataFrame], pd.Series]:
    """The collection's qrels, bm25's and tfidf's top 1,000 for its judged queries, and its document ids."""
    data = load_dataset(name)
    queries = data.queries[data.queries["query_id"].astype(str).isin(data.qrels["query_id"].astype(str))]
    made = {spec: make_retriever(spec).index(data.corpus).search(queries, k=1000) for spec in ("bm25", "tfidf")}
    return data.qrels, made, data.corpus["doc_id"]


def table(rows: pd.DataFrame, columns: list[str]) -> str:
    """A Markdown table of ``rows``."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(value) for value in row) + " |" for row in rows[columns].itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=200)
    parser.add_argument("--width-repetitions", type=int, default=30)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--write", choices=("yes", "no"), default="yes")
    arguments = parser.parse_args()
    coverage, widths = [], []
    started = time.process_time()
    for name in ("cranfield", "cisi"):
        qrels, made, doc_ids = runs(name)
        must = simulate(
            qrels, made, doc_ids, (0.05, 0.1), repetitions=arguments.repetitions, draws=arguments.draws
        ).table
        coverage.append(must.assign(collection=name))
        more = simulate(
            qrels, made, doc_ids, (0.02, 0.2), repetitions=arguments.width_repetitions, draws=arguments.draws
        ).table
        both = pd.concat([must, more])
        widths.append(both[both["figure"] == "R"].assign(collection=name))
        print(name, "done", f"{time.process_time() - started:.0f} s of CPU", flush=True)
    shown = pd.concat(coverage, ignore_index=True)
    shown = shown.assign(
        coverage=(100 * shown["coverage"]).map("{:.1f}%".format),
        mean_width=shown["mean_width"].map("{:.3f}".format),
        labels_per_query=shown["labels_per_query"].map("{:.0f}".format),
    )
    width = pd.concat(widths, ignore_index=True).sort_values(["collection", "share"])
    width = width.assign(
        coverage=(100 * width["coverage"]).map("{:.1f}%".format),
        mean_width=width["mean_width"].map("{:.1f}".format),
        labels_per_query=width["labels_per_query"].map("{:.0f}".format),
    )
    text = "\n\n".join(
        [
            BEGIN,
            f"Repetitions: {arguments.repetitions} (the widths' extra shares 2% and 20%: {arguments.width_repetitions}), "
            f"{arguments.draws} draws an estimate; "
            f"{time.process_time() - started:.0f} s of CPU. Command: `RANKSCOPE_DATA=DIR python benchmarks/bench_recall_outside.py`.",
            table(
                shown,
                ["collection", "share", "labels_per_query", "figure", "intervals", "covered", "coverage", "mean_width"],
            ),
            "Width of R's 95% interval (documents) against the labels drawn per query:",
            table(width, ["collection", "share", "labels_per_query", "intervals", "coverage", "mean_width"]),
            END,
        ]
    )
    print(text)
    if arguments.write == "yes":
        page = DOC.read_text(encoding="utf-8")
        head, _, rest = page.partition(BEGIN)
        _, _, tail = rest.partition(END)
        DOC.write_text(head + text + tail, encoding="utf-8")


if __name__ == "__main__":
    main()
