"""The labelling page's script (page/app.js) under Node with a stand-in DOM and fetch: a label the server
answers 503 for (its store busy) is said to be kept, sent again after a pause with the same body, and
shown as saved once the server takes it; the pair stays on screen meanwhile."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the page's script")

HARNESS = r"""
const fs = require("fs");
const source = fs.readFileSync(process.argv[2], "utf8");
const replies = JSON.parse(process.argv[3]);
const elements = {};
function element(id) {
  if (!elements[id]) {
    elements[id] = {
      textContent: "", hidden: false, disabled: false, value: "", style: {}, href: "", scrollTop: 0,
      replaceChildren() {}, addEventListener() {}, appendChild() {}, focus() {}, blur() {},
    };
  }
  return elements[id];
}
const keys = [];
global.document = {
  querySelector: () => ({ content: "the-token" }),
  getElementById: element,
  querySelectorAll: () => [],
  addEventListener: (type, listener) => { if (type === "keydown") keys.push(listener); },
  createDocumentFragment: () => ({ appendChild() {} }),
  createTextNode: (text) => ({ text }),
  createElement: () => ({}),
};
global.performance = { now: () => 0 };
const pair = (doc) => ({ query_id: "q1", doc_id: doc, query: "q", title: "", text: "t", source: "", page: 0, spans: [] });
const state = (doc, done) => ({ annotator: "human:alice", done, total: 2, skipped: 0, can_undo: done > 0,
  mean_seconds: null, pair: pair(doc) });
const posts = [];
global.fetch = async (path, options) => {
  if (options.method === "GET") return { ok: true, status: 200, json: async () => state("d1", 0) };
  posts.push({ path, body: JSON.parse(options.body), token: options.headers["X-Token"] });
  const [status, answer] = replies.shift();
  return { ok: status < 300, status, json: async () => answer };
};
const timers = [];
global.setTimeout = (callback, ms) => timers.push([callback, ms]);
const settle = async () => { for (let i = 0; i < 20; i++) await new Promise((done) => setImmediate(done)); };
(async () => {
  new Function(source)();
  await settle();
  keys[0]({ key: "2", target: {}, preventDefault() {} });
  await settle();
  const seen = [[elements.status.textContent, elements["doc-id"].textContent]];
  while (timers.length) {
    const [callback, ms] = timers.shift();
    seen.push(ms);
    callback();
    await settle();
    seen.push([elements.status.textContent, elements["doc-id"].textContent]);
  }
  console.log(JSON.stringify({ posts, seen }));
})();
"""

BUSY = [503, {"error": "busy, try again"}]


def run_page(tmp_path: Path, replies: list[list[object]]) -> dict[str, list[object]]:
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    script = resources.files("rankscope.workflows.collection").joinpath("page/app.js")
    done = subprocess.run(
        [str(NODE), str(harness), str(script), json.dumps(replies)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_label_the_busy_server_refused_is_kept_and_sent_again_until_saved(tmp_path: Path) -> None:
    saved = [200, {"annotator": "human:alice", "done": 1, "total": 2, "skipped": 0, "can_undo": True}]
    saved[1].update(mean_seconds=0.0, pair={"query_id": "q1", "doc_id": "d2", "query": "q", "title": "", "text": "t"})
    saved[1]["pair"].update(source="", page=0, spans=[])
    found = run_page(tmp_path, [BUSY, BUSY, saved])
    label = {"query_id": "q1", "doc_id": "d1", "grade": 2, "note": "", "seconds": 0}
    assert (
        found["posts"] == [{"path": "/api/label", "body": label, "token": "the-token"}] * 3
    )  # the same label, 3 times
    kept = ["busy, try again: grade 2 is kept and sent again", "d1"]  # said so, and the pair still shown
    assert found["seen"] == [kept, 1500, kept, 1500, ["saved (grade 2)", "d2"]]


def test_a_refused_label_is_not_sent_again(tmp_path: Path) -> None:
    found = run_page(tmp_path, [[400, {"error": "grade must be one of (0, 1, 2, 3), got 7"}]])
    assert len(found["posts"]) == 1
    assert found["seen"] == [["not saved: grade must be one of (0, 1, 2, 3), got 7", "d1"]]
