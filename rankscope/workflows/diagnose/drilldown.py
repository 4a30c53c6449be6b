"""The report's drill-down: one section per query showing why it lost points.

Queries are ordered by the points of the first metric the first system loses to
the ideal (ties by query id); an index table links each to its section. A section
holds the query text, the per-query metric values of each system (with the
oracle reranker's and the ideal values), the relevant documents with their rank in
each system ("not within D" otherwise) and, for the first system's recall losses,
why (vocabulary mismatch or outscored, with the query terms the document shares),
and each system's top results: titles and snippets with the query's terms
highlighted. The same content renders as HTML (links, ``<mark>``) and Markdown.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from rankscope.reporting.report import html_table
from rankscope.reporting.tables import markdown_table, md_block, md_escape, pipe_table
from rankscope.retrieval.analysis import Analyzer
from rankscope.retrieval.snippets import highlight
from rankscope.workflows.diagnose.analysed import Analysed
from rankscope.workflows.diagnose.misses import rank_label

if TYPE_CHECKING:
    from rankscope.workflows.diagnose.result import DiagnoseResult

TOP = 5
"""Top results shown per system and query."""
SNIPPET = frozenset({"snippet"})
"""The result column whose cells hold markup already (escaped text, query terms highlighted)."""
MARKS = ("\ue000", "\ue001")
"""Private-use characters put around a snippet's matching words once for both formats: each then escapes the
snippet in one call and turns them into its own marks (HTML's and Markdown's escapes leave them as they
are, and treat them as they treat a text's end, so a word's neighbours escape as they would alone)."""
UNJUDGED = "unjudged"
"""The grade shown for a document nobody judged (a blank cell read as a missing value)."""
LIMIT = 300
"""Sections at most (the worst queries); the index says when queries were left out."""
TITLE_CHARS = 90


def top_results(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    corpus: pd.DataFrame,
    queries: pd.DataFrame,
    analyzer: Analyzer,
    n: int = TOP,
    *,
    analysed: Analysed | None = None,
) -> pd.DataFrame:
    """Each query's top ``n`` (``run`` in tie-rule order): rank, doc_id, grade (an int, or :data:`UNJUDGED`), title,
    snippet and the snippet's words matching the query's terms (space-separated). ``analysed``: the texts'
    words and terms kept from another system's diagnosis (analysed here when not given)."""
    top = run.loc[run["rank"] <= n, ["query_id", "rank", "doc_id"]]
    top = top.merge(qrels, on=["query_id", "doc_id"], how="left").rename(columns={"relevance": "grade"})
    analysed = analysed or Analysed(corpus, queries)
    shown = list(dict.fromkeys(top["doc_id"]))  # a document is among the top of many queries: read once
    titles = document_titles(corpus.loc[corpus["doc_id"].isin(shown)])
    query_terms = analysed.query_terms(top["query_id"], analyzer)
    words = analysed.words(shown, analyzer)
    snippets = [words[d].snippet(query_terms[q]) for q, d in zip(top["query_id"], top["doc_id"])]
    return top.assign(
        grade=[UNJUDGED if pd.isna(grade) else int(grade) for grade in top["grade"]],
        title=[titles.get(d, "") for d in top["doc_id"]],
        snippet=[s for s, _ in snippets],
        matched=[" ".join(m) for _, m in snippets],
    ).reset_index(drop=True)


def document_titles(corpus: pd.DataFrame) -> dict[str, str]:
    """Each document's title on one line, or its first words when it has none, cut to :data:`TITLE_CHARS`."""
    out = {}
    for doc_id, title, text in zip(corpus["doc_id"], corpus["title"], corpus["text"]):
        line = " ".join(title.split()) or " ".join(text[: TITLE_CHARS * 2].split())
        out[doc_id] = line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1] + "…"
    return out


def query_index(result: DiagnoseResult) -> pd.DataFrame:
    """Every judged query, most points lost first: the first metric per system and the first system's loss."""
    first = result.diagnoses[0]
    order = result.worst(first, n=None, losing=False)
    metric = result.metrics[0]
    frame = order[["query_id", metric, "lost", "ranking_lost", "recall_lost"]].rename(
        columns={metric: f"{metric} {first.retriever}"}
    )
    for d in result.diagnoses[1:]:
        values = d.headroom.lost(metric)["actual"]
        frame.insert(2, f"{metric} {d.retriever}", values.reindex(frame["query_id"]).to_numpy())
    recall_losses = first.failures.groupby("query_id").size()
    relevant = first.ranks.groupby("query_id").size()
    frame["relevant"] = relevant.reindex(frame["query_id"]).to_numpy()
    frame["recall_losses"] = recall_losses.reindex(frame["query_id"], fill_value=0).to_numpy()
    frame["text"] = [t if len(t) <= 80 else t[:79] + "…" for t in order["text"]]
    return frame.reset_index(drop=True)


Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class QueryPage:
    """What one query's section shows: its index row, and rows of its metric values (per system, its
    oracle, the ideal), relevant documents and each system's top results (columns in the ``*_COLUMNS``)."""

    query_id: str
    row: dict[str, Any]
    metrics: Rows
    relevant: Rows
    results: tuple[tuple[str, Rows], ...]


