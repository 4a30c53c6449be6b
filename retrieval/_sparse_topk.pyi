"""Types of the compiled scoring and top-k kernel (``retrieval/_sparse_topk.c``), for the type checker."""

from typing import Any, final

@final
class Workspace:
    """Scratch space of ``Search.run`` kept between calls; one call at a time."""

@final
class Search:
    """Queries searched by threads that claim them one at a time; rows in query order."""

    def __init__(
        self,
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
        /,
    ) -> None: ...
    @property
    def done(self) -> int: ...
    def run(self, workspace: Workspace | None = ..., limit: int = ..., /) -> int: ...
    def result(self) -> tuple[bytes, bytes, bytes, int]: ...
