"""Message helpers (verifiers/utils/message_utils.py) the cookbook's verifiers_rl evaluate imports."""
from typing import Any


def message_to_printable(message: dict[str, Any]) -> dict[str, Any]:
    """A message with image parts left out of its content."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if part.get("type") == "text")
        return {**message, "content": content}
    return message


def messages_to_printable(messages: Any) -> Any:
    if isinstance(messages, str):
        return messages
    return [message_to_printable(m) for m in messages or []]
