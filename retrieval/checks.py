"""The retriever contract as a function: ``check_retriever(MyRetriever)`` (like scikit-learn's ``check_estimator``).

Every built-in passes it (the project's tests run it over each one); a third-party
retriever runs it in its own tests::

    from rankscope.retrieval.checks import check_retriever

    def test_my_retriever_keeps_the_contract():
        check_retriever("my-retriever")          # a registered name or spec, or the class

It indexes a small corpus built in (42 documents, two with the same text so a tie
is certain) and raises :class:`RetrieverCheckError`, an ``AssertionError``, naming
the first check that failed and what was wrong. The checks, in order, are
:data:`CHECKS`. Warnings the retriever raises (an out-of-vocabulary query) are
silenced; an ``ImportError`` (a missing optional extra) passes through unchanged.
"""

from __future__ import annotations

import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rankscope.core.errors import NotFittedError
from rankscope.corpora.schema import RUN_COLUMNS, sort_run
from rankscope.retrieval.base import Retriever
from rankscope.retrieval.params import SpecError
from rankscope.retrieval.registry import load_retriever, make_retriever, retriever_class

_WORDS = (
    "boundary layer flow heat transfer wing shock wave pressure supersonic laminar turbulent "
    "plate cone cylinder nozzle jet mach number drag lift stability buckling shell panel"
).split()
TWINS = ("doc40", "doc41")
"""Two documents with the same text: they tie on every query that matches them."""


class RetrieverCheckError(AssertionError):
    """A retriever broke the contract; the message names the retriever, the check and the problem."""


def check_corpus() -> pd.DataFrame:
    """The corpus the checks index: 40 seeded random texts over a small vocabulary, then the twins."""
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(_WORDS, size=rng.integers(4, 15))) for _ in range(40)]
    texts += ["identical twin text about drag"] * len(TWINS)
    ids = [f"doc{i:02d}" for i in range(len(texts))]
    return pd.DataFrame({"doc_id": ids, "title": [""] * len(texts), "text": texts})


def check_queries() -> pd.DataFrame:
    """Three ordinary queries, an empty one and one without a known word."""
    return pd.DataFrame(
        {
            "query_id": ["q1", "q2", "q3", "empty", "oov"],
            "text": ["boundary layer flow", "heat transfer in a shock wave", "twin drag", "", "qqqzzz xxyyww"],
        }
    )


@dataclass
class _Subject:
    """What the checks look at: how to build a fresh retriever, one indexed on the corpus, the inputs."""

    build: Callable[[], Retriever]
    fitted: Retriever
    corpus: pd.DataFrame
    queries: pd.DataFrame

    def run(self, k: int = 10, queries: pd.DataFrame | None = None, retriever: Retriever | None = None) -> pd.DataFrame:
        return (retriever or self.fitted).search(self.queries if queries is None else queries, k=k)


class _Failed(Exception):
    """Raised by :func:`_expect` inside a check; turned into a :class:`RetrieverCheckError`."""


def _expect(condition: bool, problem: str) -> None:
    if not condition:
        raise _Failed(problem)


def _registered(subject: _Subject) -> None:
    cls = type(subject.fitted)
    _expect(bool(cls.name), f"{cls.__qualname__} has no name: register it with @register(name) or an entry point")
    _expect(retriever_class(cls.name) is cls, f"the name {cls.name!r} is registered to another class")


def _parameters(subject: _Subject) -> None:
    cls = type(subject.fitted)
    owner = cls.name or cls.__qualname__
    names = [p.name for p in cls.parameters]
    _expect(list(subject.build().get_params()) == names, f"get_params() keys are not the parameters table {names}")
    for param in cls.parameters:
        try:
            param.validate(param.default, owner)
        except SpecError as exc:
            raise _Failed(f"the default of {param.name} is refused by its own table: {exc}") from None


def _spec_round_trip(subject: _Subject) -> None:
    retriever = subject.build()
    again = make_retriever(retriever.spec())
    _expect(type(again) is type(retriever), f"make_retriever({retriever.spec()!r}) builds {type(again).__name__}")
    _expect(again.get_params() == retriever.get_params(), f"make_retriever({retriever.spec()!r}) has other params")


def _set_params_refusals(subject: _Subject) -> None:
    retriever = subject.build()
    before = retriever.get_params()
    changes: tuple[dict[str, object], ...] = ({"no_such_parameter": 1}, *({name: object()} for name in before))
    for change in changes:
        try:
            retriever.set_params(**change)
        except SpecError:
            pass
        else:
            raise _Failed(f"set_params({change}) was accepted; it must raise SpecError")
        _expect(retriever.get_params() == before, f"a refused set_params({change}) changed the parameters")


def _not_fitted(subject: _Subject) -> None:
    retriever = subject.build()
    with tempfile.TemporaryDirectory() as tmp:
        attempts = {
            "search": lambda: retriever.search(subject.queries),
            "score": lambda: retriever.score("flow", ["doc01"]),
            "save": lambda: retriever.save(Path(tmp) / "index"),
        }
        for method, attempt in attempts.items():
            try:
                attempt()
            except NotFittedError:
                continue
            raise _Failed(f"{method}() before index() must raise NotFittedError")


