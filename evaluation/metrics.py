"""Metric names: one registry of measures, the names other tools use for them, a strict parser.

Canonical grammar (what results are labelled with)::

    name    := family [ "(" param "=" value { "," param "=" value } ")" ] [ "@" cutoff ]
    cutoff  := positive integer without leading zeros       e.g. ndcg@10, precision(rel=2)@10
    value   := decimal or scientific literal                e.g. precision(threshold=0.5), rbp(p=0.8)

Names are read case-insensitively, and the names trec_eval and ir_measures print are
accepted too (``P_10``, ``P.10``, ``ndcg_cut_10``, ``recip_rank``, ``nDCG@10``, ``AP@100``,
``RR@10``, ``P(rel=2)@10``, ``iprec_at_recall_0.50``, ...): each is mapped to the one
canonical name, so ``P_10`` and ``precision@10`` are the same metric (listing both is
refused as a duplicate). Every family accepts ``rel=n`` (relevant means label >= n for
that metric, trec_eval's ``-l``) unless it reads graded labels or no labels at all.
Anything else is refused with a "did you mean" suggestion and the list of known forms:
a typo must never turn into a silently missing column. The formulas are in
:mod:`rankscope.evaluation.measures` and docs/metrics.md.

:data:`FAMILIES` (with :data:`ALIASES`) is the one registry of measures: the parser, the
error text, ``known_forms`` and the CLI read it, and :func:`define` adds a user's measure
to it at run time (like ``ir_measures.define``), after which its name works everywhere a
metric name does (``evaluate``, ``compare --metrics``, ``tune --metric``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rankscope.core.errors import RankscopeError
from rankscope.core.params import Param, check_arguments, known
from rankscope.core.suggest import close_names, did_you_mean
from rankscope.evaluation import measures
from rankscope.evaluation.metric_about import ABOUT, About, markdown_table, trec_eval_name
from rankscope.evaluation.ranking import Judged

DEFAULT_METRICS = ("ndcg@10", "recall@100", "mrr@10", "hit@10", "map", "precision@10")

PerQuery = np.ndarray


@dataclass(frozen=True)
class Family:
    """One metric family and the forms it accepts (None = form not allowed).

    ``at_k(judged, k, **params)``, ``whole(judged, **params)`` and ``threshold(judged, x)``
    return one float64 per query. ``params`` are its keyword parameters (a :class:`Param` each, as a
    retriever's, read from the name's text; ``default`` None: required); ``named`` lists those the
    canonical name shows even at their default (all but ``quiet`` ones); ``at_param``
    names the parameter that ``@x`` sets instead of a cutoff (``iprec@0.5`` is a recall
    level, as in ir_measures). ``binary`` families read the relevance level, so they
    accept ``rel=n``.
    """

    at_k: Callable[..., PerQuery] | None
    whole: Callable[..., PerQuery] | None
    threshold: Callable[[Judged, float], PerQuery] | None = None
    params: Mapping[str, Param[Any]] = field(default_factory=dict)
    at_param: str | None = None
    binary: bool = True
    quiet: frozenset[str] = frozenset()
    """Parameters left out of the canonical name at their default (iprec's ``trec``)."""
    example: str = ""
    """How to write a required parameter, for the refusal of a name without it."""
    binary_flag: bool = False
    """The functions take ``binary``: True when the name gives ``rel=`` (RBP: graded without it)."""
    with_rel: str | None = None
    """The family a ``rel=`` makes of this one (ir_measures' ``NumRet(rel=1)`` is ``num_rel_ret``)."""
    variants: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Word-valued parameters naming another family: ``ndcg(dcg=exp-log2)`` is ``ndcg_exp``."""
    gains: bool = False
    """Takes ir_measures' ``gains={label:gain,...}`` (a label's gain in place of the label)."""
    about: About = About("")
    """What it is, for people: definition, trec_eval's and ir_measures' names, source (docs/metrics.md)."""


_RECALL = Param(float, None, "the recall level", low=0, high=1, name="recall")
_TREC_VERSION = Param(
    int, 10, "trec_eval's version: its rounding of recall levels changed in 10", low=9, high=10, name="trec"
)
_PERSISTENCE = Param(
    float, None, "RBP's persistence, always written: ir_measures' RBP takes 0.8 by default, trec_eval's rbp 0.9",
    low=0, high=1, closed="neither", name="p",
)  # fmt: skip
_REL = Param(int, None, "relevant means a label >= rel (trec_eval's -l)", low=1, name="rel")
_THRESHOLD = Param(float, None, "a document counts when its score >= threshold", name="threshold")

FAMILIES: dict[str, Family] = {}
# lower-case alias -> (family, how a cutoff may be written: "@" only, or also "_"/"." as trec_eval)
ALIASES: dict[str, tuple[str, str]] = {}


def register(name: str, family: Family, aliases: Iterable[str] = (), trec_aliases: Iterable[str] = ()) -> None:
    """Add a metric family under its canonical ``name`` and the other names it is known by.

    ``trec_aliases`` also take a cutoff written trec_eval's way (``P_10``, ``P.10``).
    A name already taken is refused: one name, one measure.
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise RankscopeError(f"metric family name must be lower case letters, digits and '_', got {name!r}")
    names = {name: "@", **dict.fromkeys(aliases, "@"), **dict.fromkeys(trec_aliases, "@._")}
    for alias in names:
        if alias in ALIASES:
            raise RankscopeError(f"metric name {alias!r} is already registered")
    FAMILIES[name] = replace(family, about=ABOUT[name]) if name in ABOUT else family
    for alias, separators in names.items():
        ALIASES[alias] = (name, separators)


