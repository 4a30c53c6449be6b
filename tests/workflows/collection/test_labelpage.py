"""The labelling page's requests (starlette's test client, no browser): the token, the Host check, what
is served, labels saved at once, skip and undo, refusals that save nothing, and the highlighted words."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import threading
from pathlib import Path

import pytest

from rankscope.judging.cache import FILE_NAME
from rankscope.workflows.collection.labelling import LabelSession, highlight_spans
from rankscope.workflows.collection.labels import all_labels
from tests.needs import needs
from tests.workflows.collection.labelled import sampled_collection
from tests.workflows.tiny_collection import QUERIES, TEXTS

pytestmark = needs("starlette", "httpx")


@pytest.fixture()
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from starlette.testclient import TestClient

    from rankscope.workflows.collection import labelling
    from rankscope.workflows.collection.labelpage import make_app

    monkeypatch.setattr(labelling, "BUSY_SECONDS", 0.2, raising=False)  # a locked store answers 503 after 0.2 s
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3)
    session = LabelSession(folder, "alice")
    with TestClient(make_app(session, "secret-token", ["testserver"])) as test_client:
        test_client.folder = folder  # type: ignore[attr-defined]
        yield test_client
    session.close()


def post(client, path: str, body: object, token: str = "secret-token"):
    return client.post(path, json=body, headers={"X-Token": token})


def test_the_page_carries_its_token_and_no_collection_text(client) -> None:
    page = client.get("/")
    assert page.status_code == 200 and '<meta name="rankscope-token" content="secret-token">' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    first = client.get("/api/state").json()["pair"]
    assert first["text"] not in page.text and first["query"] not in page.text  # texts come as JSON only
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    for path in ("/static/labelpage.py", "/static/..%2Flabelling.py", "/doc/..%2F..%2Fetc%2Fpasswd", "/doc/nope"):
        assert client.get(path).status_code == 404, path
    assert client.get("/api/state", headers={"Host": "evil.example"}).status_code == 400


def test_changes_need_the_token_and_are_saved_at_once(client) -> None:
    state = client.get("/api/state").json()
    pair = state["pair"]
    body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": 2, "note": "<b>x</b>", "seconds": 4.2}
    assert post(client, "/api/label", body, token="").status_code == 403
    assert post(client, "/api/label", body, token="wrong-token-").status_code == 403
    assert client.get("/api/label").status_code == 405
    assert len(all_labels(client.folder)) == 0
    after = post(client, "/api/label", body).json()
    saved = all_labels(client.folder)  # read by another connection: committed already
    assert list(zip(saved["query_id"], saved["doc_id"], saved["relevance"], saved["source"])) == [
        (pair["query_id"], pair["doc_id"], 2, "human:alice")
    ]
    assert (after["done"], after["can_undo"], after["mean_seconds"]) == (1, True, 4.2)
    assert after["pair"]["doc_id"] != pair["doc_id"] or after["pair"]["query_id"] != pair["query_id"]
    for bad in ({**body, "grade": 4}, {**body, "grade": True}, {**body, "doc_id": "nope"}, {**body, "seconds": "x"}):
        response = post(client, "/api/label", bad)
        assert response.status_code == 400 and response.json()["error"]
    assert client.post("/api/label", content=b"not json", headers={"X-Token": "secret-token"}).status_code == 400
    assert len(all_labels(client.folder)) == 1


def test_skip_and_undo_order_the_queue(client) -> None:
    state = client.get("/api/state").json()
    total, first = state["total"], state["pair"]
    key = {"query_id": first["query_id"], "doc_id": first["doc_id"]}
    second = post(client, "/api/skip", key).json()["pair"]
    assert (second["query_id"], second["doc_id"]) != (first["query_id"], first["doc_id"])
    labelled = post(
        client, "/api/label", {"query_id": second["query_id"], "doc_id": second["doc_id"], "grade": 0}
    ).json()
    assert labelled["skipped"] == 1 and labelled["done"] == 1
    undone = post(client, "/api/undo", {}).json()
    assert (undone["pair"]["query_id"], undone["pair"]["doc_id"]) == (second["query_id"], second["doc_id"])
    assert undone["done"] == 0 and not undone["can_undo"] and len(all_labels(client.folder)) == 0
    seen = []
    state = undone
    while state["pair"] is not None:  # every sampled pair once, the skipped one last
        pair = state["pair"]
        seen.append((pair["query_id"], pair["doc_id"]))
        state = post(client, "/api/label", {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": 1}).json()
    assert len(seen) == total == len(set(seen)) and seen[-1] == (first["query_id"], first["doc_id"])
    assert state["done"] == total and len(all_labels(client.folder)) == total


def test_highlighted_words_are_the_query_terms_as_the_analyzer_sees_them() -> None:
    text = "Closures close over variables; a closure's cells. The enclosure is unrelated."
    words = [text[a:b] for a, b in highlight_spans("how do closures work", text)]
    assert words == ["Closures", "closure"]  # stemmed matches, stopwords (how, do) never marked
    assert highlight_spans("the of", text) == []
    assert all(re.fullmatch(r"\w+", w) for w in words)


def test_a_busy_store_answers_503_and_the_same_label_is_saved_once_it_is_free(client) -> None:
    pair = client.get("/api/state").json()["pair"]
    body = {"query_id": pair["query_id"], "doc_id": pair["doc_id"], "grade": 3}
    holder = sqlite3.connect(client.folder / FILE_NAME, isolation_level=None)  # another process's lock
    holder.execute("BEGIN EXCLUSIVE")
    refused = post(client, "/api/label", body)
    assert (refused.status_code, refused.json(), refused.headers["retry-after"]) == (
        503,
        {"error": "busy, try again"},
        "1",
    )
    assert client.get("/api/state").json()["pair"] == pair  # still shown: nothing was saved
    holder.rollback()
    holder.close()
    saved = post(client, "/api/label", body)
    assert saved.status_code == 200 and saved.json()["done"] == 1
    assert list(all_labels(client.folder)["relevance"]) == [3]


DEEP = "[" * 30_000 + "]" * 30_000


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"query_id": ["q"], "doc_id": "d", "grade": 1}, "query_id and doc_id must be strings"),
        ({"query_id": "q", "doc_id": {"d": 1}, "grade": 1}, "query_id and doc_id must be strings"),
        ({"query_id": "q" * 60_000, "doc_id": "d", "grade": 1}, "is not a pair of this collection's sample"),
        (DEEP.encode(), "nested deeper than Python's recursion limit"),
        (b"[" * 100_000 + b"]" * 100_000, "the body is larger than 65536 bytes"),
        (b'{"query_id": "q", "query_id": "r"}', "key 'query_id' appears twice"),
        (b"\xff\xfe{}", "the body must be UTF-8 JSON"),
        (b"[1, 2]", "the body must be a JSON object"),
        (b" " * 70_000 + b"{}", "the body is larger than 65536 bytes"),
    ],
)
def test_a_hostile_body_is_400_with_its_reason(client, body: object, reason: str) -> None:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = client.post("/api/label", content=content, headers={"X-Token": "secret-token"})
    assert response.status_code == 400 and reason in response.json()["error"]
    assert len(response.json()["error"]) < 300  # a huge id is not echoed whole
    assert len(all_labels(client.folder)) == 0


@pytest.mark.parametrize(
    ("host", "status"),
    [("", 400), ("testserver", 200), ("TESTSERVER:80", 200), ("evil.example", 400), ("testserver@evil", 400)],
)
def test_the_host_header_must_name_the_address_served(client, host: str, status: int) -> None:
    assert client.get("/api/state", headers={"Host": host}).status_code == status


def test_the_names_a_page_accepts_for_each_address_served() -> None:
    from rankscope.workflows.collection.labelpage import allowed_hosts, request_host

    everywhere = allowed_hosts("0.0.0.0")
    assert {"127.0.0.1", "localhost", "::1", socket.gethostname().lower()} <= everywhere
    assert "evil.example" not in everywhere
    assert allowed_hosts("127.0.0.1") == allowed_hosts("localhost") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("[::1]") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("192.0.2.7") == {"192.0.2.7"}
    assert [request_host(h) for h in ("[::1]:8765", "LocalHost:1", "", None, "a:b", "x:99999", "a/b")] == [
        "::1",
        "localhost",
        None,
        None,
        None,
        None,
        None,
    ]


def test_an_address_that_cannot_be_served_is_named_in_one_line() -> None:
    from rankscope.workflows.collection.labelpage import listening
    from rankscope.workflows.collection.layout import CollectionError

    with pytest.raises(CollectionError, match=r"--port 99999: a port is a number from 0 to 65535"):
        listening("127.0.0.1", 99999)
    with pytest.raises(CollectionError, match=r"--host no-such-host\.invalid: cannot be resolved"):
        listening("no-such-host.invalid", 0)
    taken = listening("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(CollectionError, match=rf"cannot serve on 127\.0\.0\.1:{port}: .*another program listens"):
            listening("127.0.0.1", port)
    finally:
        taken.close()


def test_a_post_does_not_read_the_store_back_and_the_kept_state_is_the_stored_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankscope.judging.cache import JudgmentCache

    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3)
    session = LabelSession(folder, "alice")
    reads = []
    original = JudgmentCache.labelled
    monkeypatch.setattr(JudgmentCache, "labelled", lambda self, key: reads.append(key) or original(self, key))
    state = session.state()
    for step in range(12):  # labels, a re-grade, skips and undos in a fixed mix
        pair = state["pair"]
        if pair is None:
            break
        if step % 5 == 3:
            session.skip(pair["query_id"], pair["doc_id"])
        elif step % 5 == 4:
            session.undo()
        else:
            session.label(pair["query_id"], pair["doc_id"], step % 4, "", 0.7 * step)
        state = session.state()
    assert reads == []  # the session kept its state: no post read the person's labels back
    session.close()
    again = LabelSession(folder, "alice")  # a new session reads the store: the same counts
    fresh = again.state()
    again.close()
    assert {k: fresh[k] for k in ("done", "total", "mean_seconds")} == {
        k: state[k] for k in ("done", "total", "mean_seconds")
    }
    assert state["done"] == len(all_labels(folder)) > 3


def test_the_next_pair_is_made_before_its_key_is_pressed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.workflows.collection import labelling

    made_in: dict[tuple[str, str], str] = {}
    original = labelling.highlight_spans

    def spy(query: str, text: str) -> list[tuple[int, int]]:
        made_in.setdefault((query, text), threading.current_thread().name)
        return original(query, text)

    monkeypatch.setattr(labelling, "highlight_spans", spy)
    folder = sampled_collection(tmp_path, TEXTS, QUERIES, depth=3)
    session = LabelSession(folder, "alice")
    state = session.state()
    for _ in range(3):  # label in the sample's order: each next pair was made while the person read the last
        pair = state["pair"]
        session.label(pair["query_id"], pair["doc_id"], 1)
        state = session.state()
        shown = state["pair"]
        assert made_in[(shown["query"], shown["text"])].startswith("rankscope-label-ahead")
        assert shown["spans"] == original(shown["query"], shown["text"])
    skipped = state["pair"]
    session.skip(skipped["query_id"], skipped["doc_id"])  # off the order: made now, and still right
    after = session.state()["pair"]
    assert (after["query_id"], after["doc_id"]) != (skipped["query_id"], skipped["doc_id"])
    assert after["spans"] == original(after["query"], after["text"])
    session.close()
