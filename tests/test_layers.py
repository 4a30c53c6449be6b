"""The package's layers, read from the source: an import that goes up a layer fails here.

Bottom to top: core < corpora < evaluation, retrieval, judging < reporting < workflows < cli. ``evaluation``,
``retrieval`` and ``judging`` sit side by side and may import each other only inside a function (BEIR's rule:
any system's output can be scored without importing a retriever). The facade
(``rankscope/__init__.py``) is the top: it names everything, lazily.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# folder in the repository -> (import name, layer)
PACKAGES = {
    "rankscope/core": ("rankscope.core", 0),
    "corpora": ("rankscope.corpora", 1),
    "evaluation": ("rankscope.evaluation", 2),
    "retrieval": ("rankscope.retrieval", 2),
    "rankscope/judging": ("rankscope.judging", 2),
    "rankscope/reporting": ("rankscope.reporting", 3),
    "rankscope/workflows": ("rankscope.workflows", 4),
}
CLI_LAYER = 5  # rankscope/cli.py


def layer_of(module: str) -> int | None:
    """The layer of an imported rankscope module; None for the facade and for other libraries."""
    if module == "rankscope.cli":
        return CLI_LAYER
    for name, layer in PACKAGES.values():
        if module == name or module.startswith(name + "."):
            return layer
    return None


def module_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every import outside a function body (module, class and if-blocks count)."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, alias.name) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                if child.module == "rankscope":  # `from rankscope import corpora` names a subpackage
                    found.extend((child.lineno, f"rankscope.{alias.name}") for alias in child.names)
                else:
                    found.append((child.lineno, child.module))
            visit(child)

    visit(tree)
    return found


def upward_imports(source: str, own_name: str, own_layer: int, path: str) -> list[str]:
    problems = []
    for line, module in module_level_imports(ast.parse(source)):
        if module == "rankscope":  # the facade: only `__version__` would be safe, and core has it
            problems.append(
                f"{path}:{line}: imports the facade `rankscope`; import from the module that defines the name"
            )
            continue
        target = layer_of(module)
        if target is None or module.startswith(own_name):
            continue
        if target > own_layer or (target == own_layer and own_layer == 2):
            problems.append(f"{path}:{line}: layer {own_layer} ({own_name}) imports {module} (layer {target})")
    return problems


@pytest.mark.slow
def test_no_module_imports_up_a_layer() -> None:
    problems = []
    for folder, (name, layer) in PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            problems += upward_imports(path.read_text(encoding="utf-8"), name, layer, str(path.relative_to(REPO)))
    assert problems == []


@pytest.mark.parametrize(
    ("source", "own", "layer", "bad"),
    [
        ("from rankscope.workflows.compare import compare\n", "rankscope.corpora", 1, True),
        ("from rankscope.retrieval.base import Retriever\n", "rankscope.evaluation", 2, True),
        ("import rankscope.cli\n", "rankscope.workflows", 4, True),
        ("from rankscope.workflows.compare import compare\n", "rankscope.reporting", 3, True),
        ("from rankscope.workflows.common.runs import CUTOFFS\n", "rankscope.reporting", 3, True),
        ("from rankscope.reporting.report import Report\n", "rankscope.workflows", 4, False),
        ("from rankscope.retrieval.base import Retriever\n", "rankscope.reporting", 3, False),
        ("from rankscope import evaluation\n", "rankscope.core", 0, True),
        ("if True:\n    from rankscope.evaluation import evaluate\n", "rankscope.corpora", 1, True),
        ("def f():\n    from rankscope.retrieval.base import Retriever\n", "rankscope.evaluation", 2, False),
        ("from rankscope.core.errors import SchemaError\n", "rankscope.corpora", 1, False),
        ("from rankscope.corpora.schema import validate\n", "rankscope.retrieval", 2, False),
        ("import numpy as np\n", "rankscope.core", 0, False),
    ],
)
def test_the_layer_check_catches_upward_imports(source: str, own: str, layer: int, bad: bool) -> None:
    assert bool(upward_imports(source, own, layer, "x.py")) is bad


def test_every_installed_package_has_a_layer() -> None:
    """A package added to pyproject.toml without a layer here would escape the check above."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = {
        config["package-dir"].get(name, name.replace(".", "/"))
        for name in config["packages"]
        if name != "rankscope"  # the facade, checked by test_facade_is_lazy_and_complete
    }
    inside = {folder for folder in folders if any(folder.startswith(f"{top}/") for top in PACKAGES)}
    assert folders - inside == set(PACKAGES)  # a sub-package (retrieval/engines) has its parent's layer