register("precision", Family(measures.precision_at, measures.set_precision, measures.set_precision),
         ["set_p", "setp"], ["p"])  # fmt: skip
register(
    "recall",
    Family(measures.recall_at, measures.set_recall, measures.set_recall),
    ["set_recall", "setr", "r"],
    ["recall"],
)
register("f1", Family(measures.f1_at, measures.set_f1, measures.set_f1), ["set_f", "setf"])
register("hit", Family(measures.hit_at, None), [], ["success"])
register("mrr", Family(measures.reciprocal_rank, measures.reciprocal_rank), ["recip_rank", "rr"])
register("map", Family(measures.average_precision, measures.average_precision), ["ap"], ["map_cut"])
register(
    "ndcg",
    Family(
        measures.ndcg,
        measures.ndcg,
        binary=False,
        variants={"dcg": {"log2": "ndcg", "exp-log2": "ndcg_exp"}},
        gains=True,
    ),
    [],
    ["ndcg_cut"],
)
register("ndcg_exp", Family(measures.ndcg_exp, measures.ndcg_exp, binary=False))
register("rprec", Family(None, measures.r_precision), ["r_prec", "r-prec"])
register("bpref", Family(None, measures.bpref))
register("infap", Family(None, measures.inferred_ap))
register("judged", Family(measures.judged_at, measures.judged_at, binary=False))
register("num_ret", Family(None, measures.num_ret, binary=False, with_rel="num_rel_ret"), ["numret"])
register("num_rel", Family(None, measures.num_rel), ["numrel"])
register("num_rel_ret", Family(None, measures.num_rel_ret), ["numrelret"])
register("iprec", Family(None, measures.interpolated_precision, params={"recall": _RECALL, "trec": _TREC_VERSION}, at_param="recall", quiet=frozenset({"trec"}), example="iprec@0.5"),
         ["iprec_at_recall"])  # fmt: skip
register("err", Family(measures.err, measures.err, binary=False))
register(
    "rbp",
    Family(measures.rbp, measures.rbp, params={"p": _PERSISTENCE}, binary_flag=True, example="rbp(p=0.8) or rbp.p=0.9"),
)

_BUILT_IN = frozenset(ALIASES)
"""Every built-in name and alias: :func:`define` cannot take them."""

