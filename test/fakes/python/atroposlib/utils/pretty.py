"""What ``rich.print`` writes for pydantic models and lists of them when stdout is not a terminal
(80 columns): one line when it fits, otherwise one field per line, indented by four.

Every field is printed, secrets included: the real CLI prints the resolved server config, api_key
and all, so whoever captures this output must redact it.
"""
from typing import Any

from pydantic import BaseModel

WIDTH = 80


def _inline(value: Any) -> str:
    if isinstance(value, BaseModel):
        fields = ", ".join(f"{name}={_inline(getattr(value, name))}" for name in type(value).model_fields)
        return f"{type(value).__name__}({fields})"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    return repr(value)


def pretty(value: Any, indent: int = 0) -> str:
    one_line = _inline(value)
    if indent + len(one_line) <= WIDTH or not isinstance(value, (BaseModel, list)):
        return one_line
    pad = " " * (indent + 4)
    if isinstance(value, BaseModel):
        items = [f"{pad}{name}={pretty(getattr(value, name), indent + 4 + len(name) + 1)}" for name in type(value).model_fields]
        return f"{type(value).__name__}(\n" + ",\n".join(items) + "\n" + " " * indent + ")"
    items = [pad + pretty(item, indent + 4) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def rprint(value: Any) -> None:
    print(pretty(value))
