"""The retriever interface: what every system, built-in or third-party, implements.

In the spirit of scikit-learn: the constructor only stores parameters; what is
learned from the corpus lives in attributes ending in ``_``; ``index`` returns
self. Runs are DataFrames with the columns of :data:`corpora.schema.RUN_COLUMNS`.

Tie rule (documented, deterministic): within a query, results are ordered by
score descending, then doc_id descending (byte order), the same order
trec_eval uses when it reads a run, so the rank we write is the rank it scores.
"""

from __future__ import annotations

import inspect
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Union, runtime_checkable

import numpy as np

from rankscope.core.errors import NotFittedError, ParameterError, RankscopeError, SchemaError, duplicate_message
from rankscope.core.params import Param, check_values

if TYPE_CHECKING:
    import pandas as pd


class UnknownDocumentError(RankscopeError, KeyError):
    """``score`` was asked about a document the index does not hold."""

    def __str__(self) -> str:
        return str(self.args[0])  # KeyError would show the message quoted


@runtime_checkable
class RetrieverProtocol(Protocol):
    """The minimal surface the workflows rely on."""

    def index(self, corpus: pd.DataFrame) -> RetrieverProtocol: ...

    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame: ...

    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray: ...

    def save(self, directory: str | os.PathLike[str]) -> None: ...

    def get_params(self) -> dict[str, Any]: ...