RESULT_COLUMNS = ("rank", "doc_id", "grade", "title", "snippet")


def query_pages(result: DiagnoseResult, limit: int = LIMIT) -> tuple[pd.DataFrame, list[QueryPage]]:
    """The query index and the pages of its first ``limit`` queries (tables are split by query in one pass)."""
    index = query_index(result)
    metrics = _by_query(metric_rows(result), ["query_id", "system", *result.metrics])
    relevant = _by_query(relevant_frame(result), list(relevant_columns(result)))
    results = [
        (d.retriever, _by_query(_marks_put(d.top_results), ["query_id", *RESULT_COLUMNS])) for d in result.diagnoses
    ]
    pages = [
        QueryPage(
            query_id=row["query_id"],
            row=row,
            metrics=metrics.get(row["query_id"], []),
            relevant=relevant.get(row["query_id"], []),
            results=tuple((name, tops.get(row["query_id"], [])) for name, tops in results),
        )
        for row in index.head(limit).to_dict("records")
    ]
    return index, pages


def _marks_put(top: pd.DataFrame) -> pd.DataFrame:
    """Top results whose snippets hold their matching words between :data:`MARKS` (a snippet holding a mark
    character itself is kept as a pair of the snippet and its matching words, marked by each format)."""
    marked = [
        (snippet, matched)
        if MARKS[0] in snippet or MARKS[1] in snippet
        else highlight(snippet, matched.split(), *MARKS, str)
        for snippet, matched in zip(top["snippet"], top["matched"])
    ]
    return top.assign(snippet=marked)


def _by_query(frame: pd.DataFrame, columns: list[str]) -> dict[str, Rows]:
    """Rows of ``columns`` (the first is query_id, dropped from the rows) grouped by query, in frame order."""
    out: dict[str, Rows] = {}
    for values in frame[columns].itertuples(index=False, name=None):
        out.setdefault(values[0], []).append(values[1:])
    return out


def metric_rows(result: DiagnoseResult) -> pd.DataFrame:
    """Per query: each system's actual values, its oracle (perfect reranker over its top D), the ideal."""
    parts = []
    for order, d in enumerate(result.diagnoses):
        values = d.headroom.per_query
        for kind, label in (("actual", d.retriever), ("oracle", f"{d.retriever}: oracle top {result.depth}")):
            parts.append(values.assign(system=label, order=2 * order + (kind == "oracle"), value=values[kind]))
    ideal = result.diagnoses[0].headroom.per_query
    parts.append(ideal.assign(system="ideal", order=2 * len(result.diagnoses), value=ideal["ideal"]))
    wide = pd.concat(parts).pivot(index=["query_id", "order", "system"], columns="metric", values="value")
    return wide.reset_index()


def relevant_columns(result: DiagnoseResult) -> tuple[str, ...]:
    first = result.diagnoses[0].retriever
    return (
        "query_id",
        "doc_id",
        "grade",
        "title",
        *(f"rank {d.retriever}" for d in result.diagnoses),
        f"why {first} missed it",
    )


def relevant_frame(result: DiagnoseResult) -> pd.DataFrame:
    """Every relevant document: grade, title, rank in each system, why the first system missed it."""
    first = result.diagnoses[0]
    frame = first.ranks[["query_id", "doc_id", "relevance"]].rename(columns={"relevance": "grade"})
    frame = frame.assign(title=frame["doc_id"].map(result.titles).fillna(""))
    keys = ["query_id", "doc_id"]
    for d in result.diagnoses:
        ranks = frame[keys].merge(d.ranks[[*keys, "rank"]], on=keys, how="left")["rank"]
        frame[f"rank {d.retriever}"] = [rank_label(r, result.depth) for r in ranks]
    why = frame[keys].merge(first.failures, on=keys, how="left")
    frame[f"why {first.retriever} missed it"] = [
        "" if pd.isna(reason) else f"{reason} ({int(shared)}/{int(terms)} query terms)"
        for reason, shared, terms in zip(why["reason"], why["shared_terms"], why["query_terms"])
    ]
    return frame


