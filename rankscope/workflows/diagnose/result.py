"""What a diagnosis shows: :class:`Diagnosis` (one system's tables and findings) and
:class:`DiagnoseResult` (one or two systems, the worst queries, the comparison) as text, plain data,
tables and a report with the drill-down into every query. :mod:`.workflow` computes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path

import pandas as pd

from rankscope.corpora.query_fields import QueriesFile
from rankscope.reporting import plots, provenance
from rankscope.reporting.provenance import Provenance
from rankscope.reporting.report import Report, image_block, table_block, write_csv
from rankscope.reporting.tables import records, text_table, wrap_paragraph
from rankscope.workflows.common import groups
from rankscope.workflows.common.runs import DIAGNOSTICS_CAPTION, file_stem
from rankscope.workflows.diagnose.drilldown import drilldown_html, drilldown_markdown, query_pages
from rankscope.workflows.diagnose.headroom import Headroom
from rankscope.workflows.diagnose.misses import loss_summary, rank_distribution, rank_label
from rankscope.workflows.diagnose.recall_failures import MISMATCH_SHARE, failure_summary

WORST = 10
"""Worst queries in the report (and summary.json); the terminal shows the first WORST_SHOWN."""
WORST_SHOWN = 5
LOSS_COLUMNS = [
    "queries",
    "relevant",
    "found",
    "ranking_loss",
    "recall_loss",
    "found_share",
    "ranking_loss_share",
    "recall_loss_share",
    "judged_nonrelevant",
    "unjudged",
]
SHOWN_LOSS_COLUMNS = ["found", "ranking_loss", "recall_loss", "found_share", "judged_nonrelevant", "unjudged"]
"""What the terminal shows of the loss table (queries and relevant documents are in its heading; the
loss shares are in the report and losses CSV)."""
SHOWN_QUERY_COLUMNS = ["Hit@K", "Recall@K", "MRR@K", "Judged@K", "hits", "ranking_misses", "recall_misses"]
"""What the terminal shows of the per-K query table (the miss shares are in the report and cutoffs CSV)."""
LOSS_CAPTION = (
    "found in the top K, ranking losses (within the depth, below K), recall losses (not within the depth); "
    "shares are per-query means (found_share = Recall@K); judged_nonrelevant / unjudged = documents of the "
    "top K judged non-relevant / never judged (both count as non-relevant: losses behind unjudged ones may "
    "be holes in the judgments, not ranking errors)"
)


@dataclass(frozen=True)
class Diagnosis:
    """One retriever's diagnosis. ``cutoffs``: Hit/Recall/MRR@K (index K); ``ranks``: every relevant
    document with its rank (NaN = not within depth); ``losses``: found / ranking loss / recall loss per
    query and K; ``misses``: the first-relevant breakdown over queries (index K); ``first_ranks``: per
    judged query (NaN = none within depth); ``headroom``: actual, oracle and ideal metric values;
    ``failures``: every recall loss, why, and its rank in the other system; ``top_results``: each
    query's top documents with snippets; ``run``: the top ``depth`` of the run (tie-rule order);
    ``sampled``: see :func:`rankscope.workflows.diagnose.sampling.sampled_table` (empty unless asked);
    ``diagnostics``: the retriever's own numbers (e.g. ``ann_recall@100``; empty for most)."""

    retriever: str
    cutoffs: pd.DataFrame
    ranks: pd.DataFrame
    losses: pd.DataFrame
    misses: pd.DataFrame
    first_ranks: pd.Series
    headroom: Headroom
    failures: pd.DataFrame
    top_results: pd.DataFrame
    run: pd.DataFrame
    sampled: pd.DataFrame
    findings: tuple[str, ...]
    diagnostics: dict[str, float] = field(default_factory=dict)

    def failure_summary(self) -> pd.DataFrame:
        """Recall losses per reason, and how many of them the other system retrieves."""
        return self._failure_summary.copy()

    def loss_summary(self) -> pd.DataFrame:
        """Relevant documents found, ranking losses and recall losses over all queries, one row per K."""
        return self._loss_summary.copy()

    @cached_property
    def _failure_summary(self) -> pd.DataFrame:
        """Made once: the terminal, summary.json and the report each show it."""
        return failure_summary(self.failures)

    @cached_property
    def _loss_summary(self) -> pd.DataFrame:
        """Made once: the terminal, summary.json and the report each show it."""
        return loss_summary(self.losses)

    def table(self) -> pd.DataFrame:
        """Cutoff metrics, miss counts and miss shares (of all queries) side by side, one row per K.

        Judged@K (the share of the top K with any judgment) says how far the others can be
        trusted: unjudged documents count as non-relevant."""
        labels = {"hit": "Hit@K", "recall": "Recall@K", "mrr": "MRR@K", "judged": "Judged@K"}
        columns = [
            "hits",
            "ranking_misses",
            "recall_misses",
            "ranking_miss_share",
            "recall_miss_share",
            "ranking_share_of_misses",
        ]
        return self.cutoffs.rename(columns=labels).join(self.misses[columns])


