"""Options the workflows share, as small frozen dataclasses instead of long signatures.

- :class:`Output`: where the files go and the figures' formats (every workflow's ``out``
  takes one, or just the folder);
- :class:`Execution`: how the systems are run and compared: the seed (tests, folds,
  sampling), the paired significance test, and a scheduler to run them on (compare, tune, rag);
- :class:`Search`: how tune searches its space (every grid point, or optuna's TPE with a
  number of trials);
- :class:`Judging`: a judge labelling the pool's holes while comparing (compare's ``judgments``,
  instead of a ``rankscope judge --out`` folder).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rankscope.core.errors import RankscopeError
from rankscope.core.outputs import check_output_folder
from rankscope.core.params import SEED, WORKERS
from rankscope.reporting.rendering import DEFAULT_FIGURES, check_formats

if TYPE_CHECKING:
    import argparse

SEARCHES = ("grid", "optuna")
MAX_TRIALS = 100_000
"""The most trials of one optuna study: each is a search of every training query (TPE's own cost also
grows with the trials), so more would run for days; a typo is refused at once."""
REPEATS = 5
"""Fold seeds of repeated cross-validation by default: ``seed``, ``seed + 1``, ... (Bouckaert & Frank
2004 repeat 10-fold CV ten times so that a comparison replicates; on a scored grid a repeat only
re-chooses, it never searches again, so five cost nothing noticeable and give a spread)."""
MAX_REPEATS = 1000
"""The most fold seeds: choosing is cheap on a scored grid, but each seed of an optuna search runs its
own studies."""


@dataclass(frozen=True)
class Output:
    """Where a workflow writes: ``folder`` (None: nowhere, the result only) and each plot's ``figures``
    formats (svg by default; png and pdf on request; report.html always holds the plots as inline SVG)."""

    folder: str | Path | None = None
    figures: tuple[str, ...] = DEFAULT_FIGURES

    @classmethod
    def of(cls, out: str | Path | Output | None) -> Output:
        """``out`` as an Output: a folder alone takes the default figures."""
        return out if isinstance(out, Output) else cls(out)

    def checked(self) -> tuple[Path | None, tuple[str, ...]]:
        """The folder (checked: it can be written) and the formats, refused before any computing."""
        figures = tuple(check_formats(self.figures))
        return (None if self.folder is None else check_output_folder(self.folder)), figures


@dataclass(frozen=True)
class Execution:
    """How the systems are run and compared: ``seed`` for tests, folds and sampling, the paired
    significance ``test`` (Holm-corrected), and a ``scheduler`` (``local:N`` or a Dask address)
    that runs each system or grid chunk as a task (the results are the same, bit for bit)."""

    seed: int = 0
    test: str = "randomization"
    scheduler: str | None = None
    workers: int = 1
    """Processes scoring tune's grid points: 1 scores them in this process; more are forked from it once
    the corpus is indexed (the command line's ``--workers`` defaults to up to 2; here 1, so nothing forks
    a caller's process unless asked)."""

    def __post_init__(self) -> None:
        SEED.validate(self.seed, "Execution")  # before any work: numpy refuses it only once deep inside
        WORKERS.validate(self.workers, "Execution")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Execution:
        """What a command's parsed options ask for; a field the command has no option for, or one not
        given (None), keeps its default."""
        fields = dataclasses.fields(cls)
        given = {f.name: getattr(args, f.name) for f in fields if getattr(args, f.name, None) is not None}
        return cls(**given)


@dataclass(frozen=True)
class Search:
    """How tune searches and cross-validates: ``grid`` scores every point; ``optuna`` runs ``trials``
    trials of TPE per study (one seeded study per training fold of each fold seed; needs the tune extra);
    ``repeats`` fold seeds (the execution's seed, then the next ones) give the cross-validated gain and
    its spread (:mod:`rankscope.workflows.tune.crossval`)."""

    method: str = "grid"
    trials: int = 50
    repeats: int = REPEATS

    def check(self) -> Search:
        if self.method not in SEARCHES:
            raise RankscopeError(f"--search must be one of {', '.join(SEARCHES)}, got {self.method!r}")
        if self.method == "optuna" and not 1 <= self.trials <= MAX_TRIALS:
            raise RankscopeError(f"--trials must be at least 1 and at most {MAX_TRIALS:,}, got {self.trials}")
        if not 1 <= self.repeats <= MAX_REPEATS:
            raise RankscopeError(f"--repeats must be at least 1 and at most {MAX_REPEATS}, got {self.repeats}")
        return self


@dataclass(frozen=True)
class Judging:
    """Judge the pool while comparing, as ``rankscope judge`` then ``compare --judgments`` would: the top
    ``depth`` of every system pooled, the holes labelled by ``judge`` (a spec or a Judge) through the
    judgments cache (``cache``: a folder; None: the user cache), and with ``human_sample`` that many
    judged queries drawn with the execution's seed as the human sample of the intervals."""

    judge: Any
    human_sample: int | None = None
    depth: int = 10
    cache: str | Path | None = None


F = TypeVar("F", bound=Callable[..., Any])


def keyword_aliases(**aliases: str) -> Callable[[F], F]:
    """Accept other libraries' keyword names too (``alias=parameter``, not deprecated): ranx's
    ``compare(qrels=..., runs=...)`` is rankscope's ``compare(dataset=..., retrievers=...)``."""

    def wrap(function: F) -> F:
        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            for alias, name in aliases.items():
                if alias in kwargs:
                    if name in kwargs:
                        raise TypeError(f"{function.__name__}() got both {alias}= and {name}=, the same argument")
                    kwargs[name] = kwargs.pop(alias)
            return function(*args, **kwargs)

        return call  # type: ignore[return-value]

    return wrap


def flat_defaults(function: Callable[..., object]) -> dict[str, Any]:
    """A function's parameter defaults by name, with the fields of options objects given as
    defaults (``execution=Execution()``) by their own names too (``seed``, ``test``, ``scheduler``)."""
    found: dict[str, Any] = {}
    for name, parameter in inspect.signature(function).parameters.items():
        default = parameter.default
        if dataclasses.is_dataclass(default) and not isinstance(default, type):
            for field in dataclasses.fields(default):
                found.setdefault(field.name, getattr(default, field.name))
        found[name] = default
    return found