CUTOFF_USES = ("optional", "required", "none")
"""How a defined measure takes a cutoff: ``name`` and ``name@k``, only ``name@k``, or only ``name``."""


@check_arguments(cutoff=Param(str, choices=CUTOFF_USES))
def define(name: str, fn: Callable[..., PerQuery], *, cutoff: str = "optional") -> None:
    """Add the measure ``name``, computed by ``fn(judged, k)`` (``k`` None without a cutoff).

    ``judged`` is a :class:`~evaluation.ranking.Judged` (the judged retrieved documents
    in rank order, per-query counts); ``fn`` returns one float per query, in the order of
    ``judged.query_ids``. Built-in names and aliases cannot be replaced; defining a name
    twice replaces the user's own definition. A defined measure reads the labels as
    ``fn`` does, so it takes no ``rel=``.
    """
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise RankscopeError(f"metric name {name!r} must be lower case letters, digits and _, starting with a letter")
    if name in _BUILT_IN:
        raise RankscopeError(f"metric {name!r} is built in and cannot be redefined")
    if not callable(fn):
        raise RankscopeError(f"metric {name!r}: fn must be callable, got {fn!r}")
    at_k = fn if cutoff != "none" else None
    whole = (lambda judged: fn(judged, None)) if cutoff != "required" else None
    FAMILIES[name] = Family(at_k, whole, binary=False)
    ALIASES[name] = (name, "@")


IPREC_LEVELS = tuple(i / 10 for i in range(11))  # trec_eval's 11 standard recall points

_NUMBER = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?"
_NAME = re.compile(
    r"(?P<base>[a-z][a-z0-9_\-]*?)"
    r"(?:\((?P<params>[^()]*)\))?"
    rf"(?:(?P<sep>[@._])(?P<at>{_NUMBER}))?"
)
_PARAM = re.compile(rf"(?P<key>[a-z_]+)=(?P<value>{_NUMBER})")
_CUTOFF = re.compile(r"[1-9][0-9]*")
# trec_eval writes a parameter after "." in -m and "_" in its output: iprec_at_recall.0.10 / _0.10, rbp.p=0.9 / rbp_p=0.9
_TREC_IPREC = re.compile(r"iprec_at_recall[._](?P<level>[01]\.[0-9]+)")
_TREC_PARAM = re.compile(rf"(?P<base>[a-z_]+)[._](?P<key>[a-z]+)=(?P<value>{_NUMBER})")
"""trec_eval's ``-m rbp.p=0.95``: a measure's parameter written after a dot."""
_WORD_PARAM = re.compile(r"(?:^|,)(?P<key>[a-z_]+)=['\"]?(?P<value>[a-z][a-z0-9\-]*)['\"]?(?=,|$)")
"""A word-valued parameter (``dcg=exp-log2``, quoted or not, as ir_measures writes it)."""


@dataclass(frozen=True)
class Metric:
    """A parsed metric: canonical name, family, cutoff, score threshold, relevance level, parameters."""

    name: str
    family: str
    k: int | None = None
    threshold: float | None = None
    rel: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def trec_eval(self) -> tuple[str, str] | None:
        """trec_eval's ``-m`` form and printed form of this metric (at its own ``rel``, trec_eval's ``-l``),
        or None where trec_eval has no such measure."""
        if self.threshold is not None or self.params:
            return None
        return trec_eval_name(FAMILIES[self.family].about, self.k)

    @property
    def built_in(self) -> bool:
        """False for a measure added with :func:`define` (it exists in this process only)."""
        return self.family in _BUILT_IN

    def compute(self, judged: Judged) -> PerQuery:
        """One value per query of ``judged`` (at this metric's own relevance level if it sets one)."""
        family = FAMILIES[self.family]
        if self.rel is not None:
            judged = judged.at_level(self.rel)
        params: dict[str, Any] = dict(self.params)
        if family.binary_flag:
            params["binary"] = self.rel is not None
        if self.k is not None:
            values = family.at_k(judged, self.k, **params)  # type: ignore[misc]
        elif self.threshold is not None:
            values = family.threshold(judged, self.threshold)  # type: ignore[misc]
        else:
            values = family.whole(judged, **params)  # type: ignore[misc]
        if self.built_in:
            return values
        return _checked_values(self.name, values, judged.n_queries)


