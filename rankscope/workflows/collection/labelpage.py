"""``rankscope label DIR``: the labelling page, a small Starlette app served by uvicorn on 127.0.0.1.

Documents are untrusted input. The page's HTML holds no collection text at all: the script fetches
the pair as JSON and puts every text into the page with ``textContent`` (highlights are ``<mark>``
elements made the same way), and a Content-Security-Policy allows only the page's own script and
style, so a document's ``<script>`` or ``onerror`` can neither be inserted nor run. Requests that
change anything need the token the page carries (header ``X-Token``; a page of another site cannot
read it), the Host header must name the address served (no DNS rebinding; serving on every address,
``0.0.0.0``, accepts this machine's own names and addresses), and the only files served are the
page's own three; a document is served as plain text by id from the collection's corpus, never by
path, so nothing outside DIR is reachable.

A change whose body is not a small JSON object (too deep, too large, not UTF-8) or names its pair with
anything but strings is refused with a reason (400); a store another process holds locked answers 503
"busy, try again" after :data:`~rankscope.workflows.collection.labelling.BUSY_SECONDS`, and the page
keeps the label and sends it again; the session's work runs on a worker thread, so a wait never
stalls the other requests.
"""

from __future__ import annotations

import errno
import html
import ipaddress
import secrets
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rankscope.core.extras import require_extra
from rankscope.core.jsonstrict import loads
from rankscope.judging.cache import CacheBusy, CacheError
from rankscope.workflows.collection.labelling import LabelRequestError, LabelSession
from rankscope.workflows.collection.layout import CollectionError

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}
BODY_LIMIT = 65536
"""Most bytes of a change's body: a label with the longest note is under 10 KB."""
BUSY = "busy, try again"
LOOPBACK = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("0.0.0.0", "::")


def request_host(header: str | None) -> str | None:
    """The host a ``Host`` header names (lower case, an IPv6 address without brackets), or None for an empty
    or malformed one."""
    if not header:
        return None
    try:
        parts = urlsplit(f"//{header}")
        parts.port  # noqa: B018 - reading it checks the port is a number in range
    except ValueError:
        return None
    if parts.username is not None or parts.path or parts.query or parts.fragment or not parts.hostname:
        return None
    return parts.hostname


def allowed_hosts(host: str) -> frozenset[str]:
    """The names a request's ``Host`` may give when the page is served on ``host``: the address itself, and for a
    loopback address the loopback names, for every address (``0.0.0.0``, ``::``) this machine's names and addresses."""
    host = host.strip("[]").lower()
    if host in WILDCARDS:
        names = {*LOOPBACK, *WILDCARDS, socket.gethostname().lower(), socket.getfqdn().lower()}
        return frozenset(names | _addresses(names))
    if host in LOOPBACK or _is_loopback(host):
        return frozenset({host, *LOOPBACK})
    return frozenset({host})


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _addresses(names: Iterable[str]) -> set[str]:
    """The addresses the names resolve to (here: /etc/hosts, DNS if any); none for a name that does not resolve."""
    found: set[str] = set()
    for name in names:
        try:
            found |= {str(info[4][0]).split("%")[0].lower() for info in socket.getaddrinfo(name, None)}
        except (OSError, UnicodeError):
            continue
    return found


def _asset(name: str) -> str:
    return resources.files("rankscope.workflows.collection").joinpath(f"page/{name}").read_text(encoding="utf-8")