def test_every_package_folder_is_installed() -> None:
    """Every folder of the package with an ``__init__.py`` is in pyproject.toml's ``packages``: setuptools
    installs exactly those, so one left out (rankscope/workflows/cli was, with every command) is missing
    from a wheel while an editable install still finds it."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = {config["package-dir"].get(name, name.replace(".", "/")) for name in config["packages"]}
    roots = ["rankscope", *(folder for folder in PACKAGES if not folder.startswith("rankscope/"))]
    found = {init.parent.relative_to(REPO).as_posix() for root in roots for init in (REPO / root).rglob("__init__.py")}
    assert found - listed == set() and listed - found == set()


def python_in(folder: Path, code: str) -> str:
    """What ``code`` prints, run by this interpreter in ``folder`` (away from the repository)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_generic_names_do_not_install(tmp_path: Path) -> None:
    """Outside the repository only `rankscope` is importable; a user's own `evaluation.py` shadows nothing."""
    (tmp_path / "evaluation.py").write_text("raise RuntimeError('the user module was imported')\n")
    (tmp_path / "corpora.py").write_text("raise RuntimeError('the user module was imported')\n")
    code = (
        "import importlib.util, rankscope as rs\n"
        "from rankscope.workflows import compare\n"
        "assert importlib.util.find_spec('retrieval') is None\n"
        "print(rs.evaluate.__module__, rs.load_dataset.__module__)\n"
    )
    assert python_in(tmp_path, code).split() == ["rankscope.evaluation.engine", "rankscope.corpora.load"]


@pytest.mark.slow
def test_facade_is_lazy_and_complete(tmp_path: Path) -> None:
    code = (
        "import sys, rankscope as rs\n"
        "heavy = [m for m in ('pandas', 'rankscope.corpora', 'rankscope.reporting', 'rankscope.workflows') if m in sys.modules]\n"
        "names = [n for n in rs.__all__ if n != '__version__']\n"
        "missing = [n for n in names if getattr(rs, n) is None]\n"
        "print(heavy, len(names), missing)\n"
    )
    assert python_in(tmp_path, code).strip() == "[] 15 []"


@pytest.mark.parametrize(
    ("argv", "loaded"),
    [
        (["--version"], []),  # no command module at all
        (["datasets", "--help"], ["rankscope.corpora.cli"]),
        (["search", "--help"], ["rankscope.corpora.cli", "rankscope.retrieval.cli"]),  # --strict from corpora
        (["retrievers", "--help"], ["rankscope.corpora.cli", "rankscope.retrieval.cli"]),
    ],
)
def test_cli_start_up_loads_only_the_named_command(tmp_path: Path, argv: list[str], loaded: list[str]) -> None:
    """Parsing a command line imports its sub-command's module and not pandas (seconds of start-up):
    a bad option or ``--version`` answers at once."""
    code = (
        "import sys\n"
        "from rankscope.cli import build_parser\n"
        "try:\n"
        f"    build_parser({argv!r}).parse_args({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "cli = sorted(m for m in sys.modules if m.startswith('rankscope.') and m.endswith('.cli') and m != 'rankscope.cli')\n"
        "print(cli, 'pandas' in sys.modules, 'scipy' in sys.modules)\n"
    )
    assert python_in(tmp_path, code).strip().splitlines()[-1] == f"{loaded!r} False False"


HEAVY = ("numpy", "pandas", "pyarrow", "scipy", "matplotlib", "rankscope.reporting", "rankscope.evaluation")
"""What a workflow command may import only once its command line has parsed: numpy, pandas with pyarrow,
scipy (numpy.f2py and numpy.testing with scipy.sparse), matplotlib, and rankscope's packages over them."""


