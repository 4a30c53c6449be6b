"""Types of the compiled scoring and top-k kernel (``retrieval/_sparse_topk.c``), for the type checker."""

from typing import Any, final

@final
class Workspace:
    """Scratch space of ``top_k`` kept between calls; one call at a time."""

def top_k(
    q_indptr: Any,
    q_indices: Any,
    q_data: Any,
    w_indptr: Any,
    w_indices: Any,
    w_data: Any,
    doc_id_rank: Any,
    k: int,
    term_max: Any = ...,
    term_min: Any = ...,
    workspace: Workspace | None = ...,
    /,
) -> tuple[bytes, bytes, bytes, int]: ...
