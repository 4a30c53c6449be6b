// The labelling page: every text is put in with textContent (never innerHTML), so a document's markup
// stays text; every change is a POST carrying the page's token. A change the server answers 503 (its
// store busy) is kept and sent again until it is saved, unless another change replaces it.
"use strict";
(function () {
  const token = document.querySelector('meta[name="rankscope-token"]').content;
  const $ = (id) => document.getElementById(id);
  const RETRY_MS = 1500;
  let current = null;
  let shownAt = performance.now();
  let busy = false;
  let pending = null; // the change the server was too busy to save: {path, body}

  function highlighted(text, spans) {
    const fragment = document.createDocumentFragment();
    let at = 0;
    for (const [start, end] of spans) {
      if (start < at) continue;
      fragment.appendChild(document.createTextNode(text.slice(at, start)));
      const mark = document.createElement("mark");
      mark.textContent = text.slice(start, end);
      fragment.appendChild(mark);
      at = end;
    }
    fragment.appendChild(document.createTextNode(text.slice(at)));
    return fragment;
  }

  function render(state) {
    $("annotator").textContent = state.annotator;
    const share = state.total ? (100 * state.done) / state.total : 100;
    $("bar").style.width = share + "%";
    let counts = state.done + " of " + state.total + " labelled";
    if (state.skipped) counts += " · " + state.skipped + " skipped";
    if (state.mean_seconds !== null) counts += " · " + state.mean_seconds + " s per label";
    $("counts").textContent = counts;
    $("undo").disabled = !state.can_undo;
    const pair = state.pair;
    const previous = current;
    current = pair;
    $("pair").hidden = !pair;
    $("controls").hidden = !pair;
    $("finished").hidden = !!pair;
    if (!pair) return;
    if (!previous || previous.query_id !== pair.query_id || previous.doc_id !== pair.doc_id) {
      $("query").textContent = pair.query;
      $("query-id").textContent = pair.query_id;
      $("doc-id").textContent = pair.doc_id;
      $("doc-title").textContent = pair.title;
      $("source-path").textContent = pair.source + (pair.page ? ", page " + pair.page : "");
      $("doc-link").href = "/doc/" + pair.doc_id.split("/").map(encodeURIComponent).join("/");
      const body = $("doc-text");
      body.replaceChildren(highlighted(pair.text, pair.spans));
      body.scrollTop = 0;
      $("note").value = "";
      shownAt = performance.now();
    }
  }

  function what(path, body) {
    return path === "/api/label" ? "grade " + body.grade : path === "/api/undo" ? "undo" : "skip";
  }

  function retry(change) {
    if (pending === change) call(change.path, change.body);
  }

  async function call(path, body) {
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(path, {
        method: body === undefined ? "GET" : "POST",
        headers: body === undefined ? {} : { "Content-Type": "application/json", "X-Token": token },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = await response.json();
      if (response.status === 503 && body !== undefined) {
        const change = { path: path, body: body };
        pending = change;
        $("status").textContent = answer.error + ": " + what(path, body) + " is kept and sent again";
        setTimeout(() => retry(change), RETRY_MS);
        return;
      }
      if (body !== undefined) pending = null;
      if (!response.ok) {
        $("status").textContent = (body === undefined ? "" : "not saved: ") + answer.error;
        return;
      }
      render(answer);
      $("status").textContent = path === "/api/label" ? "saved (grade " + body.grade + ")" : path === "/api/undo" ? "last label removed" : "";
    } catch (error) {
      $("status").textContent = "the page cannot reach rankscope label: " + error;
    } finally {
      busy = false;
    }
  }

  function grade(value) {
    if (!current) return;
    const seconds = Math.round((performance.now() - shownAt) / 100) / 10;
    call("/api/label", { query_id: current.query_id, doc_id: current.doc_id, grade: value, note: $("note").value, seconds: seconds });
  }
  function skip() { if (current) call("/api/skip", { query_id: current.query_id, doc_id: current.doc_id }); }
  function undo() { call("/api/undo", {}); }

  document.querySelectorAll("button.grade").forEach((button) => {
    button.addEventListener("click", () => grade(Number(button.dataset.grade)));
  });
  $("skip").addEventListener("click", skip);
  $("undo").addEventListener("click", undo);
  document.addEventListener("keydown", (event) => {
    if (event.target === $("note")) {
      if (event.key === "Escape") $("note").blur();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (["0", "1", "2", "3"].includes(event.key)) grade(Number(event.key));
    else if (event.key === "s" || event.key === "S") skip();
    else if (event.key === "u" || event.key === "U") undo();
    else if (event.key === "n" || event.key === "N") { event.preventDefault(); $("note").focus(); }
    else return;
    event.preventDefault();
  });
  call("/api/state");
})();
