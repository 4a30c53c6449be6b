"""Fuzz: the labelling page (``rankscope label``) under hostile options, requests and a second process.

Options: a port out of range, a host that does not resolve or is empty, a port another program holds,
a damaged store: one line naming it, exit 2. Requests: bodies that are not small JSON objects, ids and
grades of every wrong type, a missing token or Host: a 4xx with a reason, never a 500, nothing saved.
A second process holding the store's lock makes a label 503 "busy, try again" (nothing lost: the same
label is saved once that process is killed with SIGKILL), and a page server killed with SIGKILL keeps
every label it answered for.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import Outcome, check, run_cli  # tests/fuzz/harness.py

from rankscope.judging.cache import FILE_NAME
from rankscope.workflows.collection import labelling
from rankscope.workflows.collection.labelling import LabelSession
from rankscope.workflows.collection.labels import all_labels
from tests.workflows.collection.labelled import sampled_collection, start_label_page
from tests.workflows.tiny_collection import QUERIES, TEXTS

pytest.importorskip("starlette")
pytest.importorskip("httpx")

TOKEN = "fuzz-token"


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sampled_collection(tmp_path_factory.mktemp("labelfuzz"), TEXTS, QUERIES, depth=3)


@pytest.fixture()
def page(collection: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The page's app over a fresh copy of the collection (starlette's client; server errors become 500s)."""
    import shutil

    from starlette.testclient import TestClient

    from rankscope.workflows.collection.labelpage import make_app

    monkeypatch.setattr(labelling, "BUSY_SECONDS", 0.3)
    folder = tmp_path / "collection"
    shutil.copytree(collection, folder)
    session = LabelSession(folder, "alice")
    with TestClient(make_app(session, TOKEN, ["testserver"]), raise_server_exceptions=False) as client:
        client.folder = folder  # type: ignore[attr-defined]
        client.first = client.get("/api/state").json()["pair"]  # type: ignore[attr-defined]
        yield client
    session.close()


def http_outcome(response: Any) -> Outcome:
    """A response judged like a command: a 4xx or 503 with a reason is the one-line error, another 5xx a crash."""
    if response.status_code >= 500 and response.status_code != 503:
        return Outcome(None, "", "", f"HTTP {response.status_code}: {response.text[:200]}")
    if response.status_code >= 400:
        try:
            reason = response.json()["error"]
        except ValueError:
            reason = response.text
        return Outcome(2, "", f"rankscope label: error: {reason}\n")
    return Outcome(0, "", "")


def labelled(folder: Path) -> list[tuple[str, str, int]]:
    labels = all_labels(folder)
    return list(zip(labels["query_id"], labels["doc_id"], labels["relevance"]))


# --- options: one line, exit 2 ---


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (["--port", "99999"], "--port 99999: a port is a number from 0 to 65535"),
        (["--port", "-1"], "--port -1: a port is a number from 0 to 65535"),
        (["--host", "no-such-host.invalid", "--port", "0"], "--host no-such-host.invalid: cannot be resolved"),
        (["--host", "", "--port", "0"], "--host is empty"),
        (["--host", "999.1.1.1", "--port", "0"], "--host 999.1.1.1: cannot be resolved"),
        (["--host", "192.0.2.1", "--port", "0"], "cannot serve on 192.0.2.1:0: "),  # an address not of this machine
    ],
)
def test_an_address_that_cannot_be_served_is_one_line(collection: Path, options: list[str], fragment: str) -> None:
    check(run_cli(["label", str(collection), "--name", "alice", *options]), "error", fragment)