def _checked_values(name: str, values: object, n_queries: int) -> PerQuery:
    """A defined measure's output as floats, one per query, or an error naming the metric."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise RankscopeError(f"metric {name!r} returned {type(values).__name__}, not numbers") from None
    if array.shape != (n_queries,):
        raise RankscopeError(
            f"metric {name!r} returned shape {array.shape}, expected one value per query ({n_queries},)"
        )
    if not np.isfinite(array).all():
        raise RankscopeError(
            f"metric {name!r} returned a non-finite value for query {int(np.flatnonzero(~np.isfinite(array))[0])}"
        )
    return array


def family_forms(name: str, family: Family) -> list[str]:
    """The canonical forms one family accepts (``ndcg``, ``ndcg@k``), for error messages and docs."""
    params = ",".join(f"{p}=x" for p in family.params if p != family.at_param)
    base = f"{name}({params})" if params else name
    if family.at_param is not None:
        return [f"{base}@{family.at_param}"]
    forms = [base] if family.whole is not None else []
    if family.at_k is not None:
        forms.append(f"{base}@k")
    if family.threshold is not None:
        forms.append(f"{name}(threshold=x)")
    return forms


def known_forms() -> list[str]:
    """Every accepted canonical form, for error messages and docs."""
    return [form for name, family in FAMILIES.items() for form in family_forms(name, family)]


def measures_table() -> str:
    """docs/metrics.md's table of the built-in measures, made from the registry."""
    return markdown_table(
        [(family_forms(name, FAMILIES[name]), FAMILIES[name].about) for name in FAMILIES if name in ABOUT]
    )


def parse_metric(name: str, *, suggest: bool = True) -> Metric:
    """Parse one metric name (canonical, trec_eval's or ir_measures', any case) into its canonical :class:`Metric`.

    An unknown name raises :class:`RankscopeError` with the closest known name (unless
    ``suggest`` is False) and the list of known forms.
    """
    if not isinstance(name, str):
        raise RankscopeError(f"metric names are strings, got {name!r}")
    text = name.lower()
    trec_iprec = _TREC_IPREC.fullmatch(text)
    if trec_iprec:
        text = f"iprec@{trec_iprec.group('level')}"
    trec_param = _TREC_PARAM.fullmatch(text)
    if trec_param and trec_param.group("base") in ALIASES:
        text = f"{trec_param.group('base')}({trec_param.group('key')}={trec_param.group('value')})"
    match = _NAME.fullmatch(text)
    alias = ALIASES.get(match.group("base")) if match else None
    if match is None or alias is None:
        hint = _suggestion(text) if suggest else ""
        raise RankscopeError(
            f"unknown metric {name!r}{hint}; known metrics: {', '.join(known_forms())}"
            " (k is a positive integer, x a number)"
        )
    base, separators = alias
    family = FAMILIES[base]
    sep, at = match.group("sep"), match.group("at")
    if sep is not None and sep not in separators:
        raise RankscopeError(f"unknown metric {name!r}: write the cutoff as {base}@{at}")
    base, family, params_text = _variant(name, base, family, match.group("params"))
    gains, params_text = _gains(name, base, family, params_text)
    values = _parse_params(name, params_text)
    if family.with_rel is not None and "rel" in values:
        base = family.with_rel
        family = FAMILIES[base]
    if at is not None and family.at_param is not None:
        if family.at_param in values:
            raise RankscopeError(f"metric {name!r}: {family.at_param} is given twice")
        values[family.at_param] = at
        at = None
    k = _cutoff(name, base, family, at)
    threshold_text = values.pop("threshold", None)
    if threshold_text is not None and (family.threshold is None or k is not None):
        raise RankscopeError(f"metric {name!r}: {base} takes no score threshold")
    threshold = None if threshold_text is None else _THRESHOLD.parse(threshold_text, f"metric {name!r}")
    rel = _relevance_level(name, base, family, values.pop("rel", None))
    params: tuple[tuple[str, Any], ...] = _family_params(name, base, family, values)
    if k is None and threshold is None and family.whole is None:
        raise RankscopeError(f"metric {name!r} needs a cutoff, e.g. {base}@10")
    if gains:
        params = (*params, ("gains", gains))
    return Metric(_canonical(base, family, k, threshold, rel, params), base, k, threshold, rel, params)


