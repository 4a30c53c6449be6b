"""Fuzz: inputs that crashed or hung (issue 28 items 7 and 8), each now one line and exit 2, or bounded.

Tracebacks: JSON nested 100,000 deep (corpus, meta.json, answers), a lone surrogate or a 5,000-digit
integer ``_id``, a truncated ``corpus.jsonl.gz`` given to ``index``, a ``docs.npy`` that is an
``.npz``, ``faiss_index=ivf,nlist=1000`` on 200 documents, ``--k 2**63``, ``--seed -1``, grids of
10^8 and 10^12 points, ``--scheduler`` at an HTTP server, at a port that never answers or answers
garbage, and a scheduler killed in the middle of ``tune`` (real servers on 127.0.0.1, no mocks).
Hangs: ``--trials 10^23``, a question with 100,000 answers, a catastrophic regex answer. DPR's
regex mode on ``(?a)``, ``(?L)`` and deep nesting matches nothing, as docs/rag.md promises.
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from harness import check, run_call, run_cli  # tests/fuzz/harness.py

from rankscope.core import scheduler as scheduler_module
from rankscope.corpora import answers as answers_module
from rankscope.corpora.answers import AnswerMatcher, has_answer
from rankscope.corpora.qa_files import read_retrieval_results

N_DOCS = 200
WORDS = "wing flow shock boundary layer heat transfer pressure drag lift".split()
DEEP = "[" * 100_000 + "]" * 100_000


def _docs() -> list[dict[str, str]]:
    rng = np.random.default_rng(0)
    return [{"_id": f"d{i}", "title": "", "text": " ".join(rng.choice(WORDS, size=8))} for i in range(N_DOCS)]


def _folder(root: Path, corpus_tail: str = "") -> Path:
    """A BEIR folder of 200 documents and 10 queries; ``corpus_tail`` appended to its corpus.jsonl."""
    (root / "qrels").mkdir(parents=True)
    lines = "".join(json.dumps(doc) + "\n" for doc in _docs())
    (root / "corpus.jsonl").write_text(lines + corpus_tail, encoding="utf-8")
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{i}", "text": WORDS[i]}) + "\n" for i in range(10))
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{3 * i}\t1\n" for i in range(10))
    )
    return root


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("crashes") / "data")


# --- JSON the standard library raises on: depth, huge integers, lone surrogates ---------------------------

CORPUS_TAILS = {
    "nested 100,000 deep": ('{"_id": "x", "text": ' + DEEP + "}\n", "line 201: invalid JSON (arrays or objects nested"),
    "lone surrogate id": (
        '{"_id": "\\ud800", "text": "a b"}\n',
        "line 201: invalid JSON (string '\\ud800' holds a lone",
    ),
    "5000-digit integer id": (
        '{"_id": ' + "9" * 5000 + ', "text": "a b"}\n',
        "line 201: invalid JSON (an integer of 5000 digits",
    ),
}


@pytest.mark.parametrize("name", CORPUS_TAILS)
@pytest.mark.parametrize("command", ["search", "index"])
def test_corpus_json_python_cannot_read(tmp_path: Path, name: str, command: str) -> None:
    tail, problem = CORPUS_TAILS[name]
    data = _folder(tmp_path / "data", tail)
    corpus = data / "corpus.jsonl"
    if command == "search":
        argv = ["search", "--dataset", str(data), "--retriever", "bm25", "--out", str(tmp_path / "r.trec")]
    else:
        argv = ["index", "--corpus", str(corpus), "--index-dir", str(tmp_path / "index")]
    check(run_cli(argv), "error", f"{corpus}, {problem}")


def test_nested_meta_json_of_an_index(clean: Path, tmp_path: Path) -> None:
    index = tmp_path / "index"
    assert run_cli(["index", "--corpus", str(clean / "corpus.jsonl"), "--index-dir", str(index)]).code == 0
    (index / "meta.json").write_text(DEEP)
    argv = ["search", "--dataset", str(clean), "--retriever", "bm25", "--index-dir", str(index)]
    check(run_cli([*argv, "--out", str(tmp_path / "r.trec")]), "error", f"{index / 'meta.json'}: not valid JSON")


def test_nested_answers_files(clean: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"query_id": "q0", "text": "wing", "answers": ["wing"]}\n{"query_id": "q1", "answers": ' + DEEP + "}\n"
    )
    argv = ["rag", "--dataset", str(clean), "--chunking", "words:100:25", "--retrievers", "bm25", "--budget", "100"]
    check(run_cli([*argv, "--answers", str(questions)]), "error", f"{questions}, line 2: invalid JSON (arrays")
    results = tmp_path / "results.json"
    results.write_text(DEEP)
    check(run_call(lambda: read_retrieval_results(results)), "error", f"{results}: invalid JSON (arrays")


def test_truncated_gzip_corpus_given_to_index(clean: Path, tmp_path: Path) -> None:
    whole = gzip.compress((clean / "corpus.jsonl").read_bytes())
    corpus = tmp_path / "corpus.jsonl.gz"
    corpus.write_bytes(whole[: len(whole) // 2])
    argv = ["index", "--corpus", str(corpus), "--index-dir", str(tmp_path / "index")]
    check(run_cli(argv), "error", f"{corpus}: not a valid gzip file")
    assert not (tmp_path / "index").exists()


# --- vectors and FAISS -----------------------------------------------------------------------------------


def _embeddings(folder: Path, npz: bool = False) -> Path:
    rng = np.random.default_rng(1)
    folder.mkdir()
    docs = rng.normal(size=(N_DOCS, 4))
    if npz:
        with open(folder / "docs.npy", "wb") as out:  # numpy.savez under the .npy name
            np.savez(out, docs=docs)
    else:
        np.save(folder / "docs.npy", docs)
    (folder / "docs.ids").write_text("".join(f"d{i}\n" for i in range(N_DOCS)))
    np.save(folder / "queries.npy", rng.normal(size=(10, 4)))
    (folder / "queries.ids").write_text("".join(f"q{i}\n" for i in range(10)))
    return folder


def test_docs_npy_that_is_an_npz(clean: Path, tmp_path: Path) -> None:
    emb = _embeddings(tmp_path / "emb", npz=True)
    argv = ["search", "--dataset", str(clean), "--retriever", f"dense:model=precomputed,embeddings={emb}"]
    check(run_cli([*argv, "--out", str(tmp_path / "r.trec")]), "error", f"{emb / 'docs.npy'}: a .npz archive")


def test_ivf_with_more_lists_than_documents(clean: Path, tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    emb = _embeddings(tmp_path / "emb")
    spec = f"dense:model=precomputed,embeddings={emb},faiss_index=ivf,nlist=1000"
    argv = ["search", "--dataset", str(clean), "--retriever", spec, "--out", str(tmp_path / "r.trec")]
    check(run_cli(argv), "error", "faiss_index=ivf with nlist=1000 needs at least 1000 documents, got 200")


# --- numbers beyond what the code can hold, sizes that would run for days ------------------------------------

ARGUMENTS = {
    "search --k 2**63": (
        ["search", "--retriever", "bm25", "--k", str(2**63)],
        "k must be an int in [1, 9223372036854775807]",
    ),
    "compare --depth 2**63": (
        ["compare", "--retrievers", "bm25", "tfidf", "--depth", str(2**63)],
        "--depth must be at most 9223372036854775807, got 9223372036854775808",
    ),
    "compare --seed -1": (
        ["compare", "--retrievers", "bm25", "tfidf", "--seed", "-1"],
        "seed must be an int in [0, 4294967295]",
    ),
    "compare --seed 2**32": (
        ["compare", "--retrievers", "bm25", "tfidf", "--seed", str(2**32)],
        "seed=4294967296 is not allowed",
    ),
    "tune 10^8 k1 values": (
        ["tune", "--k1", "0:100000000:1"],
        "100,000,001 values, more than the 100,000 a grid may hold",
    ),
    "tune 1001 x 1001 grid": (
        ["tune", "--k1", "0:1000:1", "--b", "0:1:0.001"],
        "1001 x 1001 = 1,002,001 points is more than",
    ),
    "optuna 10^12 values": (
        ["tune", "--search", "optuna", "--param", "k1=0:1000000:0.000001"],
        "1,000,000,000,001 values, more than the 100,000",
    ),
    "optuna 10^23 trials": (
        ["tune", "--search", "optuna", "--trials", "99999999999999999999999"],
        "--trials must be at least 1 and at most 100,000",
    ),
}


@pytest.mark.parametrize("name", ARGUMENTS)
def test_argument_out_of_range(clean: Path, tmp_path: Path, name: str) -> None:
    argv, problem = ARGUMENTS[name]
    out = tmp_path / ("r.trec" if argv[0] == "search" else "out")
    check(run_cli([argv[0], "--dataset", str(clean), *argv[1:], "--out", str(out)]), "error", problem)
    assert not out.exists()


# --- schedulers that are not schedulers, and one killed mid-run --------------------------------------------


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(scheduler_module, "CONNECT_TIMEOUT", 2)
    monkeypatch.setattr(scheduler_module, "ANSWER_TIMEOUT", 2)


@pytest.fixture
def http_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (it reads Dask's handshake as a request line and waits for more)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # stderr is the command's, under test
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def socket_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """A raw TCP server on 127.0.0.1: ``silent`` accepts and never answers (a black hole), ``garbage``
    answers 8 bytes of 0xff (a frame length of exabytes to Dask's reader) and closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if request.param == "garbage":
                connection.sendall(b"\xff" * 8 + b"\x00" * 64)
            held.append(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


def _compare_on(clean: Path, tmp_path: Path, address: str) -> list[str]:
    return [
        "compare",
        "--dataset",
        str(clean),
        "--retrievers",
        "bm25",
        "tfidf",
        "--scheduler",
        address,
        "--out",
        str(tmp_path / "o"),
    ]


def test_scheduler_address_of_an_http_server(
    clean: Path, tmp_path: Path, short_timeouts: None, http_server: str
) -> None:
    outcome = run_cli(_compare_on(clean, tmp_path, http_server))
    check(
        outcome, "error", f"the server at {http_server} accepted the connection but did not answer as a Dask scheduler"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("socket_server", ["silent", "garbage"], indirect=True)
def test_scheduler_address_that_never_answers_or_answers_garbage(
    clean: Path, tmp_path: Path, short_timeouts: None, socket_server: str
) -> None:
    outcome = run_cli(_compare_on(clean, tmp_path, socket_server))
    check(outcome, "error", socket_server)
    assert (
        "accepted the connection but did not answer" in outcome.err or "cannot reach the Dask scheduler" in outcome.err
    )


def _ask(address: str, op: str) -> dict:
    """The reply of the scheduler at ``address`` to ``op`` (over Dask's own protocol, within 5 s)."""
    import asyncio

    from distributed.comm import connect

    async def ask() -> dict:
        comm = await connect(address, timeout=5)
        try:
            await comm.write({"op": op, "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    return asyncio.run(asyncio.wait_for(ask(), 5))


@pytest.mark.slow
def test_scheduler_killed_in_the_middle_of_tune(clean: Path, tmp_path: Path) -> None:
    """A real ``dask scheduler`` and worker in processes of their own; the scheduler is SIGKILLed once it
    has grid tasks on its worker: tune says so in one line, exit 2, and writes nothing."""
    pytest.importorskip("distributed")
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    scheduler = subprocess.Popen(
        [*dask, "--host", "127.0.0.1", "--port", str(port), "--dashboard-address", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-nanny"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    killed = threading.Event()

    def kill_when_busy() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and scheduler.poll() is None:
            try:
                if sum(len(tasks) for tasks in _ask(address, "processing").values()) > 0:
                    os.kill(scheduler.pid, signal.SIGKILL)
                    killed.set()
                    return
            except (OSError, TimeoutError):
                pass  # not up yet
            time.sleep(0.2)

    try:
        for _ in range(100):  # the worker has joined
            try:
                if _ask(address, "identity")["workers"]:
                    break
            except (OSError, TimeoutError):
                pass
            time.sleep(0.3)
        killer = threading.Thread(target=kill_when_busy, daemon=True)
        killer.start()
        out = tmp_path / "tuned"
        argv = ["tune", "--dataset", str(clean), "--k1", "0.1:3.0:0.05", "--b", "0:1:0.05", "--scheduler", address]
        outcome = run_cli([*argv, "--out", str(out)])
        killer.join()
        assert killed.is_set()
        check(outcome, "error", f"lost the Dask scheduler at {address} while working")
        assert not out.exists()
    finally:
        for process in (scheduler, worker):
            process.kill()
            process.wait()


# --- answers: regex flags and nesting, catastrophic patterns, 100,000 answers -----------------------------------

UNCOMPILABLE = {"(?a)": "(?a)wing", "(?L)": "(?L)wing", "nested 5,000 deep": "(" * 5000 + "wing" + ")" * 5000}


@pytest.mark.parametrize("name", UNCOMPILABLE)
def test_regex_answer_that_does_not_compile_matches_nothing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("regex")
    monkeypatch.setattr(answers_module, "_WARNED", set())
    with pytest.warns(UserWarning, match="^answer pattern .* does not compile"):  # once: issue 50 item 9
        check(run_call(lambda: has_answer([UNCOMPILABLE[name]], "wing flow", "regex")), "accepted")
    assert has_answer([UNCOMPILABLE[name]], "wing flow", "regex") is False
    assert has_answer([UNCOMPILABLE[name], "w.ng"], "wing flow", "regex") is True  # the others still count


def _questions(path: Path, answers_of_q3: list[str]) -> Path:
    rows = [
        {"query_id": f"q{i}", "text": WORDS[i], "answers": answers_of_q3 if i == 3 else [WORDS[i]]} for i in range(10)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_catastrophic_regex_answer_is_refused_within_its_time_limit(
    clean: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("regex")
    monkeypatch.setattr(answers_module, "PATTERN_SECONDS", 0.2)
    questions = _questions(tmp_path / "q.jsonl", ["(.*){1,32000}[!?]"])
    argv = ["rag", "--dataset", str(clean), "--chunking", "words:100:25", "--retrievers", "bm25", "--budget", "100"]
    outcome = run_cli([*argv, "--answers", str(questions), "--answer-mode", "regex", "--out", str(tmp_path / "o")])
    check(outcome, "error", "question 'q3', passage ")
    assert "answer pattern '(.*){1,32000}[!?]' searched a passage of" in outcome.err


def test_a_question_with_100000_answers_is_refused(clean: Path, tmp_path: Path) -> None:
    questions = _questions(tmp_path / "q.jsonl", [f"answer {i}" for i in range(100_000)])
    argv = ["rag", "--dataset", str(clean), "--chunking", "words:100:25", "--retrievers", "bm25", "--budget", "100"]
    outcome = run_cli([*argv, "--answers", str(questions), "--out", str(tmp_path / "o")])
    check(outcome, "error", f"{questions}, line 4: 100,000 answers, more than the 1,000 a question may have")


def _alone(answer: str, passage: str, mode: str) -> bool:
    """The reference: one answer looked for as docs/rag.md words each rule, written out here."""
    import regex

    from rankscope.corpora.answers import dpr_tokens, squad_normalize

    if mode == "string":
        tokens = dpr_tokens(unicodedata.normalize("NFD", passage))
        wanted = dpr_tokens(unicodedata.normalize("NFD", answer))
        return any(tokens[i : i + len(wanted)] == wanted for i in range(len(tokens) - len(wanted) + 1))
    if mode == "substring":
        return squad_normalize(answer) in squad_normalize(passage)
    try:
        pattern = regex.compile(unicodedata.normalize("NFD", answer), flags=regex.I | regex.U | regex.M)
    except (regex.error, ValueError):
        return False
    return pattern.search(unicodedata.normalize("NFD", passage)) is not None


@pytest.mark.parametrize("mode", ["string", "regex", "substring"])
def test_one_pass_per_passage_finds_what_each_answer_alone_finds(mode: str) -> None:
    """The matcher that reads a passage once for 1,000 answers finds exactly the answers the rule finds
    one at a time (seeded answers of 1-3 words, some present, some not, some regex)."""
    pytest.importorskip("regex")
    rng = np.random.default_rng(5)
    passages = [" ".join(rng.choice(WORDS, size=30)) + ". The U.S. wing-flow" for _ in range(5)]
    answers = [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 4)))) for _ in range(990)]
    answers += ["U.S.", "US", "wing-flow", "w.ng fl", "(?a)x", "(", "", "the", "Drag", "LIFT SHOCK"]
    matcher = AnswerMatcher(answers, mode)
    for passage in passages:
        expected = [answer for answer in answers if _alone(answer, passage, mode)]
        assert matcher.found(passage) == expected
        assert 0 < len(expected) < len(answers)
