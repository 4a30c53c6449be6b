"""rankscope: compare retrievers, tune BM25, diagnose recall vs ranking gaps.

The work lives in the sibling packages ``corpora`` (data), ``retrieval`` (systems)
and ``evaluation`` (metrics); this package holds what they share (errors, file
I/O, progress) and the workflows and CLI built on top of them.
"""

from rankscope.core.version import __version__