def _suggestion(text: str) -> str:
    """ "; did you mean 'ndcg@10'?" for ``ndgc@10``: the closest family name with the rest kept, else the closest form."""
    base, rest = re.fullmatch(r"([a-z0-9_\-]*)(.*)", text).groups()  # type: ignore[union-attr]
    for candidate in close_names(base, ALIASES, n=3):
        try:
            return f"; did you mean {parse_metric(candidate + rest, suggest=False).name!r}?"
        except RankscopeError:
            continue
    return did_you_mean(text, known_forms(), cutoff=0.5)


def _variant(name: str, base: str, family: Family, text: str | None) -> tuple[str, Family, str | None]:
    """The family a word-valued parameter names (``ndcg(dcg=exp-log2)`` is ``ndcg_exp``), and the other parameters."""
    words = [word for word in _WORD_PARAM.finditer(text or "") if word.group("key") in family.variants]
    if not words:
        return base, family, text
    for word in words:
        key, value = word.group("key"), word.group("value")
        choices = family.variants[key]
        if value not in choices:
            raise RankscopeError(f"metric {name!r}: {key}={value} is not known; {key} is one of {', '.join(choices)}")
        base = choices[value]
    rest = ",".join(part for part in (text or "").split(",") if part.split("=")[0] not in family.variants)
    return base, FAMILIES[base], rest or None


_GAINS = re.compile(r"(?:^|,)gains=\{(?P<pairs>[^{}]*)\}(?=,|$)")
_GAIN_PAIR = re.compile(r"(?P<label>-?[0-9]{1,18}):(?P<gain>-?[0-9]{1,18})")


def _gains(name: str, base: str, family: Family, text: str | None) -> tuple[tuple[tuple[int, int], ...], str | None]:
    """ir_measures' ``gains={0:0,1:1,2:3}`` as sorted (label, gain) pairs, and the other parameters.

    Integers, as ir_measures (whose pytrec_eval backend reads integer labels) takes them; a label <= 0 given a
    positive gain is refused: here, as in trec_eval, such a label is never relevant."""
    found = _GAINS.search(text or "")
    if found is None:
        return (), text
    if not family.gains:
        raise RankscopeError(f"metric {name!r}: {base} takes no gains")
    pairs: dict[int, int] = {}
    for item in found.group("pairs").split(","):
        pair = _GAIN_PAIR.fullmatch(item.strip())
        if pair is None:
            raise RankscopeError(f"metric {name!r}: gains are written {{label:gain,...}} with integers, found {item!r}")
        label, gain = int(pair.group("label")), int(pair.group("gain"))
        if label in pairs:
            raise RankscopeError(f"metric {name!r}: gains name label {label} twice")
        if label <= 0 < gain:
            raise RankscopeError(
                f"metric {name!r}: gains give label {label} the gain {gain}; a label <= 0 is never relevant"
            )
        pairs[label] = gain
    identity = {label: gain for label, gain in pairs.items() if label != gain}  # ir_measures' name drops them too
    rest = (text or "")[: found.start()] + (text or "")[found.end() :]
    return tuple(sorted(identity.items())), rest.strip(",") or None


