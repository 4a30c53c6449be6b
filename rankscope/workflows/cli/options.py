"""The options workflow commands share, each declared once; a command lists the ones it takes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from rankscope.core.errors import RankscopeError
from rankscope.core.lazy import Late
from rankscope.core.scheduler import add_scheduler
from rankscope.corpora.cli import add_analyzer, add_fields, add_split, add_strict, parsed_fields
from rankscope.workflows.cli.command import Added, Adds, Option

if TYPE_CHECKING:
    import pandas as pd

    from rankscope.corpora.dataset import Dataset


class Grouped(Protocol):
    """A result that can take query groups (compare's, diagnose's)."""

    def with_groups(self, source: pd.Series) -> Any: ...


G = TypeVar("G", bound=Grouped)

RUN_HELP = (
    "a run file as a system, named NAME, else by its file name (run.bm25.trec: bm25) (repeatable; TREC, "
    "MS MARCO, Parquet or a JSONL/CSV/TSV table)"
)

DATASET = Option(
    ("--dataset",),
    "collection name or folder, irds:NAME (an ir_datasets collection) or hf:OWNER/NAME (a BEIR-layout Hugging Face "
    "dataset); compare: also a qrels file, with --run (default: %(default)s)",
    "dataset",
)
OUT = Option(("--out",), "write tables, runs, plots and report.md/report.html here", settings={"metavar": "DIR"})
FIGURES = Option(
    ("--figure-format", "--figures"),
    "formats of every plot written with --out: svg (vector, drawn once), png (a second render of each "
    "plot: only when asked), pdf (vector with embedded fonts, for papers: only when "
    "asked, it takes longer than the other two together); report.html always holds them as inline SVG "
    "(default: %(default)s)",
    settings={
        "nargs": "+",
        "choices": Late("rankscope.reporting.rendering:FIGURE_FORMATS"),
        "metavar": "FORMAT",
        "default": Late("rankscope.workflows.options:Output.figures"),
    },
)
SEED = Option(("--seed",), "seed for tests, folds and sampling (default: %(default)s)", "seed", {"type": int})
STRICT = Added(add_strict)
SPLIT = Added(add_split)
FIELDS = Added(add_fields)
ANALYZER = Added(add_analyzer)
RUN = Option(("--run",), RUN_HELP, settings={"action": "append", "default": [], "metavar": "[NAME=]PATH"})
RETRIEVERS = Option(
    ("--retrievers",),
    "retriever specs, e.g. tfidf bm25:k1=0.9,b=0.4 w2v (default: {default} unless --run is given)",
    "retrievers",
    {"nargs": "+", "metavar": "SPEC"},
    applies=False,
)
"""The systems of the commands that take specs beside --run (compare, poolbias)."""
TEST = Option(
    ("--test",),
    "paired significance test, Holm-corrected (default: %(default)s)",
    "test",
    {"choices": Late("rankscope.evaluation.significance:TESTS")},
)


GROUPS = Option(
    ("--groups",),
    "query groups: 'length' (the query's length in terms: 1-3, 4-7, 8-15, 16+), column:NAME (a column of the "
    "dataset's queries file: a TSV/CSV column, a JSONL field, BEIR's metadata.KEY) or a TSV file of "
    "query_id<TAB>group; adds each group's means and tests against the baseline(s), Holm per metric over "
    "every group's comparisons, groups.csv and a per-group plot",
    settings={"metavar": "length|column:NAME|FILE"},
)
"""``--groups`` of compare and diagnose (read by :class:`Grouping`)."""


class Grouping:
    """``--groups``, read as early as it can be: a TSV file before any work, a rule or a column of the
    queries file as soon as the dataset is loaded, so a bad file or column is said before any system
    runs; :meth:`applied` gives the result with its groups (``with_groups``)."""

    def __init__(self, source: str | None) -> None:
        from rankscope.evaluation.groups import COLUMN, RULES, read_groups

        self.source = source
        self.groups: pd.Series | None = None
        if source is not None and source not in RULES and not source.startswith(COLUMN):
            if not Path(source).is_file():
                raise RankscopeError(
                    f"--groups {source!r}: not a file, not column:NAME and not a rule ({', '.join(RULES)})"
                )
            self.groups = read_groups(source)

    def loading(self, load: Callable[[], Dataset]) -> Callable[[], Dataset]:
        """``load``, then the groups read from what it loaded (the rule's or the column's)."""
        if self.source is None or self.groups is not None:
            return load

        def load_then_group() -> Dataset:
            from rankscope.evaluation.groups import query_groups

            data = load()
            self.groups = query_groups(cast(str, self.source), data.queries, data.queries_file)
            return data

        return load_then_group

    def applied(self, result: G) -> G:
        return result if self.groups is None else result.with_groups(self.groups)


def depth(help: str) -> Option:
    return Option(("--depth",), f"{help} (default: %(default)s)", "depth", {"type": int})


def scheduler(what: str) -> Added:
    """``--scheduler``; ``what`` says what the command runs there."""
    return Added(lambda parser: add_scheduler(parser, what))


def output_format(formats: Sequence[str]) -> Option:
    return Option(
        ("--format",),
        "terminal output: tables, the summary as JSON"
        + (", or the summary as a booktabs LaTeX table" if "latex" in formats else "")
        + " (default: %(default)s)",
        settings={"choices": tuple(formats), "default": "table"},
    )


def common(formats: Sequence[str]) -> tuple[Adds, ...]:
    """Options every workflow command has: dataset and its split, output folder, analyzer, figures, seed, --strict,
    --fields, terminal format, --quiet, --verbose."""
    return (DATASET, SPLIT, OUT, ANALYZER, FIGURES, SEED, STRICT, FIELDS, output_format(formats))


def systems_from_args(
    specs: list[str],
    runs: list[str],
    fields: str | None = None,
    analyzer: str | None = None,
    after: Sequence[str] = (),
) -> dict[str, object]:
    """Specs (each named by itself as typed, so ``--baseline bm25`` still names it; ``--analyzer``
    added to each that takes one), then ``--run [NAME=]PATH`` files (:func:`system_run` names them) (as paths, with the ``--fields``
    run mapping if any), then the ``after`` specs (diagnose's ``--vs``), refusing a name given twice."""
    from rankscope.corpora.run_names import system_run
    from rankscope.retrieval.registry import with_analyzer
    from rankscope.workflows.common.runs import check_names
    from rankscope.workflows.common.systems import RunFile

    columns = parsed_fields(fields).get("run")
    pairs: list[tuple[str, object]] = [(spec, with_analyzer(spec, analyzer)) for spec in specs]
    for item in runs:
        name, path = system_run(item)
        pairs.append((name, RunFile(Path(path), columns) if columns else Path(path)))
    pairs += [(spec, with_analyzer(spec, analyzer)) for spec in after]
    check_names([name for name, _ in pairs], "system")
    return dict(pairs)


def default_specs(specs: list[str] | None, runs: list[str], default: str | Sequence[str]) -> list[str]:
    """The specs given, else the workflow's own default (its signature's) unless ``--run`` gives the systems."""
    if specs or runs:
        return list(specs or [])
    return [default] if isinstance(default, str) else list(default)
