"""``check_log_dir`` (tinker_cookbook/cli_utils.py), which every recipe calls before training.

When ``log_dir`` exists: "delete" removes it; "resume" goes on (the trainer then resumes from the
last ``state_path`` in its checkpoints.jsonl); "raise" raises ``ConfigurationError("Log directory
<dir> already exists. Will not delete it.")``; "ask" (every recipe's default) prompts on stdout with
``input()``, "Log directory <dir> already exists. What do you want to do? [delete, resume, exit]: "
(no newline), and waits for a line on stdin: "delete", "resume" or "exit" (exit code 0); anything
else logs "Invalid input: ..." and asks again. With stdin at end of file (closed, /dev/null)
``input()`` raises ``EOFError: EOF when reading a line``: a traceback and exit code 1."""
import logging
import shutil
from pathlib import Path
from typing import Literal

from tinker_cookbook.exceptions import ConfigurationError

logger = logging.getLogger(__name__)

LogdirBehavior = Literal["delete", "resume", "ask", "raise"]


def model_name_from_argv(argv: list[str], default: str) -> str:
    """The last ``model_name=`` of argv (chz's precedence), else ``default``."""
    model_name = default
    for arg in argv:
        if arg.startswith("model_name="):
            model_name = arg.removeprefix("model_name=")
    return model_name


def check_log_dir(log_dir: str, behavior_if_exists: LogdirBehavior) -> None:
    if not Path(log_dir).exists():
        logger.info(f"Log directory {log_dir} does not exist. Will create it and start logging there.")
        return
    if behavior_if_exists == "delete":
        logger.info(f"Log directory {log_dir} already exists. Will delete it and start logging there.")
        shutil.rmtree(log_dir)
    elif behavior_if_exists == "ask":
        while True:
            answer = input(f"Log directory {log_dir} already exists. What do you want to do? [delete, resume, exit]: ")
            if answer == "delete":
                shutil.rmtree(log_dir)
                return
            if answer == "resume":
                return
            if answer == "exit":
                exit(0)
            logger.warning(f"Invalid input: {answer}. Please enter 'delete', 'resume', or 'exit'.")
    elif behavior_if_exists == "raise":
        raise ConfigurationError(f"Log directory {log_dir} already exists. Will not delete it.")
    elif behavior_if_exists != "resume":
        raise AssertionError(f"Invalid behavior_if_exists: {behavior_if_exists}")
