"""Test fake of OpenAI's ``chz`` (the config library tinker-cookbook's recipes are built on), written
from chz's source (openai/chz, ``chz/blueprint/_entrypoint.py``, ``_argv.py``, ``_argmap.py``,
``_blueprint.py``, ``tiepin.py``); see test/fakes/cookbook/tinker_cookbook/__init__.py for what the
recipes need of it.

What it keeps of upstream:
- ``@chz.chz`` makes a frozen, keyword-only class from annotated fields; ``chz.field(default=,
  default_factory=, munger=, doc=)``; ``chz.asdict``, ``chz.is_chz``, ``chz.chz_fields``.
- ``chz.entrypoint(Target)`` reads ``key=value`` words from ``sys.argv[1:]`` (the last one of a key
  wins, ``a.b=v`` sets key ``b`` of a dict field) and casts each value by the field's type: ``str``,
  ``int``, ``float``, ``bool`` (t/true/True/1, f/false/False/0), ``None`` (the word ``None``),
  ``Literal[...]``, enums (by name, then by value), unions (literals and None first, ``str``
  last), ``dict``/``Any`` (a Python literal).
- The same failures with the same text, printed to stderr after ``Error:`` with exit code 1:
  a value that does not cast ("Could not interpret argument 'abc' provided for param 'lora_rank'..."),
  a key that is not a field ("Extraneous argument 'lora_rnk' to Blueprint for CLIConfig" with a
  "Did you mean 'lora_rank'?" when a field name is close), a required field left out ("Missing
  required arguments for parameter(s): name").  A word without ``=`` is not caught by upstream:
  it ends the process with a ValueError traceback ("Invalid argument 'foo'. Specify arguments in
  the form key=value"), exit code 1.
- ``--help`` prints "Entry point: ...", the class docstring and an "Arguments:" table (name, type,
  ``<value> (default)`` or ``<value> (from command line)``) to stdout and exits with code 1.
Nested chz objects, wildcards (``...``), references (``key@=``) and polymorphic construction are
not supported; no recipe field the tests use needs them.
"""
from __future__ import annotations

import ast
import difflib
import enum
import sys
import types
import typing
from typing import Any, Callable

__all__ = ["chz", "field", "asdict", "is_chz", "chz_fields", "entrypoint"]

_MISSING: Any = object()
_FIELDS = "__chz_fields__"
# A key is suggested when its similarity to a field name reaches this (chz _wildcard.py).
_FUZZY_SIMILARITY = 0.6


class Field:
    def __init__(self, *, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None,
                 munger: Callable[[Any, Any], Any] | None = None, doc: str = "") -> None:
        self.name = ""
        self.type: Any = Any
        self.default = default
        self.default_factory = default_factory
        self.munger = munger
        self.doc = doc

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def default_value(self) -> Any:
        return self.default_factory() if self.default_factory is not None else self.default


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None,
          munger: Callable[[Any, Any], Any] | None = None, doc: str = "") -> Any:
    return Field(default=default, default_factory=default_factory, munger=munger, doc=doc)


def _resolved_hints(cls: type) -> dict[str, Any]:
    module = sys.modules.get(cls.__module__)
    return typing.get_type_hints(cls, globalns=vars(module) if module else None)


def _make_class(cls: type) -> type:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(getattr(base, _FIELDS, {}))
    hints = _resolved_hints(cls)
    for name in cls.__dict__.get("__annotations__", {}):
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        spec.name = name
        spec.type = hints.get(name, Any)
        fields[name] = spec
        if name in cls.__dict__:
            delattr(cls, name)

    def __init__(self, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(fields))
        if unknown:
            raise TypeError(f"{cls.__name__}.__init__() got an unexpected keyword argument {unknown[0]!r}")
        missing = [name for name, spec in fields.items() if spec.required and name not in kwargs]
        if missing:
            raise TypeError(f"{cls.__name__}.__init__() missing required keyword argument(s): {', '.join(missing)}")
        for name, spec in fields.items():
            value = kwargs[name] if name in kwargs else spec.default_value()
            if spec.munger is not None:
                value = spec.munger(self, value)
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Cannot modify field {name!r} of frozen chz class {cls.__name__}")

    def __repr__(self) -> str:
        return f"{cls.__name__}(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in fields) + ")"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, n) == getattr(other, n) for n in fields)

    setattr(cls, _FIELDS, fields)
    cls.__init__ = __init__  # type: ignore[misc]
    cls.__setattr__ = __setattr__  # type: ignore[assignment]
    cls.__repr__ = __repr__  # type: ignore[assignment]
    cls.__eq__ = __eq__  # type: ignore[assignment]
    cls.__hash__ = None  # type: ignore[assignment]
    return cls


