"""The contract of every workflow command, checked for each command of ``rankscope.cli.COMMANDS``
whose module declares a ``COMMAND`` (so a new command is checked without being added to any list):

- its defaults are its workflow function's (every option standing for a parameter);
- ``--strict`` makes a dataset whose qrels name a missing document an error (exit 2, one line),
  and without it the dataset's warning is printed and the command runs;
- ``--quiet`` is accepted after the command name as before it, and turns progress bars off;
- ``--out`` is checked before the dataset is even loaded (exit 2, one line);
- a dataset that does not exist is one line, exit 2.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import textwrap
from pathlib import Path

import pytest

from rankscope.cli import COMMANDS, build_parser, main
from rankscope.core import progress
from rankscope.corpora.dataset import Dataset
from rankscope.corpora.export import export_dataset
from rankscope.workflows.cli.command import Command, Option, defaults
from tests.workflows.tiny_collection import QRELS as TINY_QRELS
from tests.workflows.tiny_collection import QUERIES, TEXTS

QRELS = {**TINY_QRELS, "q1": {**TINY_QRELS["q1"], "d99": 1}}  # d99: a judged document the corpus lacks
WARNING = "1 judgment(s) name 1 document(s) not in the corpus (kept; e.g. ['d99'])"


def workflow_commands() -> list[str]:
    """Every command whose module declares a COMMAND: read from the command table, never listed here."""
    return [
        name
        for name, module in COMMANDS.items()
        if isinstance(getattr(importlib.import_module(module), "COMMAND", None), Command)
    ]


def command(name: str) -> Command:
    return importlib.import_module(COMMANDS[name]).COMMAND


@pytest.fixture(scope="module")
def dangling(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small collection in a folder whose qrels name a document the corpus lacks."""
    folder = tmp_path_factory.mktemp("dangling")
    export_dataset(Dataset.from_dicts("dangling", TEXTS, QUERIES, QRELS), folder)
    return str(folder)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def check_defaults(name: str) -> None:
    """Each option standing for a workflow parameter shows that parameter's default; an option named
    like a parameter (``--depth`` for ``depth``) may not retype it."""
    cmd = command(name)
    given = defaults(cmd.function())
    parsed = vars(build_parser([name]).parse_args([name]))
    declared = [o for o in cmd.options if isinstance(o, Option) and o.parameter is not None]
    checked = {option_dest(o): o for o in declared}
    for dest in set(parsed) & set(given):
        checked.setdefault(dest, Option((f"--{dest}",), "", dest))
    for dest, option in checked.items():
        if option.applies:
            default = given[option.parameter or dest]
            assert parsed[dest] == (list(default) if isinstance(default, tuple) else default), f"{name} --{dest}"
        else:
            assert parsed[dest] is None, f"{name} --{dest}: applied by the call, not by argparse"


def option_dest(option: Option) -> str:
    return option.flags[0].lstrip("-").replace("-", "_")


def check_strict_and_warnings(name: str, dataset: str, capsys: pytest.CaptureFixture[str], tmp: Path) -> None:
    example = command(name).example
    status, _, err = run(capsys, "--quiet", name, "--dataset", dataset, "--strict", *example)
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith(f"rankscope {name}: error: ") and "not in the corpus" in err
    progress.set_quiet(False)
    status, out, err = run(capsys, name, "--dataset", dataset, *example, "--quiet", "--format", "json")
    assert status == 0, err
    assert f"rankscope {name}: warning: {WARNING}" in err.splitlines()
    assert progress.is_quiet()  # --quiet after the command name reached the hub
    assert isinstance(json.loads(out), dict)


def check_out_and_errors(name: str, dataset: str, capsys: pytest.CaptureFixture[str], tmp: Path) -> None:
    taken = tmp / "a-file"
    taken.write_text("mine")
    status, _, err = run(capsys, "--quiet", name, "--dataset", dataset, "--out", str(taken), *command(name).example)
    assert status == 2
    assert err == f"rankscope {name}: error: --out {taken}: exists and is not a folder\n"  # no warning: not loaded
    assert taken.read_text() == "mine"
    missing = tmp / "no-such-collection"
    status, _, err = run(capsys, "--quiet", name, "--dataset", str(missing), *command(name).example)
    assert status == 2 and err.count("\n") == 1 and err.startswith(f"rankscope {name}: error: "), err