def make_app(session: LabelSession, token: str, hosts: Iterable[str]) -> Any:
    """The page's ASGI app over ``session``; ``token`` guards every change, ``hosts`` are the Host names allowed
    (:func:`allowed_hosts`)."""
    require_extra("starlette", "collection", "the labelling page")
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.datastructures import Headers
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route
    from starlette.types import ASGIApp, Receive, Scope, Send

    allowed = frozenset(host.strip("[]").lower() for host in hosts)

    shell = _asset("index.html").replace("{{TOKEN}}", html.escape(token)).replace("{{NAME}}", html.escape(session.name))

    def secured(response: Response) -> Response:
        response.headers.update(SECURITY_HEADERS)
        return response

    async def page(request: Request) -> Response:
        return secured(Response(shell, media_type="text/html; charset=utf-8"))

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return secured(PlainTextResponse("not found", status_code=404))
        return secured(Response(_asset(name), media_type=f"{ASSETS[name]}; charset=utf-8"))

    async def answer(work: Callable[[], Any] | None = None) -> Response:
        """The session's state after ``work``, run on a worker thread; a refused request 400, a busy store 503."""
        try:
            if work is not None:
                await run_in_threadpool(work)
            return secured(JSONResponse(await run_in_threadpool(session.state)))
        except LabelRequestError as exc:
            return secured(JSONResponse({"error": str(exc)}, status_code=400))
        except CacheBusy:
            return secured(JSONResponse({"error": BUSY}, status_code=503, headers={"Retry-After": "1"}))
        except CacheError as exc:  # a damaged or full store: said, not a bare 500
            return secured(JSONResponse({"error": f"the labels cannot be saved: {exc}"}, status_code=500))

    async def state(request: Request) -> Response:
        return await answer()

    async def document(request: Request) -> Response:
        doc = session.document(request.path_params["doc_id"])
        if doc is None:
            return secured(PlainTextResponse("no such document in this collection", status_code=404))
        return secured(PlainTextResponse(f"{doc.get('title', '')}\n\n{doc['text']}\n"))

    def change(action: Callable[[dict[str, Any]], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not secrets.compare_digest(request.headers.get("x-token", ""), token):
                return secured(JSONResponse({"error": "missing or wrong token"}, status_code=403))
            body = await json_object(request)
            if isinstance(body, str):
                return secured(JSONResponse({"error": body}, status_code=400))
            return await answer(lambda: action(body))

        return endpoint

    def host_checked(app: ASGIApp) -> ASGIApp:
        async def checked(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and request_host(Headers(scope=scope).get("host")) not in allowed:
                await secured(PlainTextResponse("Invalid host header", status_code=400))(scope, receive, send)
                return
            await app(scope, receive, send)

        return checked

    routes = [
        Route("/", page),
        Route("/static/{name}", asset),
        Route("/api/state", state),
        Route("/doc/{doc_id:path}", document),
        Route(
            "/api/label",
            change(
                lambda b: session.label(
                    b.get("query_id"), b.get("doc_id"), b.get("grade"), b.get("note", ""), b.get("seconds", 0.0)
                )
            ),
            methods=["POST"],
        ),
        Route("/api/skip", change(lambda b: session.skip(b.get("query_id"), b.get("doc_id"))), methods=["POST"]),
        Route("/api/undo", change(lambda b: session.undo()), methods=["POST"]),
    ]
    return host_checked(Starlette(routes=routes))


async def json_object(request: Any) -> dict[str, Any] | str:
    """The request's body as a JSON object, or why it is not one (too large, not UTF-8, not JSON, too deep)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_LIMIT:
            return f"the body is larger than {BODY_LIMIT} bytes"
    try:
        value = loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return "the body must be UTF-8 JSON"
    except ValueError as exc:
        return f"the body must be JSON: {exc}"
    return value if isinstance(value, dict) else "the body must be a JSON object"


def serve(folder: str | Path, name: str, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the page until interrupted, printing its address first."""
    uvicorn = require_extra("uvicorn", "collection", "the labelling page")
    sock = listening(host, port)
    try:
        session = LabelSession(Path(folder), name)
    except BaseException:
        sock.close()
        raise
    bound = sock.getsockname()[1]
    named = socket.gethostname() if host.strip("[]") in WILDCARDS else host.strip("[]")
    shown = f"[{named}]" if ":" in named else named
    app = make_app(session, secrets.token_urlsafe(24), allowed_hosts(host))
    state = session.state()
    print(
        f"labelling {folder} as {state['annotator']}: {state['done']} of {state['total']} sampled pairs done",
        flush=True,
    )
    print(f"open http://{shown}:{bound}/ (Ctrl+C stops; every label is saved when given)", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        session.close()
        sys.stdout.flush()


def listening(host: str, port: int) -> socket.socket:
    """A socket listening on ``host``:``port`` (before the address is printed: a browser opened at once waits
    instead of being refused), or a CollectionError naming the address and why it cannot be served."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise CollectionError(f"--port {port}: a port is a number from 0 to 65535 (0 picks a free one)")
    if not host.strip("[]"):
        raise CollectionError("--host is empty: give a name or an address, e.g. 127.0.0.1 (this machine only)")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (OSError, UnicodeError) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CollectionError(f"--host {host}: cannot be resolved to an address of this machine ({problem})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        hint = "; another program listens there: pick another --port, or 0 for a free one"
        raise CollectionError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}" + (hint if exc.errno == errno.EADDRINUSE else "")
        ) from None
    return sock