def _parse_params(name: str, text: str | None) -> dict[str, str]:
    """``rel=2,p=0.8`` -> {"rel": "2", "p": "0.8"} (each read by its :class:`Param`); malformed or repeated keys are refused."""
    if text is None:
        return {}
    values: dict[str, str] = {}
    for part in text.split(","):
        match = _PARAM.fullmatch(part)
        if match is None:
            raise RankscopeError(f"unknown metric {name!r}: parameters are written key=number, e.g. rbp(p=0.8)")
        key = match.group("key")
        if key in values:
            raise RankscopeError(f"metric {name!r}: {key} is given twice")
        values[key] = match.group("value")
    return values


def _cutoff(name: str, base: str, family: Family, at: str | None) -> int | None:
    if at is None:
        return None
    if not _CUTOFF.fullmatch(at):
        raise RankscopeError(f"unknown metric {name!r}: a cutoff is a positive integer without leading zeros")
    if family.at_k is None:
        raise RankscopeError(f"metric {name!r}: {base} takes no cutoff; use {base!r}")
    return int(at)


def _relevance_level(name: str, base: str, family: Family, rel: str | None) -> int | None:
    if rel is None:
        return None
    if not family.binary:
        raise RankscopeError(f"metric {name!r}: {base} does not use a relevance level (rel=)")
    return int(_REL.parse(rel, f"metric {name!r}"))


def _family_params(name: str, base: str, family: Family, values: dict[str, str]) -> tuple[tuple[str, float], ...]:
    """The family's parameters in declaration order, defaults filled in, unknown ones refused."""
    known([*family.params.values(), *([_REL] if family.binary else [])], values, f"metric {name!r}: {base}")
    params = []
    for key, param in family.params.items():
        if key in values:
            params.append((key, param.parse(values[key], f"metric {name!r}")))
        elif param.default is None:
            raise RankscopeError(f"metric {name!r}: {base} needs {key} ({param.help}), e.g. {family.example}")
        else:
            params.append((key, param.default))
    return tuple(params)


def _canonical(
    base: str,
    family: Family,
    k: int | None,
    threshold: float | None,
    rel: int | None,
    params: tuple[tuple[str, Any], ...],
) -> str:
    """The one name of a parsed metric: ``precision(rel=2)@10``, ``rbp(p=0.8)``, ``iprec@0.5``."""
    pairs = [
        (key, value)
        for key, value in params
        if key != family.at_param and (key not in family.quiet or value != family.params[key].default)
    ]
    if rel is not None:
        pairs.append(("rel", rel))
    if threshold is not None:
        pairs.append(("threshold", threshold))
    text = base + (f"({','.join(f'{key}={_shown(v)}' for key, v in sorted(pairs))})" if pairs else "")
    at = dict(params).get(family.at_param) if family.at_param else k
    return text if at is None else f"{text}@{_number(at)}"


def _shown(value: Any) -> str:
    """A parameter's value in a canonical name: a number, or gains as ``{2:3,3:7}``."""
    if isinstance(value, tuple):
        return "{" + ",".join(f"{label}:{gain}" for label, gain in value) + "}"
    return _number(value)


def _number(value: float) -> str:
    """Shortest text that reads back as ``value``: 10 -> "10", 0.50 -> "0.5", -2e-3 -> "-0.002"."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else repr(float(value))


def parse_metrics(names: str | Iterable[str]) -> tuple[Metric, ...]:
    """Parse several names (a single string counts as one name); two names for one metric are refused."""
    if isinstance(names, str):
        names = [names]
    given = list(names)
    parsed = tuple(parse_metric(n) for n in given)
    if not parsed:
        raise RankscopeError("no metric requested")
    seen: dict[str, str] = {}
    for written, metric in zip(given, parsed):
        if metric.name in seen:
            same = "" if seen[metric.name] == written else f" (as {seen[metric.name]!r} and {written!r})"
            raise RankscopeError(f"metric {metric.name!r} is listed twice{same}")
        seen[metric.name] = written
    return parsed
