"""A real HTTP server on 127.0.0.1 serving files for the download tests (corpora/download.py, irds:), each
path with a behaviour a careless or hostile host has: the whole file, the file cut short of its
Content-Length or of its announced chunk (http.client's IncompleteRead), or an error status. It counts the requests it got."""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Served:
    """What the server serves (path -> (behaviour, bytes)) and the requests it got per path."""

    files: dict[str, tuple[str, bytes]]
    port: int = 0
    asked: Counter[str] = field(default_factory=Counter)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@contextmanager
def serving(files: dict[str, tuple[str, bytes]]) -> Iterator[Served]:
    """Serve ``files``: behaviour ``whole``, ``cut`` (half the bytes of a Content-Length announcing all, then
    the connection closed), ``chunked-cut`` (the same in chunked encoding) or a status such as ``500``; an
    unknown path is 404."""
    served = Served(files)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            served.asked[self.path] += 1
            behaviour, data = served.files.get(self.path, ("404", b""))
            if behaviour.isdigit():
                self.send_error(int(behaviour))
                return
            self.send_response(200)
            if behaviour == "chunked-cut":  # a chunk announced whole, half of it sent
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"%x\r\n" % len(data) + data[: len(data) // 2])
            else:
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data if behaviour == "whole" else data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args: object) -> None:  # quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