def _anchor(query_id: str) -> str:
    """The section id of a query: ASCII letters, digits and ``-`` kept, every other character as
    ``_<hex>_``, so two query ids never share an anchor."""
    return "q-" + "".join(c if c.isascii() and (c.isalnum() or c == "-") else f"_{ord(c):x}_" for c in query_id)


def _note(index: pd.DataFrame, pages: list[QueryPage]) -> str:
    left = len(index) - len(pages)
    return (
        f" Sections for the {len(pages)} queries that lose the most points; {left} more are only listed."
        if left
        else ""
    )


def _heading(result: DiagnoseResult, page: QueryPage) -> str:
    row = page.row
    return (
        f"Query {page.query_id} ({row['lost']:.3f} {result.metrics[0]} lost: {row['ranking_lost']:.3f} ranking, "
        f"{row['recall_lost']:.3f} recall)"
    )


def _marked(rows: Rows, before: str, after: str, escape: Callable[[str], str]) -> Rows:
    """Result rows with the snippet escaped and its matching words between ``before`` and ``after``."""
    return [(*r[:-1], _marks_made(r[-1], before, after, escape)) for r in rows]


def _marks_made(snippet: str | tuple[str, str], before: str, after: str, escape: Callable[[str], str]) -> str:
    if isinstance(snippet, tuple):  # it holds a mark character: its words are marked one by one
        text, matched = snippet
        return highlight(text, matched.split(), before, after, escape)
    return escape(snippet).replace(MARKS[0], before).replace(MARKS[1], after)


def drilldown_html(result: DiagnoseResult, index: pd.DataFrame, pages: list[QueryPage]) -> str:
    """The index table (each query id links to its section) and one section per page."""
    esc = html.escape
    shown = {page.query_id for page in pages}
    links = [
        (f'<a href="#{_anchor(q)}">{esc(q)}</a>' if q in shown else esc(q), *rest)
        for q, *rest in index.itertuples(index=False, name=None)
    ]
    out = [
        '<div class="drill">',
        f"<p>{esc(_caption(result) + _note(index, pages))}</p>",
        html_table(list(index.columns), links, raw=frozenset({"query_id"})),
    ]
    for page in pages:
        out += [
            f'<section id="{_anchor(page.query_id)}">',
            f"<h3>{esc(_heading(result, page))}</h3>",
            f'<p class="query">{esc(result.query_text(page.query_id))}</p>',
            "<h4>Metric values</h4>",
            html_table(["system", *result.metrics], page.metrics),
            f"<h4>Relevant documents ({page.row['relevant']}; {page.row['recall_losses']} not within the top "
            f"{result.depth} of {esc(result.diagnoses[0].retriever)})</h4>",
            html_table(relevant_columns(result)[1:], page.relevant),
        ]
        for name, top in page.results:
            out += [
                f"<h4>Top {TOP} of {esc(name)}</h4>",
                html_table(RESULT_COLUMNS, _marked(top, "<mark>", "</mark>", esc), raw=SNIPPET),
            ]
        out += ['<p><a href="#drilldown">back to the query index</a></p>', "</section>"]
    out.append("</div>")
    return "\n".join(out)


def drilldown_markdown(result: DiagnoseResult, index: pd.DataFrame, pages: list[QueryPage]) -> str:
    """The same as :func:`drilldown_html` in Markdown: query terms in snippets in **bold**."""
    out = [md_block(_caption(result) + _note(index, pages)), "", markdown_table(index, index=False), ""]
    for page in pages:
        text = md_escape(result.query_text(page.query_id))
        out += [
            f"### {md_escape(_heading(result, page))}",
            "",
            f"*{text}*" if text else "",
            "",
            pipe_table(["system", *result.metrics], page.metrics),
            "",
            pipe_table(relevant_columns(result)[1:], page.relevant),
            "",
        ]
        for name, top in page.results:
            marked = _marked(top, "**", "**", md_escape)
            out += [f"Top {TOP} of {md_escape(name)}:", "", pipe_table(RESULT_COLUMNS, marked, raw=SNIPPET), ""]
    return "\n".join(out)


def _caption(result: DiagnoseResult) -> str:
    return (
        f"Every judged query, most {result.metrics[0]} points lost first; lost = ideal - "
        f"{result.diagnoses[0].retriever}'s value, split into what a perfect reranker over the top "
        f"{result.depth} wins back (ranking) and what needs recall."
    )
