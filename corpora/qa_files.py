"""Question/answer files users bring for answer-based relevance (NQ, TriviaQA and the like).

- Questions JSONL, one object per line: ``{"query_id": "q1", "text": "who ...?",
  "answers": ["...", ...]}``, read as every questions file is (:mod:`rankscope.corpora.questions`:
  the id also in ``_id``, ``id`` or ``qid``, else ``q<line>``; the text also in ``query`` or
  ``question``). ``answers`` is a non-empty list of non-empty strings: an answer without any token would make DPR's ``has_answer`` count every passage as relevant
  (:mod:`rankscope.corpora.answers`), so it is refused with the file and line, and so is a question
  with more than :data:`MAX_ANSWERS` answers (each is looked for in every retrieved passage).
- Retrieval results JSON as DPR's ``dense_retriever.py`` writes them (a list of
  ``{"question", "answers", "ctxs": [{"id", "title", "text", "score", "has_answer"}]}``;
  the query id is the entry's position, from 0) and as Pyserini's
  ``convert_trec_run_to_dpr_retrieval_run`` writes them (an object keyed by query id, each
  ``{"question", "answers", "contexts": [{"docid", "score", "text"?, "has_answer"}]}``).
  The list order is the ranking, as their top-k accuracy reads it: the run's scores are
  ``n, n-1, ..., 1`` for ``n`` contexts, so rankscope's tie rule cannot reorder them; the
  file's ``has_answer`` flags become qrels (1 or 0) and the passage texts, where present,
  a table to recompute them from. (DPR matches answers in the passage text alone; Pyserini's
  stored ``text`` is ``title + "\n" + text`` while its flags were computed on the text alone,
  so a recomputation from it also searches the title.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rankscope.core import jsonstrict as strict_json
from rankscope.core.errors import FormatError
from rankscope.core.fileio import PathLike, read_text
from rankscope.corpora.questions import read_questions_file

MAX_ANSWERS = 1_000
"""The most answers one question may have: each is looked for in every retrieved passage (a pattern
search each in regex mode), so 100,000 answers ran over 5 minutes; TriviaQA's aliases stay far below."""


def _answers(path: PathLike, line: int | None, where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise FormatError(path, line, f"{where}'answers' must be a non-empty list of strings")
    if len(value) > MAX_ANSWERS:
        raise FormatError(
            path, line, f"{where}{len(value):,} answers, more than the {MAX_ANSWERS:,} a question may have"
        )
    for answer in value:
        if not isinstance(answer, str):
            raise FormatError(path, line, f"{where}answer {json.dumps(answer)[:40]} is not a string")
        if not answer.strip():
            raise FormatError(path, line, f"{where}empty answer {answer!r}: it would match every passage")
    return tuple(value)


def read_questions(path: PathLike) -> pd.DataFrame:
    """Questions with answers as a frame ``query_id, text, answers`` (a tuple of strings per query): the
    questions as every command reads them (:mod:`rankscope.corpora.questions`), each with ``answers``."""
    rows = []
    for question in read_questions_file(path):
        if "answers" not in question.fields:
            raise FormatError(path, question.line, f"missing field 'answers'; found fields {sorted(question.fields)}")
        rows.append((question.query_id, question.text, _answers(path, question.line, "", question.fields["answers"])))
    return pd.DataFrame(rows, columns=["query_id", "text", "answers"])


@dataclass(frozen=True)
class RetrievalResults:
    """A DPR/Pyserini results file: ``questions`` (query_id, text, answers), ``run``,
    ``qrels`` (the file's has_answer flags) and ``passages`` (doc_id, title, text; the
    contexts that carried a text)."""

    questions: pd.DataFrame
    run: pd.DataFrame
    qrels: pd.DataFrame
    passages: pd.DataFrame


def read_retrieval_results(path: PathLike) -> RetrievalResults:
    """Read a DPR (list) or Pyserini (object) retrieval results JSON file (see the module doc)."""
    try:
        data = strict_json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, f"invalid JSON ({exc.msg} at column {exc.colno})") from None
    except strict_json.JSONValueError as exc:
        raise FormatError(path, None, f"invalid JSON ({exc})") from None
    if isinstance(data, list):
        entries, contexts_key, id_key = [(str(i), e) for i, e in enumerate(data)], "ctxs", "id"
    elif isinstance(data, dict):
        entries, contexts_key, id_key = list(data.items()), "contexts", "docid"
    else:
        raise FormatError(path, None, "expected a JSON list (DPR) or object (Pyserini) of questions")
    questions, run, qrels, passages = [], [], [], {}
    for query_id, entry in entries:
        where = f"question {query_id!r}: "
        if not isinstance(entry, dict):
            raise FormatError(path, None, f"{where}expected an object, found {type(entry).__name__}")
        for key in ("question", "answers", contexts_key):
            if key not in entry:
                raise FormatError(path, None, f"{where}missing field {key!r}; found fields {sorted(entry)}")
        questions.append((query_id, str(entry["question"]), _answers(path, None, where, entry["answers"])))
        contexts = entry[contexts_key]
        if not isinstance(contexts, list):
            raise FormatError(path, None, f"{where}{contexts_key!r} must be a list")
        seen = set()
        for position, ctx in enumerate(contexts):
            at = f"{where}context {position}: "
            if not isinstance(ctx, dict) or id_key not in ctx or "has_answer" not in ctx:
                raise FormatError(path, None, f"{at}expected an object with {id_key!r} and 'has_answer'")
            doc_id = str(ctx[id_key])
            if doc_id in seen:
                raise FormatError(path, None, f"{at}passage {doc_id!r} is listed twice")
            seen.add(doc_id)
            if not isinstance(ctx["has_answer"], bool):
                raise FormatError(path, None, f"{at}'has_answer' must be true or false")
            run.append((query_id, doc_id, float(len(contexts) - position)))
            qrels.append((query_id, doc_id, int(ctx["has_answer"])))
            if "text" in ctx:
                passages[doc_id] = (doc_id, str(ctx.get("title", "")), str(ctx["text"]))
    return RetrievalResults(
        questions=pd.DataFrame(questions, columns=["query_id", "text", "answers"]),
        run=pd.DataFrame(run, columns=["query_id", "doc_id", "score"]),
        qrels=pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]),
        passages=pd.DataFrame(list(passages.values()), columns=["doc_id", "title", "text"]),
    )
