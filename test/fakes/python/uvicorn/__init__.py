"""Test fake of ``uvicorn.run``: serves an app on (host, port) the way uvicorn binds and logs, with
the fakes' small HTTP server. Only what tinker-atropos' trainer calls: ``run(app, host, port, log_level)``,
blocking, in the caller's thread; a port already taken ends the call after the error line, as it
ends uvicorn's serve loop (upstream's trainer then trains on without its inference server). As
uvicorn, one access line per request on stderr unless ``access_log=False``."""
from atroposlib.utils.json_http import start_server


def run(app, host="127.0.0.1", port=8000, log_level="info", access_log=True, **_ignored):
    server = start_server(app.routes(), host, port, access_log=access_log)
    if server is not None:
        server.serve_forever()
