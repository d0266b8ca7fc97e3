"""CLI helpers as in atroposlib/utils/cli.py, plus the flag checking pydantic-cli's argparse does.

The real CLI parses argv twice: pydantic-cli's argparse pass rejects unknown flags and flags
without a value (exit 2), then ``get_double_dash_flags`` re-reads argv raw and those raw strings are
the values actually merged. Both passes are reproduced here, quirks included.
"""
import os
import sys
import textwrap
from typing import Any, Dict, List, NoReturn, Optional, Sequence


def merge_dicts(*dicts: Dict[str, Any]) -> Dict[str, Any]:
    """Later dicts win; nested dicts are merged recursively."""
    if not dicts:
        return {}
    result = dicts[0].copy()
    for current in dicts[1:]:
        for key, value in current.items():
            if key in result and isinstance(result[key], dict) and isinstance(value, dict):
                result[key] = merge_dicts(result[key], value)
            else:
                result[key] = value
    return result


def extract_namespace(data: Dict[str, Any], prefix: str) -> Dict[str, Any]:
    return {key[len(prefix):]: value for key, value in data.items() if key.startswith(prefix)}


def get_double_dash_flags(argv: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """The raw pass: ``--k=v`` or ``--k v``; a next token starting with ``-`` is not a value (the
    flag becomes ``True``, so negatives need ``=``); the string "None" becomes None."""
    args = list(sys.argv[1:] if argv is None else argv)
    flags: Dict[str, Any] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("--"):
            i += 1
            continue
        key_part = arg[2:]
        if "=" in key_part:
            key, value = key_part.split("=", 1)
            if key:
                flags[key] = None if value == "None" else value
            i += 1
        elif i + 1 < len(args) and not args[i + 1].startswith("-"):
            flags[key_part] = None if args[i + 1] == "None" else args[i + 1]
            i += 2
        else:
            if key_part:
                flags[key_part] = True
            i += 1
    return flags


def _looks_like_negative_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return token.startswith("-")


class FlagSpec:
    """One ``--name VALUE`` option of a subcommand, with its help text."""

    def __init__(self, name: str, help_text: str = ""):
        self.name = name
        self.help_text = help_text

    @property
    def metavar(self) -> str:
        return self.name.upper()


def _usage(prog: str, flags: List[FlagSpec]) -> str:
    parts = ["[-h]"] + [f"[--{flag.name} {flag.metavar}]" for flag in flags]
    head = f"usage: {prog} "
    return textwrap.fill(" ".join(parts), width=100, initial_indent=head, subsequent_indent=" " * len(head))


def _fail(prog: str, usage: str, message: str) -> NoReturn:
    sys.stderr.write(f"{usage}\n{prog}: error: {message}\n")
    sys.exit(2)


def check_command_line(description: str, commands: Dict[str, List[FlagSpec]], argv: Optional[Sequence[str]] = None) -> str:
    """The argparse pass: returns the subcommand, prints help (exit 0) or an argparse error (exit 2)."""
    args = list(sys.argv[1:] if argv is None else argv)
    prog = os.path.basename(sys.argv[0]) or "env.py"
    choices = ", ".join(f"'{name}'" for name in commands)
    top_usage = f"usage: {prog} [-h] {{{','.join(commands)}}} ..."
    if not args or args[0] in ("-h", "--help"):
        if not args:
            _fail(prog, top_usage, f"the following arguments are required: {{{','.join(commands)}}}")
        sys.stdout.write(f"{top_usage}\n\n{description}\n\npositional arguments:\n  {{{','.join(commands)}}}\n")
        sys.exit(0)
    command = args[0]
    if command not in commands:
        _fail(prog, top_usage, f"argument {{{','.join(commands)}}}: invalid choice: '{command}' (choose from {choices})")

    flags = commands[command]
    known = {flag.name for flag in flags}
    sub_prog = f"{prog} {command}"
    usage = _usage(sub_prog, flags)
    unrecognized: List[str] = []
    rest = args[1:]
    i = 0
    while i < len(rest):
        token = rest[i]
        if token in ("-h", "--help"):
            lines = [usage, "", "options:", "  -h, --help            show this help message and exit"]
            for flag in flags:
                lines.append(f"  --{flag.name} {flag.metavar}")
                if flag.help_text:
                    lines.append(textwrap.fill(flag.help_text, width=100, initial_indent=" " * 24, subsequent_indent=" " * 24))
            sys.stdout.write("\n".join(lines) + "\n")
            sys.exit(0)
        if token.startswith("--") and len(token) > 2:
            name, has_value, _ = token[2:].partition("=")
            if name not in known:
                # Its value, if any, is left to the next turn and reported too, as argparse does.
                unrecognized.append(token)
            elif not has_value:
                following = rest[i + 1] if i + 1 < len(rest) else None
                if following is None or (following.startswith("-") and not _looks_like_negative_number(following)):
                    _fail(sub_prog, usage, f"argument --{name}: expected one argument")
                i += 1
        else:
            unrecognized.append(token)
        i += 1
    if unrecognized:
        _fail(sub_prog, usage, f"unrecognized arguments: {' '.join(unrecognized)}")
    return command