@dataclass(frozen=True)
class DiagnoseResult:
    """Diagnoses of the retriever (and of ``--vs``), the worst queries and the comparison findings."""

    dataset: str
    depth: int
    metrics: tuple[str, ...]
    queries: pd.DataFrame
    titles: pd.Series
    diagnoses: tuple[Diagnosis, ...]
    comparison: tuple[str, ...]
    sampled_settings: str
    provenance: Provenance
    notes: tuple[str, ...] = ()
    files: tuple[Path, ...] = field(default=())
    queries_file: QueriesFile | None = field(default=None, repr=False)
    """The file the queries were read from (``with_groups("column:NAME")`` reads its field NAME)."""
    group_means: pd.DataFrame = field(default_factory=pd.DataFrame)
    """With :meth:`with_groups`: per group and metric, the group's query count and each system's mean."""
    group_tests: pd.DataFrame = field(default_factory=pd.DataFrame)
    """With :meth:`with_groups` and two systems: per group and metric, the first against the second
    (compare's test and correction: :func:`rankscope.evaluation.groups.group_tables`)."""

    def __repr__(self) -> str:
        """Counts, not the tables (a notebook cell shows one line)."""
        names = " vs ".join(d.retriever for d in self.diagnoses)
        return f"DiagnoseResult({names} on {self.dataset!r}: depth {self.depth}, {len(self.findings)} findings)"

    def worst(self, diagnosis: Diagnosis, n: int | None = WORST, *, losing: bool = True) -> pd.DataFrame:
        """The ``n`` queries (all with None) that lose the most points of the first metric to its ideal,
        split into the points a perfect reranker would win back and those only recall can; ties by query id.
        ``losing``: only queries that lose something (a query at its ideal is no worst query)."""
        metric = self.metrics[0]
        lost = diagnosis.headroom.lost(metric).rename_axis("query_id").reset_index()
        if losing:
            lost = lost[lost["lost"] > 0]
        lost = lost.sort_values(["lost", "query_id"], ascending=[False, True], kind="stable")
        if n is not None:
            lost = lost.head(n)
        ranks = diagnosis.first_ranks.reindex(lost["query_id"]).to_numpy()
        return pd.DataFrame(
            {
                "query_id": lost["query_id"].to_numpy(),
                metric: lost["actual"].to_numpy(),
                "lost": lost["lost"].to_numpy(),
                "ranking_lost": lost["ranking_lost"].to_numpy(),
                "recall_lost": lost["recall_lost"].to_numpy(),
                "first_relevant_rank": [rank_label(r, self.depth) for r in ranks],
                "text": self.texts(lost["query_id"]),
            }
        )

    def per_query(self) -> pd.DataFrame:
        """Long ``retriever, query_id, metric, value``: each system's value of each metric on each judged
        query (the headroom's ``actual``), compare's per-query table."""
        frames = [
            d.headroom.per_query[["query_id", "metric", "actual"]].assign(retriever=d.retriever) for d in self.diagnoses
        ]
        table = pd.concat(frames, ignore_index=True).rename(columns={"actual": "value"})
        return table[["retriever", "query_id", "metric", "value"]]

    def with_groups(self, source: str | Path | pd.Series) -> DiagnoseResult:
        """The same result with per-group means of every system and, with two, the first tested against
        the second in every group, as compare tests against its baseline: ``source`` is ``length``,
        ``column:NAME`` (a field of the queries file), a TSV file of ``query_id<TAB>group`` or a series."""
        from rankscope.evaluation.groups import group_tables, query_groups

        labels = source if isinstance(source, pd.Series) else query_groups(source, self.queries, self.queries_file)
        seed = int(str(self.provenance.settings.get("seed", 0)))
        means, tests = group_tables(self.per_query(), labels, self.baselines, seed=seed)
        return replace(self, group_means=means, group_tests=tests)

    @property
    def baselines(self) -> tuple[str, ...]:
        """What the diagnosed system is tested against in each group: the system it is compared with."""
        return tuple(d.retriever for d in self.diagnoses[1:])

    def group_lines(self) -> list[str]:
        """The terminal's group section: the first metric's marked table and where the system wins and loses."""
        if self.group_means.empty:
            return []
        metric, systems = self.metrics[0], [d.retriever for d in self.diagnoses]
        shown = groups.shown_groups(self.group_means, self.group_tests, systems, self.baselines, metric)
        line = groups.wins_and_losses(self.group_means, self.group_tests, systems[0], metric)
        caption = groups.CAPTION.format(metric=metric)
        return [wrap_paragraph(caption), text_table(shown), wrap_paragraph(line), ""]

    def texts(self, query_ids: pd.Series | pd.Index) -> list[str]:
        """Query texts on one line each (multi-line queries, as in CISI, would break tables)."""
        return [self.query_text(q) for q in query_ids]

    def query_text(self, query_id: str) -> str:
        """One query's text on one line (empty when the queries lack it)."""
        return self._one_line_texts.get(query_id, "")

    @cached_property
    def _one_line_texts(self) -> dict[str, str]:
        """Query id -> text on one line, built once (the report looks texts up hundreds of times)."""
        return {q: " ".join(t.split()) for q, t in zip(self.queries["query_id"], self.queries["text"])}

    def first_rank_table(self) -> pd.DataFrame:
        """Per judged query: its text and the first relevant rank under each retriever (empty = none)."""
        frame = pd.DataFrame({d.retriever: d.first_ranks.astype("Int64") for d in self.diagnoses})
        frame.insert(0, "text", self.texts(frame.index))
        frame.index.name = "query_id"
        return frame

    def relevant_rank_table(self) -> pd.DataFrame:
        """Every relevant document with its rank under each retriever (empty = not within the depth)."""
        keys = ["query_id", "doc_id", "relevance"]
        frame = self.diagnoses[0].ranks[keys]
        for d in self.diagnoses:
            frame = frame.merge(d.ranks[[*keys, "rank"]].rename(columns={"rank": d.retriever}), on=keys, how="left")
            frame[d.retriever] = frame[d.retriever].astype("Int64")
        return frame

    def report(self) -> Report:
        """Findings, tables and plots as a :class:`Report` (shown inline in Jupyter)."""
        return build_report(self)

    def write_tables(self, out: Path) -> list[Path]:
        """first_ranks.csv, relevant_ranks.csv; per system its cutoffs, losses, headroom, recall
        failures and sampled CSVs (:func:`~rankscope.reporting.finish.finish` adds the rest)."""
        files = [
            write_csv(self.first_rank_table(), out / "first_ranks.csv"),
            write_csv(self.relevant_rank_table(), out / "relevant_ranks.csv", index=False),
        ]
        for d in self.diagnoses:
            stem = file_stem(d.retriever)
            files.append(write_csv(d.table(), out / f"cutoffs.{stem}.csv"))
            files.append(write_csv(d.losses, out / f"losses.{stem}.csv", index=False))
            files.append(write_csv(d.headroom.per_query, out / f"headroom.{stem}.csv", index=False))
            files.append(write_csv(d.failures, out / f"recall_failures.{stem}.csv", index=False))
            if len(d.sampled):
                files.append(write_csv(d.sampled, out / f"sampled.{stem}.csv", index=False))
        return files + groups.write_groups(self.group_means, self.group_tests, out)

    def to_dict(self) -> dict[str, object]:
        """The result as plain data (what ``--format json`` prints and summary.json holds)."""
        return {
            "dataset": self.dataset,
            "depth": self.depth,
            "metrics": list(self.metrics),
            "retrievers": {
                d.retriever: {
                    "judged_queries": len(d.first_ranks),
                    "relevant_documents": len(d.ranks),
                    "losses": records(d.loss_summary()),
                    "headroom": records(d.headroom.summary),
                    "recall_failures": records(d.failure_summary()),
                    "cutoffs": records(d.table()),
                    "sampled": records(d.sampled, index=False) if len(d.sampled) else None,
                    "diagnostics": d.diagnostics,
                    "worst": records(self.worst(d), index=False),
                }
                for d in self.diagnoses
            },
            "sampled_settings": self.sampled_settings,
            "notes": list(self.notes),
            "findings": self.findings,
            "groups": records(self.group_means, index=False),
            "group_tests": records(self.group_tests, index=False),
            "provenance": self.provenance.to_dict(),
        }

    def to_text(self) -> str:
        """What the terminal shows: every table of the system diagnosed, the headroom of the one it is
        compared with (its other tables are in the report and summary.json), the findings; captions and
        findings wrapped to the terminal's width."""
        say = wrap_paragraph
        d, compared = self.diagnoses[0], self.diagnoses[1:]
        parts = [
            say(
                f"== {d.retriever} on {self.dataset}: {len(d.first_ranks)} judged queries, "
                f"{len(d.ranks)} relevant documents, depth {self.depth}"
            ),
            *(
                [say(f"retriever diagnostics: {diagnostics_line(d.diagnostics)} ({DIAGNOSTICS_CAPTION})")]
                if d.diagnostics
                else []
            ),
            say(f"relevant documents: {LOSS_CAPTION}"),
            text_table(d.loss_summary()[SHOWN_LOSS_COLUMNS]),
            *provenance.caption_lines(self.provenance),
            "",
            say(f"headroom: {self.headroom_caption}"),
            text_table(d.headroom.summary),
            "",
            say(f"recall losses: {self.failure_caption}"),
            text_table(d.failure_summary()),
            "",
            "queries (first relevant document):",
            text_table(d.table()[SHOWN_QUERY_COLUMNS]),
            "",
        ]
        if len(d.sampled):
            parts += [say(f"{self.sampled_caption}:"), text_table(d.sampled, index=False), ""]
        worst = self.worst(d, WORST_SHOWN)
        parts += [
            say(f"worst queries ({self.worst_caption}; up to {WORST} in the report):"),
            text_table(worst, index=False, clip=("text",)),
            "",
        ]
        for other in compared:
            parts += [
                say(
                    f"== {other.retriever} on {self.dataset}, compared with: headroom (its other tables are in "
                    "report.html and summary.json, its findings in the report)"
                ),
                text_table(other.headroom.summary),
                "",
            ]
        parts += self.group_lines()
        parts += ["findings:", *(say(f"- {f}") for f in [*d.findings, *self.comparison])]
        if self.notes:
            parts += ["", "notes:", *(say(f"- {n}") for n in self.notes)]
        return "\n".join(parts)

    @property
    def findings(self) -> list[str]:
        """Every retriever's findings, then the comparison's."""
        return [f for d in self.diagnoses for f in d.findings] + list(self.comparison)

    @property
    def headroom_caption(self) -> str:
        return (
            f"the value now (actual), with the top {self.depth} perfectly reordered by relevance (oracle: a perfect "
            f"reranker) and the ideal; ranking_headroom = oracle - actual, recall_headroom = ideal - oracle"
        )

    @property
    def failure_caption(self) -> str:
        return (
            "why each relevant document not within the top "
            f"{self.depth} was missed: vocabulary mismatch (it holds fewer than {MISMATCH_SHARE:.0%} of the "
            "query's analysed terms) or outscored (terms shared, other documents scored higher); recovered_by_X: "
            f"how many of them X retrieves within its top {self.depth}"
        )

    @property
    def worst_caption(self) -> str:
        return f"most {self.metrics[0]} points lost to the ideal, split into ranking and recall"

    @property
    def sampled_caption(self) -> str:
        return f"sampled protocol ({self.sampled_settings}) next to the full ranking"


