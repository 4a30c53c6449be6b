"""Retriever parameters: the names this module always offered, now defined in :mod:`rankscope.core.params`.

:class:`Param` serves retrievers, metric families and public functions alike (one way to
declare a parameter); this module keeps the old import path working. A retriever declares each
constructor parameter as a class attribute (docs/retrievers.md)::

    class MyRetriever(Retriever):
        k1 = Param(float, 1.2, "term-frequency saturation", low=0)
        variant = Param(str, "fast", "which formula", choices=("fast", "exact"))
"""

from __future__ import annotations

from rankscope.core.errors import ParameterError
from rankscope.core.params import ENDS, Param, changed, check_values, parameter_table, parse_values

SpecError = ParameterError
"""A retriever spec or parameter names an unknown retriever or parameter, or a value it does not allow:
the one error of a refused parameter (:class:`rankscope.core.errors.ParameterError`), under the name
retrievers have always used."""

__all__ = ["ENDS", "Param", "SpecError", "changed", "check_values", "parameter_table", "parse_values"]
