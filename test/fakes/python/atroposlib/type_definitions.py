"""Type aliases environments import, as in atroposlib/type_definitions.py."""
from typing import Any, TypedDict

Item = Any
UUID = str


class Message(TypedDict):
    role: str
    content: str