def _run_schema(subject: _Subject) -> None:
    run = subject.run()
    _expect(tuple(run.columns) == RUN_COLUMNS, f"run columns are {tuple(run.columns)}, not {RUN_COLUMNS}")
    _expect(run["score"].dtype == np.float64, f"score dtype is {run['score'].dtype}, not float64")
    _expect(run["rank"].dtype == np.int64, f"rank dtype is {run['rank'].dtype}, not int64")
    for column in ("query_id", "doc_id"):
        _expect(all(isinstance(v, str) for v in run[column]), f"{column} values are not all str")
    _expect(bool(np.isfinite(run["score"]).all()), "a score is not finite")
    _expect(not run.duplicated(["query_id", "doc_id"]).any(), "a document appears twice for one query")
    for query_id, group in run.groupby("query_id", sort=False):
        _expect(list(group["rank"]) == list(range(1, len(group) + 1)), f"ranks of {query_id} are not 1..n in order")
    missing = {"q1", "q2", "q3"} - set(run["query_id"])
    _expect(not missing, f"queries {sorted(missing)} share words with the corpus but got no rows")


def _tie_order(subject: _Subject) -> None:
    run = subject.run()
    expected = sort_run(run)  # the one reference of the tie rule: score desc, then doc_id desc
    _expect(
        run["doc_id"].tolist() == expected["doc_id"].tolist(),
        "rows are not in the tie rule's order (per query: score descending, then doc_id descending)",
    )


def _k_respected(subject: _Subject) -> None:
    for k in (1, 3):
        counts = subject.run(k=k).groupby("query_id").size()
        _expect(counts.max() <= k, f"search(k={k}) returned {counts.max()} rows for a query")
        _expect(counts.get("q1") == k, f"search(k={k}) returned {counts.get('q1', 0)} rows for q1, which matches more")


def _empty_queries(subject: _Subject) -> None:
    bad = (
        {"empty"} if getattr(subject.fitted, "matches_unknown_words", False) else {"empty", "oov"}
    )  # encoders embed any text
    run = subject.run()
    _expect(not bad & set(run["query_id"]), "an empty or out-of-vocabulary query got rows")
    only_bad = subject.run(queries=subject.queries[subject.queries["query_id"].isin(bad)])
    _expect(len(only_bad) == 0 and tuple(only_bad.columns) == RUN_COLUMNS, "no-match queries must give an empty run")


def _deterministic(subject: _Subject) -> None:
    again = subject.build().index(subject.corpus)
    _expect(subject.run(retriever=again).equals(subject.run()), "indexing again gives another run")


def _score_agrees(subject: _Subject) -> None:
    run = subject.run()
    for query_id, text in zip(subject.queries["query_id"], subject.queries["text"]):
        found = run[run["query_id"] == query_id]
        if len(found):
            scores = np.asarray(subject.fitted.score(text, list(found["doc_id"])), dtype=np.float64)
            _expect(
                np.allclose(scores, found["score"].to_numpy(), rtol=1e-5, atol=1e-6),
                f"score() disagrees with search() for {query_id}",
            )
    _expect(np.shape(subject.fitted.score("boundary layer flow", [])) == (0,), "score(text, []) is not empty")


def _save_load(subject: _Subject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subject.fitted.save(Path(tmp) / "index")
        loaded = load_retriever(Path(tmp) / "index")
        _expect(type(loaded) is type(subject.fitted), f"load_retriever gives a {type(loaded).__name__}")
        _expect(loaded.get_params() == subject.fitted.get_params(), "the loaded retriever has other params")
        _expect(subject.run(retriever=loaded).equals(subject.run()), "the loaded retriever gives another run")


CHECKS: tuple[tuple[str, Callable[[_Subject], None]], ...] = (
    ("registered", _registered),
    ("parameters", _parameters),
    ("spec_round_trip", _spec_round_trip),
    ("set_params_refusals", _set_params_refusals),
    ("not_fitted", _not_fitted),
    ("run_schema", _run_schema),
    ("tie_order", _tie_order),
    ("k_respected", _k_respected),
    ("empty_queries", _empty_queries),
    ("deterministic", _deterministic),
    ("score_agrees", _score_agrees),
    ("save_load", _save_load),
)
"""The checks by name, in the order they run."""


def check_retriever(retriever: str | type[Retriever] | Retriever) -> None:
    """Run every check of :data:`CHECKS` on a registered name or spec, a class, or an instance
    (rebuilt from its parameters); raise :class:`RetrieverCheckError` at the first that fails."""
    if isinstance(retriever, str):
        label = retriever
        build: Callable[[], Retriever] = lambda: make_retriever(retriever)  # noqa: E731
    elif isinstance(retriever, type) and issubclass(retriever, Retriever):
        label, build = retriever.__qualname__, retriever
    elif isinstance(retriever, Retriever):
        params = retriever.get_params()
        label, build = repr(retriever), lambda: type(retriever)(**params)
    else:
        raise TypeError(f"check_retriever takes a spec, a Retriever subclass or instance, got {retriever!r}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check = "index"
        try:
            subject = _Subject(build, build().index(check_corpus()), check_corpus(), check_queries())
            for name, run_check in CHECKS:
                check = name  # named in the error if it fails
                run_check(subject)
        except _Failed as failure:
            raise RetrieverCheckError(f"check_retriever({label}): check {check!r} failed: {failure}") from None
        except ImportError:
            raise
        except Exception as exc:
            raise RetrieverCheckError(
                f"check_retriever({label}): check {check!r} raised {type(exc).__name__}: {exc}"
            ) from exc
