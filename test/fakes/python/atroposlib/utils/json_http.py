"""A small stand-in for FastAPI + uvicorn (and for aiohttp on the client side), standard library only.

Servers answer JSON routes and log like uvicorn does on stderr (start-up lines, one access line per
request, the ``[Errno 98]`` bind error); clients send JSON and never go through an HTTP proxy from
the environment, as aiohttp does by default.
"""
import gzip
import json
import os
import sys
import traceback
import urllib.error
import urllib.request
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Optional, Tuple
from urllib.parse import urlsplit

# A route gets the parsed JSON body (None when empty) and returns (status, payload); a str payload
# is sent as text/plain, anything else as JSON.
Route = Callable[[Any], Tuple[int, Any]]
Routes = Dict[Tuple[str, str], Route]

_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class HttpStatusError(Exception):
    def __init__(self, status: int, body: str):
        super().__init__(f"HTTP {status}: {body[:500]}")
        self.status = status
        self.body = body


def request_json(method: str, url: str, body: Any = None, timeout: float = 30, headers: Optional[Dict[str, str]] = None) -> Any:
    """One JSON request; HttpStatusError for 4xx/5xx, URLError/OSError when nothing answers."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with _opener.open(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        raise HttpStatusError(error.code, error.read().decode("utf-8", "replace")) from None
    return json.loads(raw) if raw else None


def uvicorn_log(level: str, message: str) -> None:
    sys.stderr.write(f"{level + ':':<9} {message}\n")
    sys.stderr.flush()


def _handler_class(routes: Routes, access_log: bool):
    paths = {path for _, path in routes}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self._dispatch("GET")

        def do_POST(self):
            self._dispatch("POST")

        def do_PUT(self):
            self._dispatch("PUT")

        def do_DELETE(self):
            self._dispatch("DELETE")

        def _read_body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            if raw and "gzip" in (self.headers.get("Content-Encoding") or "").lower():
                raw = gzip.decompress(raw)
            return raw

        def _dispatch(self, method: str) -> None:
            path = urlsplit(self.path).path
            route = routes.get((method, path))
            try:
                raw = self._read_body()
            except OSError:
                return self._send(400, "Invalid gzip payload")
            if route is None:
                return self._send(405, {"detail": "Method Not Allowed"}) if path in paths else self._send(404, {"detail": "Not Found"})
            try:
                body = json.loads(raw) if raw else None
            except ValueError as error:
                return self._send(422, {"detail": [{"type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error", "ctx": {"error": str(error)}}]})
            try:
                status, payload = route(body)
            except Exception:
                traceback.print_exc()
                status, payload = 500, "Internal Server Error"
            self._send(status, payload)

        def _send(self, status: int, payload: Any) -> None:
            if isinstance(payload, str):
                data, content_type = payload.encode(), "text/plain; charset=utf-8"
            else:
                data, content_type = json.dumps(payload).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_request(self, code="-", size="-"):
            if access_log:
                phrase = HTTPStatus(code).phrase if isinstance(code, int) else ""
                host, port = self.client_address[:2]
                uvicorn_log("INFO", f'{host}:{port} - "{self.requestline}" {int(code)} {phrase}')

        def log_message(self, format, *args):
            pass

    return Handler


def start_server(routes: Routes, host: str, port: int, access_log: bool = True) -> Optional[ThreadingHTTPServer]:
    """Binds like ``uvicorn.run`` does and logs the same lines; None (after logging the error) when
    the address is taken. The caller runs ``serve_forever``."""
    uvicorn_log("INFO", f"Started server process [{os.getpid()}]")
    uvicorn_log("INFO", "Waiting for application startup.")
    uvicorn_log("INFO", "Application startup complete.")
    try:
        server = ThreadingHTTPServer((host, port), _handler_class(routes, access_log))
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        uvicorn_log("ERROR", f"[Errno {error.errno}] error while attempting to bind on address ({host!r}, {port}): {reason}")
        uvicorn_log("INFO", "Waiting for application shutdown.")
        uvicorn_log("INFO", "Application shutdown complete.")
        return None
    server.daemon_threads = True
    uvicorn_log("INFO", f"Uvicorn running on http://{host}:{port} (Press CTRL+C to quit)")
    return server