def diagnostics_line(diagnostics: Mapping[str, float]) -> str:
    """``ann_recall@100 0.9650, oov_queries 0.0076``."""
    return ", ".join(f"{key} {value:.4f}" for key, value in diagnostics.items())


def build_report(result: DiagnoseResult) -> Report:
    names = " vs ".join(d.retriever for d in result.diagnoses)
    report = Report(f"rankscope diagnose: {names} on {result.dataset}")
    report.heading("Findings").bullets(result.findings)
    if result.notes:
        report.heading("Notes").bullets(list(result.notes))
    report.paragraph(
        f"At each K every relevant document is found (in the top K), a ranking loss (within the top {result.depth} "
        f"but below K: a reranker over the top {result.depth} can fix it) or a recall loss (not within the top "
        f"{result.depth}: only a better first stage can). Per query: a ranking miss at K has its first relevant "
        f"document below K; a recall miss has none within the top {result.depth}."
    )
    # plots sit beside the tables they draw, near the top: first the distribution both systems share
    distributions = {d.retriever: rank_distribution(d.first_ranks, result.depth) for d in result.diagnoses}
    report.heading("Where the first relevant document lands").row(
        table_block(pd.DataFrame(distributions).rename_axis("first relevant rank"), caption="queries per rank bucket"),
        image_block(
            "first_relevant_rank",
            plots.rank_histogram(distributions, dataset=result.dataset),
            "rank of the first relevant document per query",
        ),
    )
    for d in result.diagnoses:
        stem = file_stem(d.retriever)
        report.heading(f"{d.retriever}: Hit@K, Recall@K, MRR@K, Judged@K and misses").row(
            table_block(d.table()),
            image_block(
                f"misses.{stem}",
                plots.miss_bars({d.retriever: d.misses}, dataset=result.dataset),
                f"{d.retriever}: hits, ranking misses and recall misses at each K",
            ),
        )
        if d.diagnostics:
            report.heading(f"{d.retriever}: retriever diagnostics").table(
                pd.DataFrame([d.diagnostics]), caption=DIAGNOSTICS_CAPTION, index=False
            )
        report.heading(f"{d.retriever}: relevant documents found, ranking losses, recall losses")
        report.table(d.loss_summary()[LOSS_COLUMNS], caption=LOSS_CAPTION)
        report.heading(f"{d.retriever}: headroom in metric points; why recall failed").row(
            table_block(d.headroom.summary, caption=result.headroom_caption),
            table_block(d.failure_summary(), caption=result.failure_caption),
        )
        if len(d.sampled):
            report.table(d.sampled, caption=result.sampled_caption, index=False)
        worst = result.worst(d)
        worst["text"] = [t if len(t) <= 120 else t[:119] + "…" for t in worst["text"]]
        report.heading(f"{d.retriever}: worst queries").table(worst, caption=result.worst_caption, index=False)
    if not result.group_means.empty:
        systems = [d.retriever for d in result.diagnoses]
        groups.add_section(
            report, result.group_means, result.group_tests, systems, result.baselines, result.metrics[0], result.dataset
        )
    title = "Queries, worst first"
    pages = cache(lambda: query_pages(result))  # made when the page is written, once for both
    report.raw(
        lambda: f'<h2 id="drilldown">{title}</h2>\n{drilldown_html(result, *pages())}',
        lambda: f"## {title}\n\n{drilldown_markdown(result, *pages())}",
    )
    return provenance.add_section(report, result.provenance)