class Retriever(ABC):
    """Shared parts: parameter handling, the fitted check and run assembly; the abstract methods are the contract.

    Subclasses set ``name`` (the :func:`~retrieval.registry.register` decorator does),
    declare each constructor parameter as a class attribute (``k1 = Param(float, 1.2, "help",
    low=0)``: a type checker sees ``self.k1`` as a float; no ``__init__`` of their own), put
    rules between parameters in :meth:`check_params`, and implement ``index``, ``search``,
    ``score``, ``save`` and the classmethod ``load`` (a class missing one cannot be built).
    The parameters, in declaration order (inherited ones first, a redeclared one in its
    parent's place), form the table ``parameters``. A class body may instead give the whole
    table as ``parameters = (Param("k1", float, 1.2, "help"), ...)``: the older form, and the
    way a subclass drops parameters of its parent.
    """

    name: ClassVar[str] = ""
    matches_unknown_words: ClassVar[bool] = False
    """True for retrievers that rank documents for any non-empty text (dense encoders); the others
    give no rows for a query without a word they know."""
    parameters: ClassVar[tuple[Param[Any], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            raise TypeError(
                f"{cls.__qualname__}: declare constructor parameters as class attributes "
                "(rankscope.core.params.Param), not in __init__; rules between parameters go in "
                "check_params (see docs/retrievers.md)"
            )
        cls.parameters = _declared_parameters(cls)
        kind = inspect.Parameter.KEYWORD_ONLY
        cls.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p.name, kind, default=p.default) for p in cls.parameters]
        )

    @abstractmethod
    def index(self, corpus: pd.DataFrame) -> Retriever:
        """Learn what searching needs from ``corpus`` (doc_id, title, text); returns self."""

    @abstractmethod
    def search(self, queries: QueryInput, k: int = 1000) -> pd.DataFrame:
        """The top ``k`` documents per query as a run (query_id, doc_id, score, rank), by the tie rule."""

    @abstractmethod
    def score(self, query: str, doc_ids: Sequence[str]) -> np.ndarray:
        """The score of each of ``doc_ids`` for the query text (an unknown id is an UnknownDocumentError)."""

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the index to ``directory`` (atomic; no pickle), so that :meth:`load` rebuilds it.
        Every built-in can; a retriever that cannot says so here (``check_retriever`` requires both)."""
        raise NotImplementedError(f"{type(self).__qualname__} cannot save its index (it defines no save)")

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> Retriever:
        """The retriever :meth:`save` wrote to ``directory``."""
        raise NotImplementedError(f"{cls.__qualname__} cannot load an index (it defines no load)")

    def __init__(self, **params: Any) -> None:
        """Store the parameters, validated by :meth:`check_params` (missing ones take their defaults)."""
        for key, value in type(self).check_params(params).items():
            setattr(self, key, value)

    @classmethod
    def check_params(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter's value (``values`` over the defaults), each checked against its :class:`Param`.

        A :class:`~retrieval.params.SpecError` names the first refused parameter and what it allows.
        Subclasses with rules between parameters extend this (call ``super()`` first).
        """
        return check_values(cls.parameters, values, cls.name or cls.__name__)

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters and their current values."""
        return {p.name: getattr(self, p.name) for p in self.parameters}

    def set_params(self, **params: Any) -> Retriever:
        """Change constructor parameters, checked as the constructor checks them before anything changes,
        so a rejected change leaves the retriever as it was. Unknown names are an error."""
        checked = type(self).check_params({**self.get_params(), **params})
        for key in params:
            setattr(self, key, checked[key])
        return self

    def effective_params(self) -> dict[str, Any]:
        """The parameters in effect: :meth:`get_params` with any None resolved to the value used
        (a retriever whose defaults depend on another parameter overrides this)."""
        return self.get_params()

    def spec(self) -> str:
        """The registry string that rebuilds this retriever, e.g. ``bm25:k1=0.9,b=0.4``."""
        params = ",".join(f"{k}={v}" for k, v in self.get_params().items())
        return f"{self.name}:{params}" if params else self.name

    def __rshift__(self, other: Retriever) -> Retriever:
        """``a >> b``: ``b`` reranks ``a``'s top documents, the retriever ``rerank:first=[a],by=[b]``.

        Built from the two specs (specs stay the serialisation: ``(a >> b).spec()`` rebuilds it);
        ``a`` and ``b`` are not changed, and the result is indexed like any retriever."""
        if not isinstance(other, Retriever):
            return NotImplemented
        return _made(f"rerank:first={self.as_part('>>')},by={other.as_part('>>')}")

    def __add__(self, other: Retriever) -> Retriever:
        """``a + b``: the default fusion of the two, ``hybrid:retrievers=[a]+[b]``; ``a + b + c`` fuses
        the three at once (a fusion at its defaults adds its parts, a tuned one stays whole)."""
        if not isinstance(other, Retriever):
            return NotImplemented
        return _made("hybrid:retrievers=" + "+".join([*self.fused_parts(), *other.fused_parts()]))

    def fused_parts(self) -> list[str]:
        """What ``+`` fuses of this retriever: its own spec, bracketed."""
        return [self.as_part("+")]

    def as_part(self, operator: str) -> str:
        """This retriever's spec in ``[...]``, as a part of a composite spec; a :class:`ParameterError` if
        the spec cannot rebuild it (a parameter given as a Python object, such as an Analyzer)."""
        from rankscope.retrieval.registry import make_retriever

        spec = self.spec()
        try:
            same = make_retriever(spec).get_params() == self.get_params()
        except ParameterError:
            same = False
        if not same:
            raise ParameterError(
                f"{operator}: a spec cannot hold {self!r}; compose retrievers whose parameters are "
                "spec values, or build RerankRetriever/HybridRetriever from Python objects"
            )
        return f"[{spec}]"

    def notes(self) -> list[str]:
        """What a reader of this configuration's results must know (a weak default model and what to
        install instead): printed by ``rankscope retrievers`` and in compare's systems table. None by default."""
        return []

    def diagnostics(self) -> dict[str, float]:
        """Numbers about the last index/search a reader must see beside the metrics (e.g. the
        out-of-vocabulary rate of word vectors, the recall of an approximate index); none by default."""
        return {}

    def _check_fitted(self, attribute: str) -> None:
        if not hasattr(self, attribute):
            raise NotFittedError(f"{type(self).__name__} has no index yet: call index(corpus) or load(dir) first")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.get_params().items())})"


