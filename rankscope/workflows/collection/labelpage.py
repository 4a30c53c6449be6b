"""``rankscope label DIR``: the labelling page, a small Starlette app served by uvicorn on 127.0.0.1.

Documents are untrusted input. The page's HTML holds no collection text at all: the script fetches
the pair as JSON and puts every text into the page with ``textContent`` (highlights are ``<mark>``
elements made the same way), and a Content-Security-Policy allows only the page's own script and
style, so a document's ``<script>`` or ``onerror`` can neither be inserted nor run. Requests that
change anything need the token the page carries (header ``X-Token``; a page of another site cannot
read it), the Host header must be the address served (no DNS rebinding), and the only files served
are the page's own three; a document is served as plain text by id from the collection's corpus,
never by path, so nothing outside DIR is reachable.
"""

from __future__ import annotations

import html
import secrets
import socket
import sys
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any

from rankscope.core.extras import require_extra
from rankscope.workflows.collection.labelling import LabelRequestError, LabelSession

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
ASSETS = {"app.js": "text/javascript", "app.css": "text/css"}


def _asset(name: str) -> str:
    return resources.files("rankscope.workflows.collection").joinpath(f"page/{name}").read_text(encoding="utf-8")


def make_app(session: LabelSession, token: str, hosts: list[str]) -> Any:
    """The page's ASGI app over ``session``; ``token`` guards every change, ``hosts`` are the Host names allowed."""
    require_extra("starlette", "collection", "the labelling page")
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse, PlainTextResponse, Response
    from starlette.routing import Route

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

    async def state(request: Request) -> Response:
        return secured(JSONResponse(session.state()))

    async def document(request: Request) -> Response:
        doc = session.document(request.path_params["doc_id"])
        if doc is None:
            return secured(PlainTextResponse("no such document in this collection", status_code=404))
        return secured(PlainTextResponse(f"{doc.get('title', '')}\n\n{doc['text']}\n"))

    def change(action: Callable[[dict[str, Any]], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not secrets.compare_digest(request.headers.get("x-token", ""), token):
                return secured(JSONResponse({"error": "missing or wrong token"}, status_code=403))
            try:
                body = await request.json()
            except ValueError:
                return secured(JSONResponse({"error": "the body must be JSON"}, status_code=400))
            if not isinstance(body, dict):
                return secured(JSONResponse({"error": "the body must be a JSON object"}, status_code=400))
            try:
                action(body)
            except LabelRequestError as exc:
                return secured(JSONResponse({"error": str(exc)}, status_code=400))
            return secured(JSONResponse(session.state()))

        return endpoint

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
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)])


def serve(folder: str | Path, name: str, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the page until interrupted, printing its address first."""
    uvicorn = require_extra("uvicorn", "collection", "the labelling page")
    session = LabelSession(Path(folder), name)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # before the address is printed: a browser opened at once waits instead of being refused
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    hosts = [host, "localhost", "127.0.0.1"] if host in ("127.0.0.1", "localhost") else [host]
    app = make_app(session, secrets.token_urlsafe(24), hosts)
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
