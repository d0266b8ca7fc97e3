"""Runs tinker-atropos' launch_training.py with its inference server on a port the server chose.

Usage: run_trainer.py --port PORT [--host HOST] LAUNCH_TRAINING.py [its arguments...]

Upstream's trainer starts its inference server with `uvicorn.run(app, host="0.0.0.0", port=8001)`
(a fork reads the port from its config instead), so two runs on one host would fight over 8001.
Every variant goes through `uvicorn.run`, looked up when the server thread starts: replacing it
before the script runs moves the server to PORT on HOST (127.0.0.1 unless given: a run on a Slurm
node is probed from the server's host, so it listens on 0.0.0.0) without changing the checkout. The
script then runs as `python launch_training.py` would run it: its own folder first on sys.path,
argv as given, `__main__` as its name. The "port 8001" line it prints stays; the port is PORT.

The same replacement turns uvicorn's access log off: it writes one line per request into the
trainer log, and every sampling call of the environment is a POST /generate (thousands a
minute), which would bury the trainer's own lines.
"""
import os
import runpy
import sys


def move_server(port, host):
    try:
        import uvicorn
    except ImportError:
        print("run_trainer: uvicorn is not importable; the inference server keeps its own port", file=sys.stderr)
        return
    original = uvicorn.run

    def run(app, *args, **kwargs):
        kwargs["host"] = host
        kwargs["port"] = port
        kwargs["access_log"] = False
        print(f"run_trainer: inference server on {host}:{port}, access log off", flush=True)
        return original(app, *args, **kwargs)

    uvicorn.run = run


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "--port":
        print(__doc__, file=sys.stderr)
        return 2
    port = int(sys.argv[2])
    rest = sys.argv[3:]
    host = "127.0.0.1"
    if rest[:1] == ["--host"] and len(rest) >= 3:
        host, rest = rest[1], rest[2:]
    script = os.path.abspath(rest[0])
    sys.argv = [script] + rest[1:]
    sys.path[0] = os.path.dirname(script)
    move_server(port, host)
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