def chz(cls: type | None = None, *, version: str | None = None, typecheck: bool | None = None) -> Any:
    if cls is None:
        return _make_class
    return _make_class(cls)


def is_chz(obj: Any) -> bool:
    return hasattr(obj if isinstance(obj, type) else type(obj), _FIELDS)


def chz_fields(obj: Any) -> dict[str, Field]:
    return dict(getattr(obj if isinstance(obj, type) else type(obj), _FIELDS))


def asdict(obj: Any) -> dict[str, Any]:
    """Field values in declaration order, nested chz objects as dicts (like upstream's asdict)."""
    return {name: asdict(getattr(obj, name)) if is_chz(getattr(obj, name)) else getattr(obj, name)
            for name in chz_fields(obj)}


# --- type names and casting (chz tiepin.py) -----------------------------------------------------

def type_repr(typ: Any) -> str:
    if typ is type(None) or typ is None:
        return "None"
    if typ is Any:
        return "typing.Any"
    origin = typing.get_origin(typ)
    args = typing.get_args(typ)
    if origin is typing.Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_repr(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', repr(origin))}[{', '.join(type_repr(a) for a in args)}]"
    if isinstance(typ, type):
        if typ.__module__ in ("builtins", "__main__"):
            return typ.__qualname__
        return f"{typ.__module__}:{typ.__qualname__}"
    return repr(typ)


class CastError(Exception):
    pass


def _union_order(arg: Any) -> int:
    if typing.get_origin(arg) is typing.Literal:
        return -2
    if arg is type(None):
        return -1
    return 1 if arg is str else 0


def _cast(text: str, typ: Any) -> Any:
    fail = CastError(f"Could not cast {text!r} to {type_repr(typ)}")
    origin = typing.get_origin(typ)
    if origin in (typing.Union, types.UnionType):
        for arg in sorted(typing.get_args(typ), key=_union_order):
            try:
                return _cast(text, arg)
            except CastError:
                pass
        raise fail
    if origin is typing.Literal:
        for value in typing.get_args(typ):
            try:
                if _cast(text, type(value)) == value:
                    return value
            except CastError:
                pass
        raise fail
    if typ is type(None) or typ is None:
        if text == "None":
            return None
        raise fail
    if typ is bool:
        if text in ("t", "true", "True", "1"):
            return True
        if text in ("f", "false", "False", "0"):
            return False
        raise fail
    if typ is str:
        return text
    if typ in (int, float):
        try:
            return typ(text)
        except ValueError:
            raise fail from None
    if isinstance(typ, type) and issubclass(typ, enum.Enum):
        if text in typ.__members__:
            return typ[text]
        for member in typ:
            try:
                if _cast(text, type(member.value)) == member.value:
                    return member
            except CastError:
                pass
        raise fail
    if typ is Any or typ is object or origin in (dict, list, tuple) or typ in (dict, list, tuple):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            if typ is Any or typ is object:
                return {"true": True, "false": False, "none": None, "null": None}.get(text, text)
            raise fail from None
        if (origin or typ) in (dict, list, tuple) and not isinstance(value, origin or typ):
            raise fail
        return value
    raise fail


def _factory_failure(text: str, typ: Any) -> str:
    """The second half of upstream's message: why the word is not a class name either."""
    origin = typing.get_origin(typ)
    if origin in (typing.Union, types.UnionType):
        return f"Could not produce a union instance from {text!r}"
    if origin is not None:
        return f"Could not produce a {type_repr(typ)} instance from {text!r}"
    base = text.rsplit(".", 1)[-1] if not text.isidentifier() and "." in text else text
    suffix = "" if base.isidentifier() else " (invalid identifier)"
    return f"No subclass of {type_repr(typ)} named {base!r}{suffix}"


# --- the entrypoint (chz blueprint/_entrypoint.py, _argv.py, _argmap.py) -------------------------

class EntrypointException(Exception):
    pass


class EntrypointHelpException(EntrypointException):
    pass


def _parse_argv(argv: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for arg in argv:
        if "=" not in arg:
            # Upstream raises this outside its own error handling: a traceback, not "Error:".
            raise ValueError(f"Invalid argument {arg!r}. Specify arguments in the form key=value")
        key, value = arg.split("=", 1)
        values[key] = value
    return values


def _suggestion(key: str, names: list[str]) -> str | None:
    best, best_ratio = None, 0.0
    for name in names:
        ratio = difflib.SequenceMatcher(a=key, b=name).ratio()
        if ratio >= _FUZZY_SIMILARITY and ratio > best_ratio:
            best, best_ratio = name, ratio
    return best


def _help(target: type, fields: dict[str, Field], given: dict[str, str]) -> str:
    rows = []
    for name, spec in fields.items():
        if name in given:
            shown = f"{given[name]} (from command line)"
        elif spec.required:
            shown = "-"
        elif spec.default_factory is not None:
            shown = f"{type_repr(spec.default_factory)}() (default)"
        else:
            text = repr(spec.default)
            shown = f"{text if len(text) <= 40 else '<default>'} (default)"
        rows.append((name, type_repr(spec.type), shown, spec.doc))
    widths = [min(40, max(len(row[i]) for row in rows)) for i in range(3)]
    lines = [f"Entry point: {type_repr(target)}", ""]
    if target.__doc__:
        lines += ["  " + target.__doc__.strip(), ""]
    lines.append("Arguments:")
    for row in rows:
        # Columns are padded to the widest cell (at most 40); a longer cell pushes the next one
        # to the following multiple of 20, as upstream's get_help does.
        line, col, target_col = "", 0, 0
        for cell, width in zip(row[:3], widths):
            col += 2 + len(cell)
            target_col += 2 + width
            pad = target_col - col if col <= target_col else (-len(cell)) % 20
            line += "  " + cell + " " * pad
            col += pad
        lines.append((line + "  " + row[3]).rstrip())
    return "\n".join(lines) + "\n"


def _make(target: type, argv: list[str]) -> Any:
    fields = chz_fields(target)
    given = _parse_argv([a for a in argv if a != "--help"])
    if "--help" in argv:
        raise EntrypointHelpException(_help(target, fields, given))
    kwargs: dict[str, Any] = {}
    for key, text in given.items():
        name, _, subkey = key.partition(".")
        if name not in fields or (subkey and typing.get_origin(fields[name].type) is not dict
                                  and dict not in map(typing.get_origin, typing.get_args(fields[name].type))):
            close = _suggestion(key, list(fields))
            extra = f"\nDid you mean {close!r}?" if close else " (from command line)"
            raise EntrypointException(f"Extraneous argument {key!r} to Blueprint for {type_repr(target)}"
                                      f"{extra}\nAppend --help to your command to see valid arguments")
        typ = fields[name].type
        try:
            if subkey:
                kwargs.setdefault(name, {})[subkey] = _cast(text, Any)
                continue
            kwargs[name] = _cast(text, typ)
        except CastError as error:
            raise EntrypointException(
                f"Could not interpret argument {text!r} provided for param {key!r}...\n\n"
                f"- Failed to interpret it as a value:\n{error}\n\n"
                f"- Failed to interpret it as a factory for polymorphic construction:\n{_factory_failure(text, typ)}"
            ) from None
    missing = [name for name, spec in fields.items() if spec.required and name not in kwargs]
    if missing:
        raise EntrypointException(f"Missing required arguments for parameter(s): {', '.join(missing)}")
    return target(**kwargs)


def entrypoint(target: type, *, argv: list[str] | None = None, allow_hyphens: bool = False) -> Any:
    try:
        return _make(target, list(sys.argv[1:] if argv is None else argv))
    except EntrypointException as error:
        text = str(error)
        if isinstance(error, EntrypointHelpException):
            print(text, end="" if text.endswith("\n") else "\n")
        else:
            print("Error:", file=sys.stderr)
            print(text, end="" if text.endswith("\n") else "\n", file=sys.stderr)
        sys.exit(1)
