"""Parsers (verifiers/parsers/parser.py, maybe_think_parser.py): what a reward function reads of a
completion."""
from __future__ import annotations

import re
from typing import Any, Callable


class Parser:
    def __init__(self, extract_fn: Callable[[str], str] = lambda text: text) -> None:
        self.extract_fn = extract_fn

    def parse(self, text: str) -> Any:
        return self.extract_fn(text)

    def get_assistant_messages(self, completion: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [m for m in completion if m.get("role") == "assistant"]

    def parse_answer(self, completion: Any) -> str | None:
        if isinstance(completion, str):
            return self.parse(completion)
        messages = self.get_assistant_messages(completion or [])
        if not messages:
            return None
        return self.parse(str(messages[-1].get("content", "")))


class MaybeThinkParser(Parser):
    """Drops a leading ``<think>...</think>`` before extracting."""

    def parse(self, text: str) -> Any:
        return self.extract_fn(re.sub(r"^.*?</think>", "", text, flags=re.DOTALL).strip())
