"""Records every SIGTERM a Python process receives, to test who is signalled in which order.

A test copies this file into a fresh directory and puts that directory first on PYTHONPATH (which
the server passes to its children): every Python process of the run then imports it at start-up.
Each SIGTERM appends ``<monotonic ns> <pid> <script> SIGTERM`` to ``signals.log`` beside this file,
then does what the program asked for (its own handler, ignore, or the default: die by SIGTERM).
Handlers the program installs later are wrapped the same way, so nothing it does is changed.
"""
import os
import signal
import sys
import time

_LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "signals.log")
_install = signal.signal
_handlers = {signal.SIGTERM: signal.SIG_DFL}


def _script() -> str:
    argv = getattr(sys, "argv", None) or ["?"]
    if argv[0] == "-c":
        return "-c"
    if argv[0] == "-m" or argv[0].endswith("run_api.py"):
        return "run-api"
    return os.path.basename(argv[0])


def _on_sigterm(signum, frame):
    with open(_LOG, "a") as log:
        log.write(f"{time.monotonic_ns()} {os.getpid()} {_script()} SIGTERM\n")
    handler = _handlers[signum]
    if handler == signal.SIG_IGN:
        return
    if handler == signal.SIG_DFL or handler is None:
        _install(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    handler(signum, frame)


def _signal(signum, handler):
    if signum != signal.SIGTERM:
        return _install(signum, handler)
    previous = _handlers[signum]
    _handlers[signum] = handler
    return previous


signal.signal = _signal
_install(signal.SIGTERM, _on_sigterm)
