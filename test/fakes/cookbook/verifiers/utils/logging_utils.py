"""Console output of verifiers (verifiers/__init__.py ``setup_logging``, utils/logging_utils.py):
its loggers write "<time> - <name> - <LEVEL> - <message>" to stderr and do not propagate (so a
cookbook run's logs.log never holds them). The sample table upstream draws with rich is plain text
here: each message as "<role>: <content>", then "reward: <r>"."""
import logging
import sys
from typing import Any


def setup_logging(level: str = "INFO", log_format: str | None = None, date_format: str | None = None) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(fmt=log_format or "%(asctime)s - %(name)s - %(levelname)s - %(message)s",
                                           datefmt=date_format or "%Y-%m-%d %H:%M:%S"))
    logger = logging.getLogger("verifiers")
    logger.handlers.clear()
    logger.setLevel(level.upper())
    logger.addHandler(handler)
    logger.propagate = False


def print_time(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds // 3600:.0f}h {(seconds % 3600) // 60:.0f}m"
    if seconds >= 60:
        return f"{seconds // 60:.0f}m {seconds % 60:.0f}s"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    return f"{seconds:.1f}s"


def print_prompt_completions_sample(prompts: list[Any], completions: list[Any], errors: list[Any],
                                    rewards: list[float], step: int, num_samples: int = 1) -> None:
    def text(messages: Any) -> str:
        if isinstance(messages, str):
            return messages
        return "\n\n".join(f"{m.get('role', '')}: {m.get('content', '')}" for m in messages or [])

    print(f"Step {step}")
    for i in range(min(num_samples, len(prompts))):
        print(f"prompt:\n{text(prompts[i])}\ncompletion:\n{text(completions[i])}")
        if i < len(errors) and errors[i] is not None:
            from verifiers.envs.environment import ErrorChain

            print(f"error: {ErrorChain(errors[i])!r}")
        print(f"reward: {rewards[i] if i < len(rewards) else 0.0:.2f}")