def _declared_parameters(cls: type[Retriever]) -> tuple[Param[Any], ...]:
    """``cls``'s parameter table: its parents' tables and mixins' Param attributes, then its own attributes
    (a redeclared name keeps its place); or the whole table its body gives as ``parameters``."""
    own = {key: value for key, value in cls.__dict__.items() if isinstance(value, Param)}
    if "parameters" in cls.__dict__:
        if own:
            raise TypeError(
                f"{cls.__qualname__}: parameters {sorted(own)} are class attributes and the class also "
                "gives a `parameters` table; declare them one way"
            )
        table = tuple(cls.__dict__["parameters"])
    else:
        inherited: dict[str, Param[Any]] = {}
        for klass in reversed(cls.__mro__[1:]):
            if isinstance(klass.__dict__.get("parameters"), tuple):  # a retriever class: its whole table
                inherited = {p.name: p for p in klass.__dict__["parameters"]}
            else:
                inherited.update({p.name: p for p in klass.__dict__.values() if isinstance(p, Param)})
        table = tuple({**inherited, **{p.name: p for p in own.values()}}.values())
    names = [p.name for p in table]
    if len(set(names)) != len(names):
        raise TypeError(f"{cls.__qualname__}: a parameter is declared twice in {names}")
    missing = [p.name for p in table if not p.help]
    if missing:
        raise TypeError(f"{cls.__qualname__}: parameters {missing} have no help text (rankscope retrievers prints it)")
    return table


def _made(spec: str) -> Retriever:
    """The retriever a composite spec describes (the registry imports this module, so not at the top)."""
    from rankscope.retrieval.registry import make_retriever

    return make_retriever(spec)


def part_notes(parts: Sequence[object]) -> list[str]:
    """The notes of a composite's parts (specs or retrievers; other objects have none), each once."""
    notes: list[str] = []
    for part in parts:
        retriever = _made(part) if isinstance(part, str) else part
        notes += [n for n in getattr(retriever, "notes", list)() if n not in notes]
    return notes