@pytest.fixture(autouse=True)
def _restore_quiet():
    yield
    progress.set_quiet(None)


@pytest.mark.parametrize("name", workflow_commands())
def test_defaults_are_the_workflow_functions(name: str) -> None:
    check_defaults(name)


@pytest.mark.parametrize("name", workflow_commands())
def test_strict_warnings_quiet_out_and_errors(
    name: str, dangling: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    check_strict_and_warnings(name, dangling, capsys, tmp_path)
    check_out_and_errors(name, dangling, capsys, tmp_path)


NEW_COMMAND = '''
    """A workflow that exists only in this test: how many judged documents each query has in its top N."""
    from __future__ import annotations

    from dataclasses import dataclass
    from pathlib import Path

    import pandas as pd

    from rankscope.reporting import provenance
    from rankscope.reporting.report import Report, write_csv
    from rankscope.reporting.tables import text_table
    from rankscope.workflows.cli.command import Command, Option, loader
    from rankscope.workflows.common.runs import resolve_dataset


    @dataclass(frozen=True)
    class CountResult:
        counts: pd.DataFrame
        provenance: provenance.Provenance
        files: tuple[Path, ...] = ()

        def to_text(self) -> str:
            return text_table(self.counts)

        def to_dict(self) -> dict[str, object]:
            return {"judged": int(self.counts["judged"].sum())}

        def report(self) -> Report:
            return Report("count").table(self.counts)

        def write_tables(self, out: Path) -> list[Path]:
            return [write_csv(self.counts, out / "counts.csv")]


    def count(dataset="cranfield", out=None, *, top=3, seed=0) -> CountResult:
        data = resolve_dataset(dataset)
        counts = data.qrels.groupby("query_id").size().clip(upper=top).rename("judged").to_frame()
        return CountResult(counts, provenance.record("count", data, {}, top=top))


    COMMAND = Command(
        name="count",
        help="judged documents per query",
        workflow="MODULE:count",
        options=(Option(("--top",), "documents counted (default: %(default)s)", "top", {"type": int}),),
        call=lambda args, count: count(DATASET, top=args.top, seed=args.seed),
        example=("--top", "2"),
    )
    register = COMMAND.register
'''


def add_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, dataset: str) -> None:
    """A new command in a temporary module, added to the command table as a package would add its own."""
    (tmp_path / f"{module}.py").write_text(
        textwrap.dedent(NEW_COMMAND.replace("MODULE", module).replace("DATASET", dataset))
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(COMMANDS, "count", module)
    monkeypatch.delitem(sys.modules, module, raising=False)


def test_a_new_command_is_checked_without_being_listed(
    dangling: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_command(tmp_path, monkeypatch, "new_command_ok", "loader(args)")
    assert "count" in workflow_commands()
    check_defaults("count")
    check_strict_and_warnings("count", dangling, capsys, tmp_path)
    check_out_and_errors("count", dangling, capsys, tmp_path)
    status, out, _ = run(capsys, "count", "--dataset", dangling, "--top", "1", "--out", str(tmp_path / "c"))
    assert status == 0 and (tmp_path / "c" / "counts.csv").is_file() and (tmp_path / "c" / "report.html").is_file()


def test_a_new_command_that_ignores_strict_fails_the_contract(
    dangling: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bug rag had: the dataset passed by name, so --strict was accepted and ignored."""
    add_command(tmp_path, monkeypatch, "new_command_lax", "args.dataset")
    with pytest.raises(AssertionError):
        check_strict_and_warnings("count", dangling, capsys, tmp_path)


def test_a_retyped_default_fails_the_contract(monkeypatch: pytest.MonkeyPatch) -> None:
    """rag's --depth once said 1000 beside the function's own 1000: a change to one would not reach the other."""
    cmd = command("rag")
    retyped = Option(("--depth",), "chunks retrieved per query", settings={"type": int, "default": 999})
    options = tuple(retyped if isinstance(o, Option) and o.flags == ("--depth",) else o for o in cmd.options)
    from dataclasses import replace

    monkeypatch.setattr(importlib.import_module(COMMANDS["rag"]), "COMMAND", replace(cmd, options=options))
    monkeypatch.setattr(importlib.import_module(COMMANDS["rag"]), "register", replace(cmd, options=options).register)
    with pytest.raises(AssertionError, match="rag --depth"):
        check_defaults("rag")


def test_the_values_people_see(capsys: pytest.CaptureFixture[str]) -> None:
    """What the defaults are today, written out, so a change to a function's default is a visible change."""
    from rankscope.evaluation.metrics import DEFAULT_METRICS

    compare_args = vars(build_parser(["compare"]).parse_args(["compare"]))
    assert (compare_args["depth"], compare_args["test"], compare_args["baseline"]) == (None, "randomization", None)
    assert vars(build_parser(["diagnose"]).parse_args(["diagnose"]))["depth"] == 100
    assert vars(build_parser(["rag"]).parse_args(["rag"]))["depth"] == 1000
    assert DEFAULT_METRICS == ("ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "precision@10")
    with pytest.raises(SystemExit):
        build_parser(["compare"]).parse_args(["compare", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "default: ndcg@10 recall@100 mrr@10 hit@10 map" in shown
    assert "(default: tfidf bm25 w2v unless --run is given)" in shown
    assert "(default: bm25 if compared, else the first)" in shown
    assert "per query (default: 1000); when given, --run files are cut to it too (default: scored as given" in shown
    with pytest.raises(SystemExit):
        build_parser(["diagnose"]).parse_args(["diagnose", "--help"])
    assert "(default: ndcg@10 mrr@10 recall@10 map)" in " ".join(capsys.readouterr().out.split())


def test_default_systems_apply_unless_runs_are_given() -> None:
    from rankscope.workflows.cli.options import default_specs

    for name, option, parameter in (("compare", "retrievers", "retrievers"), ("diagnose", "retriever", "retriever")):
        default = inspect.signature(command(name).function()).parameters[parameter].default
        expected = [default] if isinstance(default, str) else list(default)
        given = vars(build_parser([name]).parse_args([name]))[option]
        assert default_specs(given, [], default) == expected
        runs = vars(build_parser([name]).parse_args([name, "--run", "prod=prod.trec"]))
        assert default_specs(runs[option], runs["run"], default) == []


def test_rag_honours_strict(dangling: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``rankscope rag --strict`` was accepted and ignored, and rag never printed the dataset's warnings."""
    status, _, err = run(capsys, "--quiet", "rag", "--dataset", dangling, "--strict")
    assert status == 2 and err.count("\n") == 1
    assert err.startswith("rankscope rag: error: ") and "name 1 document(s) not in the corpus" in err


def test_diagnose_studies_the_system_named_first(
    dangling: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--run x=FILE --vs tfidf`` diagnoses x (issue 29: the CLI put --vs first)."""
    from rankscope.corpora.load import load_dataset
    from rankscope.corpora.trec import write_trec_run
    from rankscope.retrieval.registry import make_retriever

    data = load_dataset(dangling)
    run_file = tmp_path / "x.trec"
    write_trec_run(make_retriever("bm25").index(data.corpus).search(data.queries, k=20), run_file)
    out = tmp_path / "d"
    argv = ["diagnose", "--dataset", dangling, "--run", f"x={run_file}", "--vs", "tfidf", "--depth", "20"]
    status, _, err = run(capsys, "--quiet", *argv, "--out", str(out), "--figure-format", "svg")
    assert status == 0, err
    assert (out / "report.md").read_text().startswith(f"# rankscope diagnose: x vs tfidf on {data.name}\n")
    assert list(json.loads((out / "summary.json").read_text())["retrievers"]) == ["x", "tfidf"]


def test_every_command_takes_the_hubs_flags_after_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """`rankscope evaluate --quiet ...` was refused ('unrecognized arguments'): only the workflow commands
    took --quiet after their name. Every command and sub-command now does, and it turns progress off."""
    import argparse

    def commands(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> list[tuple[str, ...]]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, command in action.choices.items():
                    flags = {flag for each in command._actions for flag in each.option_strings}
                    assert {"--quiet", "--verbose"} <= flags, (*path, name)
                    found += [(*path, name), *commands(command, (*path, name))]
        return found

    everything = commands(build_parser([]), ())
    assert ("evaluate",) in everything and ("engines", "install") in everything
    monkeypatch.setattr(progress, "_quiet", None)
    # a file that is no qrels: main returns 2 for it, where an unrecognised --quiet raised SystemExit
    assert main(["evaluate", "--quiet", __file__, __file__]) == 2
    assert progress._quiet is True