def test_a_port_in_use_is_named_in_one_line(collection: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        outcome = run_cli(["label", str(collection), "--name", "alice", "--port", str(port)])
    finally:
        taken.close()
    check(outcome, "error", f"cannot serve on 127.0.0.1:{port}: Address already in use; another program listens")


@pytest.mark.parametrize("damage", [b"not a database at all" * 100, os.urandom(4096)], ids=["text", "random bytes"])
def test_a_damaged_store_is_one_line_naming_it(collection: Path, tmp_path: Path, damage: bytes) -> None:
    import shutil

    folder = tmp_path / "collection"
    shutil.copytree(collection, folder)
    (folder / FILE_NAME).write_bytes(damage)
    outcome = run_cli(["label", str(folder), "--name", "alice", "--port", "0"])
    check(outcome, "error", f"{folder / FILE_NAME}: is not a judgments cache")


# --- requests: a reason, never a 500, nothing saved ---

DEEP = "[" * 30_000 + "]" * 30_000
BODIES: dict[str, bytes | dict[str, Any]] = {
    "query_id a list": {"query_id": ["q"], "doc_id": "d", "grade": 1},
    "doc_id an object": {"query_id": "q", "doc_id": {"a": 1}, "grade": 1},
    "ids null": {"query_id": None, "doc_id": None, "grade": 1},
    "ids numbers": {"query_id": 1, "doc_id": 2, "grade": 1},
    "a huge id": {"query_id": "q" * 60_000, "doc_id": "d", "grade": 1},
    "grade a string": {"grade": "2"},
    "grade a float": {"grade": 2.5},
    "grade true": {"grade": True},
    "grade a list": {"grade": [2]},
    "grade 7": {"grade": 7},
    "note a number": {"grade": 1, "note": 5},
    "note too long": {"grade": 1, "note": "x" * 2001},
    "seconds negative": {"grade": 1, "seconds": -1},
    "seconds a string": {"grade": 1, "seconds": "4"},
    "seconds 1e400": b'{IDS, "grade": 1, "seconds": 1e400}',
    "seconds NaN": b'{IDS, "grade": 1, "seconds": NaN}',
    "nested 30,000 deep": DEEP.encode(),
    "nested 100,000 deep": b"[" * 100_000 + b"]" * 100_000,
    "a key twice": b'{IDS, "grade": 1, "grade": 2}',
    "not UTF-8": b"\xff\xfe{}",
    "a lone surrogate": b'{IDS, "grade": 1, "note": "\\ud800"}',
    "a list": b"[1, 2]",
    "null": b"null",
    "empty": b"",
    "truncated": b'{"grade": ',
    "a huge integer": b'{IDS, "grade": ' + b"9" * 5000 + b"}",
}
ONLY_LABEL_READS = {case for case in BODIES if case.startswith(("grade", "note", "seconds"))} - {"seconds NaN"}
"""Valid JSON with the right ids, wrong only in what a label reads: a skip of that pair is fine."""
REASONS = {
    "query_id a list": "query_id and doc_id must be strings",
    "doc_id an object": "query_id and doc_id must be strings",
    "ids null": "query_id and doc_id must be strings",
    "ids numbers": "query_id and doc_id must be strings",
    "a huge id": "is not a pair of this collection's sample",
    "note a number": "a note is text",
    "note too long": "a note is text",
    "seconds negative": "seconds must be a number",
    "seconds a string": "seconds must be a number",
    "seconds 1e400": "seconds must be a number",
    "nested 30,000 deep": "nested deeper",
    "nested 100,000 deep": "larger than 65536 bytes",
    "a key twice": "appears twice",
    "not UTF-8": "UTF-8",
    "a list": "a JSON object",
    "null": "a JSON object",
}


@pytest.mark.parametrize("case", list(BODIES))
@pytest.mark.parametrize("path", ["/api/label", "/api/skip"])
def test_a_hostile_body_is_refused_with_a_reason(page: Any, case: str, path: str) -> None:
    body = BODIES[case]
    ids = {"query_id": page.first["query_id"], "doc_id": page.first["doc_id"]}
    if isinstance(body, dict):  # the first pair's ids unless the case sets them
        body = json.dumps({**ids, **body}).encode()
    body = body.replace(b"IDS", json.dumps(ids).encode()[1:-1])
    response = page.post(path, content=body, headers={"X-Token": TOKEN})
    if path == "/api/skip" and case in ONLY_LABEL_READS:
        check(http_outcome(response), "accepted")
        return
    check(http_outcome(response), "error", REASONS.get(case, ""))
    assert response.status_code == 400 and len(response.text) < 400  # a reason, not an echo of the body
    assert labelled(page.folder) == []


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"X-Token": ""}, 403),
        ({"X-Token": TOKEN + "x"}, 403),
        ({"X-Token": TOKEN, "Host": ""}, 400),
        ({"X-Token": TOKEN, "Host": "evil.example"}, 400),
        ({"X-Token": TOKEN, "Host": "testserver:99999"}, 400),
        ({"X-Token": TOKEN, "Host": "user@testserver"}, 400),
    ],
)
def test_a_change_without_the_token_or_the_host_is_refused(page: Any, headers: dict[str, str], status: int) -> None:
    body = {"query_id": page.first["query_id"], "doc_id": page.first["doc_id"], "grade": 2}
    response = page.post("/api/label", json=body, headers=headers)
    check(http_outcome(response), "error")
    assert response.status_code == status and labelled(page.folder) == []


# --- a second process at once, and kill -9 ---

HOLD_LOCK = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
time.sleep(120)
"""


def test_a_store_locked_by_another_process_is_503_and_the_label_is_saved_once_it_dies(page: Any) -> None:
    pair = page.first
    body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": 2, "note": "kept"}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(page.folder / FILE_NAME)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        busy = page.post("/api/label", json=body, headers={"X-Token": TOKEN})
        check(http_outcome(busy), "error", "busy, try again")
        assert busy.status_code == 503 and page.get("/api/state").json()["pair"] == pair  # still to label
        undo = page.post("/api/undo", json={}, headers={"X-Token": TOKEN})  # nothing to undo: no write, no wait
        assert undo.status_code == 200
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    saved = page.post("/api/label", json=body, headers={"X-Token": TOKEN})  # what the page sends again
    check(http_outcome(saved), "accepted")
    assert labelled(page.folder) == [(pair["query_id"], pair["doc_id"], 2)]
    assert json.loads(all_labels(page.folder)["raw"][0])["note"] == "kept"


def page_token(address: str) -> str:
    with urllib.request.urlopen(address, timeout=30) as response:
        found = re.search(r'name="rankscope-token" content="([^"]+)"', response.read().decode())
    assert found is not None
    return found.group(1)


def call(address: str, path: str, token: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(address + path.lstrip("/"), data=data, headers={"X-Token": token})
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_a_page_server_killed_with_sigkill_keeps_every_label_it_answered_for(collection: Path, tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "collection"
    shutil.copytree(collection, folder)
    process, address = start_label_page(folder)
    try:
        token = page_token(address)
        given = []
        state = call(address, "/api/state", token)
        for grade in (3, 0, 2):
            pair = state["pair"]
            state = call(
                address, "/api/label", token, {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": grade}
            )
            given.append((pair["query_id"], pair["doc_id"], grade))
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    check(Outcome(0, "", ""), "accepted")
    assert sorted(labelled(folder)) == sorted(given)
    again, address = start_label_page(
        folder
    )  # a new server on the same store: the labels are counted, the queue goes on
    try:
        with urllib.request.urlopen(address, timeout=30) as response:
            token = re.search(r'name="rankscope-token" content="([^"]+)"', response.read().decode()).group(1)
        assert call(address, "/api/state", token)["done"] == 3
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(30)
