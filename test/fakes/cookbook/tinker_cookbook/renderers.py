"""Renderers (tinker_cookbook/renderers): chat messages to prompt tokens and sampled tokens back
to a message. Every renderer name renders ChatML here ("<|im_start|>role\\ncontent<|im_end|>\\n",
then "<|im_start|>assistant\\n" to generate), stopping at "<|im_end|>"."""
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import tinker

from tinker_cookbook.tokenizer_utils import Tokenizer

Message = dict[str, Any]
_END = "<|im_end|>"


@dataclass(frozen=True)
class ParseTermination:
    is_stop_sequence: bool

    @property
    def is_clean(self) -> bool:
        return self.is_stop_sequence


class Renderer:
    def __init__(self, name: str, tokenizer: Tokenizer) -> None:
        self.name = name
        self.tokenizer = tokenizer

    def get_stop_sequences(self) -> list[str]:
        return [_END]

    def build_generation_prompt(self, messages: list[Message]) -> tinker.ModelInput:
        text = "".join(f"<|im_start|>{m['role']}\n{format_content_as_string(m.get('content', ''))}{_END}\n" for m in messages)
        return tinker.ModelInput.from_ints(self.tokenizer.encode(text + "<|im_start|>assistant\n"))

    def parse_response(self, tokens: list[int]) -> tuple[Message, ParseTermination]:
        """The reply up to its stop sequence; a reply that ends with the end-of-sequence token
        also counts as stopped (the fake sampler ends its text so)."""
        text = self.tokenizer.decode(tokens)
        stopped = _END in text or (bool(tokens) and tokens[-1] == self.tokenizer.eos_token_id)
        return {"role": "assistant", "content": text.split(_END, 1)[0]}, ParseTermination(stopped)


def get_renderer(name: str, tokenizer: Tokenizer) -> Renderer:
    return Renderer(name, tokenizer)


def format_content_as_string(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


class TrainOnWhat(StrEnum):
    """Which tokens of a conversation a supervised loss counts."""

    LAST_ASSISTANT_MESSAGE = "last_assistant_message"
    LAST_ASSISTANT_TURN = "last_assistant_turn"
    ALL_ASSISTANT_MESSAGES = "all_assistant_messages"
    ALL_MESSAGES = "all_messages"
    ALL_TOKENS = "all_tokens"
    ALL_USER_AND_SYSTEM_MESSAGES = "all_user_and_system_messages"
    CUSTOMIZED = "customized"


def get_text_content(message: Message) -> str:
    return format_content_as_string(message.get("content", ""))
