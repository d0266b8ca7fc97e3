"""The cookbook's run records (tinker_cookbook/utils/ml_log.py, stores/training_store.py).

``setup_logging(log_dir, wandb_project, wandb_name, config)`` in this order:
1. ``config.json``: the trainer's Config (not the recipe's CLIConfig) as JSON with indent 2, fields
   in declaration order, chz objects as nested dicts, callables as "module.name", anything else
   that JSON cannot hold as its type's str; ``code.diff`` beside it.
2. W&B, only with ``wandb_project`` set: without WANDB_API_KEY it prints "WARNING: WANDB_API_KEY
   environment variable not set. Skipping W&B logging. " and goes on; else ``wandb.init(project,
   config, dir=log_dir, name=wandb_name)`` and ``wandb.log(metrics, step=step)`` per row.
3. The log file ``logs.log`` (appended): every record of the root logger as
   "<logger name>:<line> [<LEVEL>] <message>", first "root:<line> [INFO] Command line invocation:
   <shell-quoted argv>"; the same lines, with coloured levels, on stderr. Uncaught exceptions are
   not logged: their tracebacks reach stderr only.
``log_metrics(metrics, step)`` appends one line to ``metrics.jsonl``: ``{"step": step, ...metrics}``
and logs "Wrote metrics to <log_dir>/metrics.jsonl" and a table of the row.
"""
from __future__ import annotations

import json
import logging
import os
import shlex
import sys
from dataclasses import asdict, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import chz

logger = logging.getLogger(__name__)

try:
    import wandb
except ImportError:
    wandb = None


def dump_config(config: Any) -> Any:
    if hasattr(config, "to_dict"):
        return config.to_dict()
    if chz.is_chz(config):
        return {k: dump_config(v) for k, v in chz.asdict(config).items()}
    if is_dataclass(config) and not isinstance(config, type):
        return {k: dump_config(v) for k, v in asdict(config).items()}
    if isinstance(config, dict):
        return {k: dump_config(v) for k, v in config.items()}
    if isinstance(config, (list, tuple)):
        return [dump_config(v) for v in config]
    if isinstance(config, Enum):
        return config.value
    if hasattr(config, "__dict__"):
        return {k: dump_config(v) for k, v in config.__dict__.items() if not k.startswith(("_", "X_"))}
    if callable(config):
        return f"{config.__module__}.{config.__name__}"
    return config


class _PermissiveJSONEncoder(json.JSONEncoder):
    def default(self, o: Any) -> Any:
        return str(type(o))


class Logger:
    def log_hparams(self, config: Any) -> None:
        pass

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        pass

    def close(self) -> None:
        pass

    def get_logger_url(self) -> str | None:
        return None


class JsonLogger(Logger):
    def __init__(self, log_dir: str) -> None:
        self.log_dir = log_dir
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        self._logged_hparams = False

    def log_hparams(self, config: Any) -> None:
        if self._logged_hparams:
            return
        sanitized = json.loads(json.dumps(dump_config(config), cls=_PermissiveJSONEncoder))
        Path(self.log_dir, "config.json").write_text(json.dumps(sanitized, indent=2))
        # Upstream writes the cookbook's git state; an installed package is in no repository.
        import tinker_cookbook

        module_dir = Path(tinker_cookbook.__file__).resolve().parent
        Path(self.log_dir, "code.diff").write_text(
            f"### module: tinker_cookbook (not in a git repository)\nmodule_path: {module_dir}\n")
        self._logged_hparams = True

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        record: dict[str, Any] = {"step": step} if step is not None else {}
        record.update(metrics)
        with open(Path(self.log_dir, "metrics.jsonl"), "a") as f:
            f.write(json.dumps(record) + "\n")
        logger.info("Wrote metrics to %s/metrics.jsonl", self.log_dir)


class PrettyPrintLogger(Logger):
    """The metrics table upstream draws with rich, as plain text in one log record."""

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        rows = [(k, f"{v:.6f}" if isinstance(v, float) else str(v)) for k, v in sorted(metrics.items())
                if not k.endswith((":total", ":count"))]
        if not rows:
            return
        width = min(max(max(len(k) for k, _ in rows), 20), 60)
        title = [f"Step {step}"] if step is not None else []
        logger.info("\n" + "\n".join(title + [f"{k.ljust(width)}  {v}" for k, v in rows]))


class WandbLogger(Logger):
    def __init__(self, project: str | None, config: Any, log_dir: str | None, wandb_name: str | None) -> None:
        self.run = wandb.init(project=project, config=dump_config(config) if config else None,
                              dir=log_dir, name=wandb_name)

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        wandb.log(metrics, step=step)
        logger.info("Logging to: %s", self.get_logger_url())

    def close(self) -> None:
        wandb.finish()

    def get_logger_url(self) -> str | None:
        # The tests' wandb fake (test/fakes/python/wandb) keeps no run URL.
        return getattr(self.run, "url", None)


class MultiplexLogger(Logger):
    def __init__(self, loggers: list[Logger]) -> None:
        self.loggers = loggers

    def log_hparams(self, config: Any) -> None:
        for child in self.loggers:
            child.log_hparams(config)

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        for child in self.loggers:
            child.log_metrics(metrics, step)

    def close(self) -> None:
        for child in self.loggers:
            child.close()

    def get_logger_url(self) -> str | None:
        return next((url for child in self.loggers if (url := child.get_logger_url())), None)


def setup_logging(log_dir: str, wandb_project: str | None = None, wandb_name: str | None = None,
                  config: Any | None = None, do_configure_logging_module: bool = True) -> Logger:
    local_log_dir = str(Path(log_dir).expanduser())
    loggers: list[Logger] = [JsonLogger(local_log_dir), PrettyPrintLogger()]
    if wandb_project:
        if wandb is None:
            print("WARNING: wandb is not installed. Skipping W&B logging.")
        elif not os.environ.get("WANDB_API_KEY"):
            print("WARNING: WANDB_API_KEY environment variable not set. Skipping W&B logging. ")
        else:
            loggers.append(WandbLogger(wandb_project, config, local_log_dir, wandb_name))
    ml_logger = MultiplexLogger(loggers)
    if config is not None:
        ml_logger.log_hparams(config)
    if do_configure_logging_module:
        configure_logging_module(str(Path(local_log_dir) / "logs.log"))
    logger.info(f"Logging to: {log_dir}")
    return ml_logger


_COLORS = {"DEBUG": "\033[94m", "INFO": "\033[92m", "WARNING": "\033[93m", "ERROR": "\033[91m", "CRITICAL": "\033[95m"}


class _ColorFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        record.levelname_colored = f"{_COLORS.get(record.levelname, '')}{record.levelname}\033[0m"
        return super().format(record)


def configure_logging_module(path: str, level: int = logging.INFO) -> logging.Logger:
    console = logging.StreamHandler()
    console.setFormatter(_ColorFormatter("%(name)s:%(lineno)d [%(levelname_colored)s] %(message)s"))
    file_handler = logging.FileHandler(path, mode="a", encoding="utf-8")
    file_handler.setFormatter(logging.Formatter("%(name)s:%(lineno)d [%(levelname)s] %(message)s"))
    root = logging.getLogger()
    root.setLevel(level)
    for handler in root.handlers[:]:
        root.removeHandler(handler)
        handler.close()
    root.addHandler(console)
    root.addHandler(file_handler)
    root.info("Command line invocation: %s", shlex.join(sys.argv) if sys.argv else "<empty sys.argv>")
    return root
