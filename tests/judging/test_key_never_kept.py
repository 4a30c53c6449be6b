"""The API key is never stored (issue 50 item 1): a server that echoes the request's ``Authorization``
header, plain and base64-encoded, in ok replies, invalid replies, bodies that are no completion and
error bodies; then every file under the cache, output and report folders, the exported JSONL and the
terminal output are searched for the key in every spelling: none may hold it.

Before the fix only error bodies were scrubbed: the ok and invalid replies reached the cache's ``raw``
column and the exported JSONL with the key in them (this test found it in ``judgments.sqlite`` and
``export.jsonl``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from rankscope.cli import main
from rankscope.judging import make_judge
from rankscope.judging.cache import JudgmentCache
from rankscope.judging.kept_text import MASK, KeptText
from rankscope.judging.stub_server import Request, Response, StubServer

KEY = "sk-live-4f9Qz81mXc0pLw7RbT2yVn5K"


def spellings(secret: str) -> dict[str, bytes]:
    """The key as a search for it looks for it: plain, and base64 (standard and URL-safe) of the key, of
    the header value ``Bearer <key>`` and of Basic authentication's ``user:<key>``."""
    found = {"plain": secret.encode()}
    for name, text in (("key", secret), ("bearer", f"Bearer {secret}"), ("basic", f"user:{secret}")):
        found[f"base64 {name}"] = base64.b64encode(text.encode()).rstrip(b"=")
        found[f"urlsafe {name}"] = base64.urlsafe_b64encode(text.encode()).rstrip(b"=")
    return found


def echoing(request: Request) -> str | Response:
    """Quotes the Authorization header in each of the ways a server can: chosen by the prompt's hash."""
    header = request.headers["authorization"]
    key = header.removeprefix("Bearer ")
    coded = {
        "b64": base64.b64encode(header.encode()).decode(),
        "basic": base64.b64encode(f"user:{key}".encode()).decode(),
        "safe": base64.urlsafe_b64encode(f"x{key}".encode()).decode(),  # the key off a 3-byte boundary
    }
    way = hashlib.sha256(request.prompt.encode()).digest()[0] % 5
    if way == 0:  # an ok reply repeating its input
        return f"You sent {header} ({coded['b64']}, {coded['basic']}).\nFinal score: 2"
    if way == 1:  # an invalid reply
        return f"headers: authorization={header}; dump={coded['safe']}"
    if way == 2:  # a body that is no chat completion
        return Response(200, json.dumps({"echo": {"Authorization": header, "b64": coded["b64"]}}).encode())
    if way == 3:  # an error body
        return Response(500, json.dumps({"error": f"refused {header} {coded['basic']}"}).encode())
    return f"Final score: 1 {key}"  # the grade line itself quoting the key


def hits(folder: Path, secret: str) -> list[str]:
    """Every (file, spelling) under ``folder`` whose bytes hold the secret."""
    return [
        f"{path} ({name})"
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        for name, spelled in spellings(secret).items()
        if spelled in path.read_bytes()
    ]


def test_no_file_the_judge_writes_holds_the_key(tmp_path: Path, beir, monkeypatch, capsys) -> None:
    data = beir(documents=40, queries=8)
    cache, out = tmp_path / "cache", tmp_path / "out"
    monkeypatch.setenv("RS_LEAK_KEY", KEY)
    with StubServer(reply=echoing) as server:
        spec = f"openai:model=m,base_url={server.url},key_env=RS_LEAK_KEY,retries=0,timeout=10"
        argv = ["judge", "--dataset", str(data), "--systems", "bm25", "tfidf", "--judge", spec, "--quiet"]
        code = main([*argv, "--judgments", str(cache), "--out", str(out)])
        printed = capsys.readouterr()
        sent = [r.headers["authorization"] for r in server.requests]
    assert code == 0, printed.err
    assert len(sent) > 20 and set(sent) == {f"Bearer {KEY}"}  # every request carried the key, and was echoed
    judge = make_judge(spec)
    with JudgmentCache(cache) as kept:
        exported = kept.export(judge.identity, out / "export.qrels", out / "export.jsonl")
        raws = [row["raw"] for row in kept.labelled(judge.identity.key)]
    assert exported == len(raws) > 10
    assert sum(MASK in raw for raw in raws) >= 10  # the echoes reached the cache, scrubbed
    assert {"ok", "invalid"} <= {row["status"] for row in map(json.loads, (out / "export.jsonl").open())}
    assert "rankscope judge: warning: the judge failed" in printed.err  # the 500s, their bodies quoted
    assert hits(cache, KEY) == [] and hits(out, KEY) == []
    for name, spelled in spellings(KEY).items():
        assert spelled.decode() not in printed.out + printed.err, name


@pytest.mark.parametrize("shift", [0, 1, 2])
def test_base64_of_the_key_at_any_alignment_is_scrubbed(shift: int) -> None:
    """A key in a longer base64 text is coded by one of three alignments; each is found."""
    coded = base64.b64encode(("a" * shift + KEY + "tail").encode()).decode()
    kept = KeptText(KEY)(f"dump: {coded}")
    assert MASK in kept
    assert not any(spelled.decode() in kept for spelled in spellings(KEY).values())
    decoded = base64.b64decode(coded[: len(coded)])  # sanity: the text did hold the key
    assert KEY.encode() in decoded


def test_a_short_key_is_scrubbed_plainly_and_nothing_else_is_touched() -> None:
    kept = KeptText("abc")
    assert kept("xabcx YWJj") == f"x{MASK}x YWJj"  # YWJj is base64 of abc: 4 characters match too much text
    assert KeptText()("abc") == "abc"