def document_texts(corpus: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Validated doc ids and the text every retriever indexes: title, a newline, then the body.

    The one place that decides what "the document" is, so all retrievers index the same text.
    """
    from rankscope.corpora.schema import validate  # pandas: not loaded until there is data

    table = validate(corpus, "corpus", "corpus given to index()")
    duplicated = table["doc_id"].duplicated()
    if duplicated.any():
        first = table["doc_id"][duplicated].iloc[0]
        raise SchemaError(f"corpus given to index(): {duplicate_message('doc_id', first)}")
    texts = [document_text(title, text) for title, text in zip(table["title"], table["text"])]
    return table["doc_id"].tolist(), texts


def document_text(title: str, text: str) -> str:
    """What a retriever indexes of one document: title, a newline, then the body (the body alone without a title)."""
    return f"{title}\n{text}" if title else text


def doc_positions(doc_index: Mapping[str, int], doc_ids: Sequence[str]) -> np.ndarray:
    """Corpus positions of ``doc_ids`` for ``score``; an unknown id is an error, never a silent 0."""
    try:
        return np.fromiter((doc_index[str(d)] for d in doc_ids), dtype=np.int64, count=len(doc_ids))
    except KeyError as exc:
        raise UnknownDocumentError(f"score(): document {exc.args[0]!r} is not in the index") from None


QueryInput = Union["pd.DataFrame", str, Sequence[str], Mapping[str, str]]
"""What ``search`` takes: a queries table, one query text, a list of texts, or ``{query_id: text}``."""


def as_queries(queries: QueryInput) -> pd.DataFrame:
    """A queries table from any :data:`QueryInput`; a text or a list of texts gets ids "1", "2", ... in order."""
    import pandas as pd

    if isinstance(queries, pd.DataFrame):
        return queries
    return _queries_table(*_ids_and_texts(queries))


def _ids_and_texts(queries: str | Sequence[str] | Mapping[str, str]) -> tuple[list[str], list[Any]]:
    """Ids and texts of queries given as one text, texts (ids "1", "2", ... in order) or ``{query_id: text}``
    (ids written with ``str``): the one rule of :func:`as_queries` and :func:`query_texts`."""
    if isinstance(queries, str):
        queries = [queries]
    if isinstance(queries, Mapping):
        return [str(q) for q in queries], list(queries.values())
    texts = list(queries)
    return [str(i) for i in range(1, len(texts) + 1)], texts


def _queries_table(ids: list[str], texts: list[Any]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({"query_id": ids, "text": texts}, dtype=object)  # not inferred: Arrow, to convert back


def query_texts(queries: QueryInput) -> tuple[list[str], list[str]]:
    """Validated query ids and texts. Given as one text, a list or a dict whose texts are ``str`` already,
    they are what the check of their queries table would give back, so they skip building one (2-4 ms for
    1,000 queries: the serial part of a search on several threads)."""
    from rankscope.corpora.schema import validate

    if isinstance(queries, (str, Mapping, list, tuple)):
        ids, texts = _ids_and_texts(queries)
        if all(type(text) is str for text in texts):
            return ids, texts
        table = _queries_table(ids, texts)
    else:  # a table, or an iterable read once
        table = as_queries(queries)
    table = validate(table, "queries", "queries given to search()")
    return table["query_id"].tolist(), table["text"].tolist()


MAX_K = 2**63 - 1
"""The largest ``k`` (and ``--depth``): the C kernel's index type; more than any index holds."""
K = Param(int, low=1, high=MAX_K, name="k")
"""``search``'s ``k``: a float or 0 is a caller mistake, not a cutoff."""


def check_k(k: int) -> int:
    """``k`` as an int, or a one-line :class:`~rankscope.core.errors.ParameterError` (``search: k=0 is not allowed; ...``)."""
    return int(K.validate(k, "search"))


def make_run(
    query_ids: Sequence[str],
    doc_ids: Sequence[np.ndarray],
    scores: Sequence[np.ndarray],
    *,
    ordered: bool = False,
) -> pd.DataFrame:
    """Assemble per-query (doc_ids, scores) arrays into a run sorted by the tie rule.

    Each ``doc_ids[i]``/``scores[i]`` pair may be in any order; the result is
    ordered per query by score descending then doc_id descending, with ranks 1..n.
    ``ordered=True`` says each pair is already in that order (as
    :func:`retrieval.topk.top_k` returns it), which skips the sort.
    """
    from rankscope.corpora.schema import sort_run

    lengths = np.fromiter((len(d) for d in doc_ids), dtype=np.int64, count=len(doc_ids))
    run = ordered_run(
        query_ids,
        lengths,
        np.concatenate([np.zeros(0, dtype=object), *(np.asarray(d, dtype=object) for d in doc_ids)]),
        np.concatenate([np.zeros(0, dtype=np.float64), *(np.asarray(s, dtype=np.float64) for s in scores)]),
    )
    return run if ordered or run.empty else sort_run(run)  # the one implementation of the tie rule for run tables


def ordered_run(query_ids: Sequence[str], lengths: np.ndarray, doc_ids: np.ndarray, scores: np.ndarray) -> pd.DataFrame:
    """A run from rows already in run order, query after query: the first ``lengths[0]`` rows of
    ``doc_ids`` and ``scores`` are ``query_ids[0]``'s, and so on (a searcher's results as they come,
    without a list per query); ranks 1..n within each query."""
    import pandas as pd

    from rankscope.corpora.schema import as_strings

    if len(doc_ids) == 0:
        return pd.DataFrame(
            {
                "query_id": as_strings(np.array([], dtype=object)),
                "doc_id": as_strings(np.array([], dtype=object)),
                "score": pd.Series([], dtype=np.float64),
                "rank": pd.Series([], dtype=np.int64),
            }
        )
    starts = np.cumsum(lengths) - lengths
    return pd.DataFrame(
        {
            "query_id": as_strings(np.repeat(np.asarray(query_ids, dtype=object), lengths)),
            "doc_id": as_strings(np.asarray(doc_ids, dtype=object)),
            "score": np.asarray(scores, dtype=np.float64),
            "rank": (np.arange(len(doc_ids)) - np.repeat(starts, lengths) + 1).astype(np.int64),
        }
    )
