"""``run-api``: serves the Atropos API like ``uvicorn.run("atroposlib.api:app", host, port, reload)``."""
import argparse
import os
import signal
import sys
import threading

from atroposlib.api.server import ApiState, build_routes
from atroposlib.utils.json_http import start_server, uvicorn_log


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", type=str, default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--reload", action="store_true")
    args = parser.parse_args()

    server = start_server(build_routes(ApiState()), args.host, args.port)
    if server is None:
        sys.exit(1)

    def shut_down(_signum, _frame):
        # shutdown() waits for serve_forever() to return, which runs on this (the main) thread.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, shut_down)
    signal.signal(signal.SIGINT, shut_down)
    # uvicorn stops within milliseconds of SIGTERM; the default 0.5 s poll would make every stop look slow.
    server.serve_forever(poll_interval=0.05)
    uvicorn_log("INFO", "Shutting down")
    server.server_close()
    uvicorn_log("INFO", "Waiting for application shutdown.")
    uvicorn_log("INFO", "Application shutdown complete.")
    uvicorn_log("INFO", f"Finished server process [{os.getpid()}]")


if __name__ == "__main__":
    main()