@pytest.mark.parametrize("name", ["diagnose", "compare", "rag", "tune", "poolbias", "judge", "collection", "label"])
def test_a_workflow_command_imports_its_workflow_once_its_line_parses(tmp_path: Path, name: str) -> None:
    """Building the parser of a workflow command, and refusing a mistyped option or a bad value, imports
    none of HEAVY nor the workflow (most of a second); a line that parses imports the workflow, whose
    defaults it then holds. The start-up rule of the hub (only the named command's module), one level down."""
    code = (
        "import sys\n"
        "from rankscope.cli import build_parser\n"
        f"HEAVY = {HEAVY!r}\n"
        "def loaded():\n"
        "    workflows = [m for m in sys.modules if m.startswith('rankscope.workflows.')\n"
        "                 and not m.startswith('rankscope.workflows.cli')]\n"
        "    return [m for m in sys.modules if m.split('.')[0] in HEAVY or m.startswith(HEAVY)] + workflows\n"
        f"parser = build_parser([{name!r}])\n"
        f"for bad in (['--no-such-option'], ['--seed', 'x'], ['--dataset']):\n"
        "    try:\n"
        f"        parser.parse_args([{name!r}, *bad])\n"
        "    except SystemExit as exit:\n"
        "        print(exit.code, loaded())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    lines = done.stdout.splitlines()
    assert lines == ["2 []"] * 3 or (name in {"collection", "label"} and lines[:1] == ["2 []"]), done.stderr
    if name in {"collection", "label"}:
        return  # their actions' modules load when they run
    code = (
        "import sys\n"
        "from rankscope.cli import build_parser\n"
        f"args = build_parser([{name!r}]).parse_args([{name!r}])\n"
        "print(args.seed, 'pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.split() == ["0", "True"], done.stderr


def test_evaluate_refuses_a_bad_line_before_its_scoring_loads(tmp_path: Path) -> None:
    """``rankscope evaluate``'s parser (``rankscope.evaluation.cli``) imports none of HEAVY but itself, so a
    mistyped option, a bad value or a missing run is refused at once; a line that parses has the help and
    defaults that heavy modules hold (the metrics' names, the figures' formats) and loads the scoring only
    when it runs."""
    code = (
        "import sys\n"
        "from rankscope.cli import build_parser\n"
        f"HEAVY = {HEAVY!r}\n"
        "own = ('rankscope.evaluation', 'rankscope.evaluation.cli')\n"
        "def loaded():\n"
        "    return [m for m in sys.modules if (m.split('.')[0] in HEAVY or m.startswith(HEAVY)) and m not in own]\n"
        "parser = build_parser(['evaluate'])\n"
        "for bad in (['q', 'r', '--no-such-option'], ['q', 'r', '--seed', 'x'], ['q']):\n"
        "    try:\n"
        "        parser.parse_args(['evaluate', *bad])\n"
        "    except SystemExit as exit:\n"
        "        print(exit.code, loaded())\n"
        "args = parser.parse_args(['evaluate', 'q', 'r', 'ndcg@10', '--seed', '3'])\n"
        "command = parser._subparsers._group_actions[0].choices['evaluate']\n"
        "print(args.inputs, args.seed, args.figure_format, 'ndcg_exp@k' in command.description,\n"
        "      'rankscope.evaluation.score_files' in sys.modules)\n"
    )
    lines = python_in(tmp_path, code).strip().splitlines()
    assert lines == ["2 []"] * 3 + ["['r', 'ndcg@10'] 3 ('svg',) True False"]  # --figures' default: settled


def test_the_workflows_leave_asyncio_to_a_framework_asked_concurrently(tmp_path: Path) -> None:
    """asyncio (with ssl, 20-30 ms of CPU) is imported by the frameworks module only when a framework's
    retriever is asked several queries at once, not by every workflow that imports that module."""
    code = (
        "import sys\n"
        "import rankscope.workflows.diagnose, rankscope.workflows.compare, rankscope.workflows.rag\n"
        "import rankscope.workflows.tune, rankscope.workflows.common.frameworks\n"
        "print('asyncio' in sys.modules)\n"
    )
    assert python_in(tmp_path, code).strip() == "False"


def test_late_settings_are_checked_once_the_line_parses(capsys: pytest.CaptureFixture[str]) -> None:
    """A choice a heavy module holds (``--test``: the significance module's TESTS) is refused as argparse
    refuses any, after the parser settled; its default and the workflow's are applied."""
    from rankscope.cli import build_parser
    from rankscope.evaluation.significance import TESTS

    with pytest.raises(SystemExit) as refused:
        build_parser(["compare"]).parse_args(["compare", "--test", "nope"])
    assert refused.value.code == 2
    assert (
        f"argument --test: invalid choice: 'nope' (choose from {', '.join(map(repr, TESTS))})"
        in capsys.readouterr().err
    )
    args = build_parser(["rag"]).parse_args(["rag", "--test", "t"])
    assert (args.test, args.answer_mode, args.depth) == ("t", "string", 1000)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bm25:k1=-1", "bm25: k1=-1 is not allowed; k1 must be a float in [0, inf)"),
        ("bm25:variant=nope", "bm25: variant=nope is not allowed; variant must be one of okapi, lucene, bm25l, bm25+"),
        ("hybrid:method=x", "hybrid: method=x is not allowed; method must be one of rrf, combsum"),
        ("lucene:b=7", "lucene: b=7 is not allowed; b must be a float in [0, 1]"),
    ],
)
def test_a_bad_spec_is_refused_before_pandas_or_scipy_load(tmp_path: Path, spec: str, message: str) -> None:
    """The whole ``rankscope search`` with a bad spec: one line, exit 2, and neither pandas nor scipy
    imported (each costs most of a second), so the answer comes at once."""
    code = (
        "import sys\n"
        "from rankscope.cli import main\n"
        f"argv = ['search', '--dataset', 'cranfield', '--retriever', {spec!r}, '--out', 'x.trec']\n"
        "status = main(argv)\n"
        "print(status, 'pandas' in sys.modules, 'scipy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.strip() == "2 False False", done.stderr
    assert done.stderr == f"rankscope search: error: {message}\n"
    assert not (tmp_path / "x.trec").exists()


def test_command_table_names_each_module_commands() -> None:
    """rankscope.cli.COMMANDS says which module registers each command; each module registers exactly those."""
    import argparse
    import importlib

    from rankscope.cli import COMMANDS

    for module in set(COMMANDS.values()):
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(subparsers)
        assert sorted(subparsers.choices) == sorted(name for name, owner in COMMANDS.items() if owner == module)
