"""How long a user waits for each workflow command: whole cold processes, split into phases.

Run: ``RANKSCOPE_DATA=FOLDER python benchmarks/bench_workflows.py [--datasets cranfield cisi]
[--repeats 3] [--commands diagnose compare rag tune] [--json FILE]``

Each command runs ``--repeats`` times as a fresh ``python`` process with ``--out`` (a new folder each
time) and ``--quiet``, as a user types it. The process runs under a small runner (this file with
``--child``) that sets ``RANKSCOPE_PHASES`` (:mod:`rankscope.core.phases`: the workflows mark load,
index, search, evaluate, report and figures) and counts every import as the phase ``import``
wherever it happens (a module imported lazily inside the search counts as import, not search).
``cpu`` is the process's user + system CPU seconds: on a busy machine the wall time stretches with the
load, the CPU time much less, so compare versions by runs side by side or by CPU. ``start`` is the
interpreter's own start-up and exit (the wall time outside the runner's phases), ``other`` the
time inside the command that no phase claims (argument parsing, tables, diagnosis logic). The table
gives the median of each column over the repeats, so the phases need not add up to the wall
time exactly.

Before timing, the package's bytecode is compiled (:func:`compile_bytecode`), as ``pip install`` does for
an installed package: with ``PYTHONDONTWRITEBYTECODE=1`` (set on some machines) an editable install is
compiled from source in every process, 0.2-0.3 s of CPU more per command than a user's install pays.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

COMMANDS: dict[str, list[str]] = {
    "diagnose": ["diagnose", "--retriever", "bm25", "--vs", "tfidf"],
    "compare": ["compare", "--retrievers", "tfidf", "bm25"],
    "rag": ["rag", "--chunking", "words:200:50", "sentences:300", "--retrievers", "bm25"],
    "tune": ["tune", "--folds", "5"],
}
"""The commands timed, as issue 30 states them: diagnose bm25 vs tfidf, compare tfidf and bm25, rag with
two chunkings (whole documents are always added) x bm25, tune's default grid with 5 folds."""

PHASES = ("start", "import", "load", "index", "search", "evaluate", "report", "figures", "other")


def child(phase_file: str, argv: list[str]) -> NoReturn:
    """Run ``rankscope ARGV`` in this process with every import counted as the phase ``import``."""
    import builtins
    import importlib

    os.environ["RANKSCOPE_PHASES"] = phase_file
    from rankscope.core import phases

    importing = [False]

    def timed(function):
        def wrapper(*args, **kwargs):
            if importing[0]:
                return function(*args, **kwargs)
            importing[0] = True
            try:
                with phases.phase("import"):
                    return function(*args, **kwargs)
            finally:
                importing[0] = False

        return wrapper

    builtins.__import__ = timed(builtins.__import__)
    importlib.import_module = timed(importlib.import_module)
    with phases.phase("other"):
        from rankscope.cli import leave, main

        code = main(argv)
    leave(code)  # as the rankscope program ends (rankscope.cli.run)


def compile_bytecode() -> None:
    """Write the ``__pycache__`` of every package folder of the checkout this script is in (``rankscope/``
    and the folders the install maps into it: ``retrieval/``, ``corpora/``, ``evaluation/``), where the
    imports look for it."""
    root = Path(__file__).resolve().parents[1]
    for folder in sorted(root.iterdir()):
        if folder.name not in {"tests", "benchmarks"} and (folder / "__init__.py").is_file():
            if not compileall.compile_dir(folder, quiet=1):
                sys.exit(f"bench_workflows: {folder} does not compile")


def run_once(argv: list[str], out: Path) -> dict[str, float]:
    """One cold process of ``rankscope ARGV --out OUT --quiet``: wall seconds and each phase's."""
    phase_file = out.with_suffix(".phases.json")
    command = [sys.executable, __file__, "--child", str(phase_file), "--", *argv, "--out", str(out), "--quiet"]
    env = {**os.environ, "RANKSCOPE_QUIET": "1"}
    env.pop("RANKSCOPE_PHASES", None)  # the child sets it after its first line
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode != 0:
        sys.exit(f"bench_workflows: {' '.join(argv)} failed ({done.returncode}):\n{done.stderr}")
    seconds = json.loads(phase_file.read_text(encoding="utf-8"))
    return {"wall": wall, "cpu": cpu, "start": wall - sum(seconds.values()), **seconds}


def measure(datasets: list[str], commands: list[str], repeats: int, folder: Path) -> list[dict[str, object]]:
    """The median of each column over ``repeats`` runs of every command on every dataset."""
    rows: list[dict[str, object]] = []
    for dataset in datasets:
        for name in commands:
            argv = [*COMMANDS[name], "--dataset", dataset]
            runs = [run_once(argv, folder / f"{dataset}-{name}-{i}") for i in range(repeats)]
            row: dict[str, object] = {"command": name, "dataset": dataset}
            for column in ("wall", "cpu", *PHASES):
                row[column] = statistics.median(run.get(column, 0.0) for run in runs)
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def _line(row: dict[str, object]) -> str:
    numbers = " | ".join(f"{row[c]:.2f}" for c in ("wall", "cpu", *PHASES))  # type: ignore[str-format]
    return f"| {row['command']} | {row['dataset']} | {numbers} |"


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[4:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cranfield", "cisi"])
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=list(COMMANDS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    compile_bytecode()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}; median of {args.repeats} runs, s")
    print(f"| command | dataset | wall | cpu | {' | '.join(PHASES)} |")
    print(f"|---|---|{'---:|' * (len(PHASES) + 2)}")
    with tempfile.TemporaryDirectory() as tmp:
        rows = measure(args.datasets, args.commands, args.repeats, Path(tmp))
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
