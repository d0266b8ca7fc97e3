"""Describes the config fields of one Atropos environment, run by the server as its own process.

Usage: introspect.py --file ENV.py --class EnvClass [--config-class Name] [--static-only]

Import mode: imports the file as a real run would (the checkout root and the file's directory on
sys.path, argv holding only the file), calls `EnvClass.config_init()` and describes every field of
`type(env_config)` (pydantic v2 `model_fields` or v1 `__fields__`). The `config_init()` values are
the current values: the CLI merges the run YAML over them, not over the class defaults.

Static mode (the import or config_init failed, or --static-only): reads the environment's own config
class from source with `ast` (annotated fields, literal defaults, `Field(default, ge=.., ...)`,
Enum classes of the same file) plus the literal keyword arguments `config_init()` passes to it. The
server adds the known BaseEnvConfig fields, so only the file's own fields are returned here.

Import mode also reports what decides whether the environment can train on Tinker:
`server_configs`, the type of config_init()'s second value ("list", "single" for one
APIServerConfig, "baseline" for a bare ServerBaseline, else "unknown"), and `managed_server`,
whether the code of the environment's classes (atroposlib's own left out), the helper functions
beside them, or a module their files import from outside the standard library and installed
packages names `managed_server`.

Output (stdout, one JSON object):
  {"introspection": "import"|"static", "import_error"?, "config_class",
   "fields": [{"name", "type", "kind", "nullable", "enum"?, "enum_names"?, "items"?,
               "minimum"?, "maximum"?, "exclusiveMinimum"?, "exclusiveMaximum"?,
               "default", "description"}],
   "values": {name: current value}, "managed_server"?, "server_configs"?,
   "sources"?: [files of the environment's own code that were looked at]}
Anything the environment prints goes to stderr so stdout stays one JSON document.
"""
import argparse
import ast
import collections.abc
import enum
import hashlib
import importlib.util
import json
import math
import os
import sys
import sysconfig
import traceback
import types
import typing

NONE_TYPE = type(None)
UNION_TYPES = tuple(t for t in (typing.Union, getattr(types, "UnionType", None)) if t is not None)
GENERIC_NAMES = {list: "List", dict: "Dict", tuple: "Tuple", set: "Set", frozenset: "FrozenSet"}
EMPTY_FACTORIES = {"list": [], "dict": {}, "set": [], "tuple": [], "frozenset": []}
BOUNDS = (("ge", "minimum"), ("le", "maximum"), ("gt", "exclusiveMinimum"), ("lt", "exclusiveMaximum"))
MAX_TEXT = 400


class Unknown:
    """Stands for a default the source does not spell as a literal."""


# --- JSON-safe values --------------------------------------------------------------------------

def jsonable(value):
    if value is None or value is Unknown or isinstance(value, (bool, str)):
        return None if value is Unknown else value
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(jsonable(k)): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump())
    if hasattr(value, "dict") and hasattr(value, "__fields__"):
        return jsonable(value.dict())
    return str(value)


def text(value):
    return str(value)[:MAX_TEXT] if value is not None else ""


# --- types -------------------------------------------------------------------------------------

def strip_annotated(tp):
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def display(tp):
    """`int`, `Optional[int]`, `List[str]`, `EvalHandlingEnum`, `Literal['a', 'b']`..."""
    tp = strip_annotated(tp)
    if tp is NONE_TYPE:
        return "None"
    if tp is Ellipsis:
        return "..."
    if tp is typing.Any:
        return "Any"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in UNION_TYPES:
        present = [a for a in args if a is not NONE_TYPE]
        inner = display(present[0]) if len(present) == 1 else "Union[%s]" % ", ".join(map(display, present))
        return "Optional[%s]" % inner if len(present) < len(args) else inner
    if origin is typing.Literal:
        return "Literal[%s]" % ", ".join(repr(a) for a in args)
    if origin is not None:
        name = GENERIC_NAMES.get(origin) or getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        return "%s[%s]" % (name, ", ".join(map(display, args))) if args else name
    if isinstance(tp, type):
        if tp.__name__.startswith("Constrained"):  # pydantic v1 conint()/constr(): name the base type
            tp = next((b for b in tp.__mro__ if b in (bool, int, float, str, bytes, list, dict, set)), tp)
        return GENERIC_NAMES.get(tp, tp.__name__)
    return str(tp).replace("typing.", "")


def scalar_kind(tp):
    tp = strip_annotated(tp)
    if isinstance(tp, type) and not issubclass(tp, enum.Enum):
        for kind, base in (("bool", bool), ("int", int), ("float", float), ("str", str)):
            if issubclass(tp, base):
                return kind
    return None


def container_kind(tp):
    container = typing.get_origin(tp) or tp
    if not isinstance(container, type) or issubclass(container, (str, bytes)):
        return None
    if issubclass(container, (dict, collections.abc.Mapping)):
        return "dict"
    if issubclass(container, (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Set)):
        return "list"
    return None


def closed_set(values):
    """The values as JSON strings/numbers, or None when some are neither (then any value goes)."""
    out = [jsonable(v) for v in values]
    return out if out and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in out) else None


def describe_type(tp):
    """kind, nullable, enum values/names, element kind; plus bounds a constrained type carries."""
    tp = strip_annotated(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in UNION_TYPES:
        present = [a for a in args if a is not NONE_TYPE]
        inner = describe_type(present[0]) if len(present) == 1 else {"kind": "any"}
        return dict(inner, nullable=len(present) < len(args) or inner.get("nullable", False))
    out = {"kind": "any", "nullable": tp is typing.Any or tp is NONE_TYPE}
    if origin is typing.Literal:
        values = closed_set(a for a in args if a is not None)
        out.update(kind="enum" if values else "any", enum=values, nullable=None in args)
    elif isinstance(tp, type) and issubclass(tp, enum.Enum):
        values = closed_set(m.value for m in tp)
        out.update(kind="enum" if values else "any", enum=values, enum_names=[m.name for m in tp] if values else None)
    elif scalar_kind(tp):
        out["kind"] = scalar_kind(tp)
        for attr, key in BOUNDS:  # pydantic v1 conint()/confloat() classes carry their bounds
            bound = getattr(tp, attr, None)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                out[key] = bound
    elif container_kind(tp):
        out["kind"] = container_kind(tp)
        # Element kind: List[T], Tuple[T, ...], Set[T]; the value kind of Dict[K, V].
        element = args[-1] if out["kind"] == "dict" and len(args) == 2 else args[0] if len(args) == 1 or args[1:] == (Ellipsis,) else None
        if element is not None:
            out["items"] = scalar_kind(element)
    return {k: v for k, v in out.items() if v is not None}


def field_record(name, annotation, default, description, bounds, nullable=False):
    record = {"name": name, "type": display(annotation)}
    record.update(describe_type(annotation))
    record["nullable"] = bool(record["nullable"] or nullable)
    for key, value in bounds.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            record[key] = value
    record["default"] = jsonable(default)
    record["description"] = text(description)
    return record


def metadata_bounds(items):
    bounds = {}
    for item in items:
        for attr, key in BOUNDS:
            value = getattr(item, attr, None)
            if value is not None:
                bounds[key] = value
    return bounds


# --- import mode -------------------------------------------------------------------------------

def v2_fields(cls):
    from pydantic_core import PydanticUndefined

    out = []
    for name, info in cls.model_fields.items():
        try:
            default = info.get_default(call_default_factory=True)
        except Exception:  # a factory that needs the other fields' data
            default = None
        if default is PydanticUndefined:
            default = None
        out.append(field_record(name, info.annotation, default, info.description, metadata_bounds(info.metadata)))
    return out


def v1_fields(cls):
    out = []
    for name, field in cls.__fields__.items():
        try:
            default = field.get_default()
        except Exception:
            default = None
        info = field.field_info
        out.append(field_record(name, field.annotation, default, info.description, metadata_bounds([info]), nullable=field.allow_none))
    return out


def import_module(path, root):
    for entry in (os.path.dirname(path), root):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    name = "_rl_mcp_env_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pydantic resolve forward references through it
    spec.loader.exec_module(module)
    return module


# --- Tinker readiness (import mode) ------------------------------------------------------------

def load_discover():
    """python/discover.py, for its reading of managed_server, under a name no environment uses."""
    spec = importlib.util.spec_from_file_location("_rl_mcp_discover", os.path.join(os.path.dirname(os.path.abspath(__file__)), "discover.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def server_configs_shape(value):
    """The way atroposlib's CLI sorts config_init()'s server configs (by isinstance)."""
    if isinstance(value, list):
        return "list"
    names = {cls.__name__ for cls in type(value).__mro__}
    return "single" if "APIServerConfig" in names else "baseline" if "ServerBaseline" in names else "unknown"


INSTALLED = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    if p
)


def own_source(module):
    """The .py file of a module that is the environment's code: not atroposlib, the standard
    library or an installed package (whose code only atroposlib itself would name managed_server in)."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py") or module.__name__.split(".")[0] == "atroposlib":
        return None
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts or real.startswith(INSTALLED):
        return None
    return real


def imported_modules(module):
    """The modules `module`'s namespace holds, or holds something from (`from x import f`)."""
    found = []
    for value in list(vars(module).values()):
        try:
            other = value if isinstance(value, types.ModuleType) else sys.modules.get(getattr(value, "__module__", None) or "")
        except Exception:  # an object whose attribute lookup runs code and fails
            continue
        if other is not None and other is not module:
            found.append(other)
    return found


class ManagedServerUse:
    """Where the environment's own code lives, and whether it names managed_server there: in the
    body of one of its classes, beside them in their files, or anywhere in a module those files
    import. Each file is read once, with discover.py's reader."""

    def __init__(self, env_cls):
        self.discover = load_discover()
        self.classes, imported = [], set()
        for cls in env_cls.__mro__:
            module = sys.modules.get(cls.__module__)
            path = own_source(module) if module is not None else None
            if path is not None:
                self.classes.append((cls.__name__, path))
                imported.update(filter(None, map(own_source, imported_modules(module))))
        self.imported = sorted(imported)
        self.read = {}

    def files(self):
        """Every file whose change could change the answer."""
        return sorted({path for _, path in self.classes} | set(self.imported))

    def of(self, path):
        """(names of the module-level classes whose body names it, whether code outside them does)"""
        if path not in self.read:
            with open(path, "rb") as handle:
                tree = ast.parse(handle.read(), filename=path)
            classes = [n for n in self.discover.module_level(tree.body) if isinstance(n, ast.ClassDef)]
            users = {c.name for c in classes if self.discover.names_managed_server(c)}
            self.read[path] = (users, self.discover.names_managed_server(tree, skip=set(classes)))
        return self.read[path]

    def found(self):
        for name, path in self.classes:
            users, outside = self.of(path)
            if name in users or outside:
                return True
        return any(any(self.of(path)) for path in self.imported)


def tinker_facts(env_cls, result):
    """managed_server, server_configs, and the files read for them (the server's cache watches them)."""
    servers = result[1] if isinstance(result, (tuple, list)) and len(result) >= 2 else None
    try:
        use = ManagedServerUse(env_cls)
        return {"managed_server": use.found(), "server_configs": server_configs_shape(servers), "sources": use.files()}
    except Exception:  # the fields still stand; the server falls back to discovery's reading
        traceback.print_exc()
        return {}


def introspect_import(path, class_name, root):
    sys.argv = [path]  # some environments read their own flags at import or in config_init
    module = import_module(path, root)
    env_cls = getattr(module, class_name, None)
    if not isinstance(env_cls, type):
        raise LookupError("%s defines no class %s" % (os.path.basename(path), class_name))
    result = env_cls.config_init()
    env_config = result[0] if isinstance(result, (tuple, list)) else result
    cls = type(env_config)
    if hasattr(cls, "model_fields") and isinstance(cls.model_fields, dict):
        fields = v2_fields(cls)
    elif hasattr(cls, "__fields__"):
        fields = v1_fields(cls)
    else:
        raise TypeError("config_init() returned %s, not a pydantic model" % cls.__name__)
    values = {f["name"]: jsonable(getattr(env_config, f["name"], None)) for f in fields}
    answer = {"introspection": "import", "config_class": cls.__name__, "fields": fields, "values": values}
    answer.update(tinker_facts(env_cls, result))
    return answer


# --- static mode -------------------------------------------------------------------------------

TYPING_NAMES = {
    "int": int, "float": float, "str": str, "bool": bool, "bytes": bytes, "None": NONE_TYPE,
    "list": list, "dict": dict, "tuple": tuple, "set": set, "frozenset": frozenset,
    "List": typing.List, "Dict": typing.Dict, "Tuple": typing.Tuple, "Set": typing.Set,
    "FrozenSet": typing.FrozenSet, "Sequence": typing.Sequence, "Mapping": typing.Mapping,
    "Iterable": typing.Iterable, "Optional": typing.Optional, "Union": typing.Union,
    "Literal": typing.Literal, "Any": typing.Any, "Annotated": typing.Annotated,
}


def terminal_name(node):
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


class SourceReader:
    """What one file declares, read without running it."""

    def __init__(self, path):
        with open(path, "rb") as handle:
            self.tree = ast.parse(handle.read(), filename=path)
        self.classes = {n.name: n for n in self.tree.body if isinstance(n, ast.ClassDef)}
        self.constants, self.enums = {}, {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = self.literal(stmt.value)
                if value is not Unknown:
                    self.constants[stmt.targets[0].id] = value
        for name in self.classes:
            built = self.build_enum(name)
            if built is not None:
                self.enums[name] = built

    def literal(self, node):
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        if isinstance(node, ast.Name) and node.id in self.constants:
            return self.constants[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            members = self.enums.get(node.value.id)
            if members is not None and node.attr in members.__members__:
                return members[node.attr]
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            return EMPTY_FACTORIES.get(terminal_name(node.func), Unknown)
        return Unknown

    def factory(self, node):
        """The value a `default_factory=` produces: `list`, `dict`, `lambda: [...]`."""
        if isinstance(node, ast.Lambda):
            return self.literal(node.body)
        return EMPTY_FACTORIES.get(terminal_name(node), Unknown)

    def build_enum(self, name):
        node = self.classes[name]
        if not any((terminal_name(b) or "").endswith("Enum") for b in node.bases):
            return None
        members = []
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = self.literal(stmt.value)
                if value is not Unknown and not stmt.targets[0].id.startswith("_"):
                    members.append((stmt.targets[0].id, value))
        return enum.Enum(name, members) if members else None

    def annotation(self, node):
        """The typing object an annotation spells; unknown names become Any."""
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                try:
                    return self.annotation(ast.parse(node.value, mode="eval").body)
                except SyntaxError:
                    return typing.Any
            return NONE_TYPE if node.value is None else typing.Any
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return typing.Union[self.annotation(node.left), self.annotation(node.right)]
        if isinstance(node, ast.Subscript):
            base = self.annotation(node.value)
            if base is typing.Any:
                return typing.Any
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if base is typing.Literal:
                args = tuple(v for v in (self.literal(i) for i in items) if v is not Unknown)
            elif base is typing.Annotated:
                return self.annotation(items[0])
            else:
                args = tuple(Ellipsis if isinstance(i, ast.Constant) and i.value is Ellipsis else self.annotation(i) for i in items)
            try:
                return base[args if len(args) != 1 else args[0]]
            except TypeError:
                return typing.Any
        name = terminal_name(node)
        if name in self.enums:
            return self.enums[name]
        return TYPING_NAMES.get(name, typing.Any)

    def config_init_calls(self, env_class):
        """Every call made inside the environment class's config_init, in source order."""
        env = self.classes.get(env_class)
        for stmt in env.body if env else []:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "config_init":
                for node in ast.walk(stmt):
                    if isinstance(node, ast.Call):
                        yield node

    def config_class(self, env_class, hint):
        """type(config_init()[0]) as far as source tells: config_init's call, env_config_cls, the hint."""
        for call in self.config_init_calls(env_class):
            name = terminal_name(call.func)
            if (name in self.classes and name not in self.enums) or name == "BaseEnvConfig":
                return name
        env = self.classes.get(env_class)
        for stmt in env.body if env else []:
            if isinstance(stmt, ast.Assign) and any(terminal_name(t) == "env_config_cls" for t in stmt.targets):
                return terminal_name(stmt.value) or hint
        return (hint or "BaseEnvConfig").split(".")[-1]

    def chain(self, class_name, seen=()):
        """The class and its bases defined in this file, bases first."""
        node = self.classes.get(class_name)
        if node is None or class_name in seen:
            return []
        out = []
        for base in node.bases:
            out.extend(self.chain(terminal_name(base), seen + (class_name,)))
        return out + [node]

    def field(self, stmt):
        default, description, bounds = None, "", {}
        value = stmt.value
        if isinstance(value, ast.Call) and terminal_name(value.func) == "Field":
            if value.args:
                default = self.literal(value.args[0])
            for kw in value.keywords:
                if kw.arg == "default":
                    default = self.literal(kw.value)
                elif kw.arg == "default_factory":
                    default = self.factory(kw.value)
                elif kw.arg == "description":
                    description = self.literal(kw.value)
                elif kw.arg in dict(BOUNDS):
                    bounds[dict(BOUNDS)[kw.arg]] = self.literal(kw.value)
        elif value is not None:
            default = self.literal(value)
        if default is Ellipsis:
            default = None
        description = description if isinstance(description, str) else ""
        return field_record(stmt.target.id, self.annotation(stmt.annotation), default, description, bounds)

    def fields(self, config_class):
        out = {}
        for node in self.chain(config_class):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and not stmt.target.id.startswith("_"):
                    annotation = stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation
                    if terminal_name(annotation) != "ClassVar":
                        out[stmt.target.id] = self.field(stmt)
        return list(out.values())

    def init_values(self, env_class, config_class):
        """The literal keyword arguments config_init passes to the config class."""
        call = next((c for c in self.config_init_calls(env_class) if terminal_name(c.func) == config_class), None)
        values = {}
        for kw in call.keywords if call is not None else []:
            value = self.literal(kw.value) if kw.arg else Unknown
            if value is not Unknown:
                values[kw.arg] = jsonable(value)
        return values


def introspect_static(path, class_name, hint):
    reader = SourceReader(path)
    config_class = reader.config_class(class_name, hint)
    return {
        "introspection": "static",
        "config_class": config_class,
        "fields": reader.fields(config_class),
        "values": reader.init_values(class_name, config_class),
    }


def last_line(err):
    lines = [l.strip() for l in traceback.format_exception_only(type(err), err) if l.strip()]
    return (lines[-1] if lines else type(err).__name__)[:MAX_TEXT]



def isolate_helper():
    """What a helper that runs environment code does first (this one and check_environment.py).
    It leads a process group of its own: whatever the environment starts (a downloader, a worker
    pool) inherits its pipes, and the server kills the group when the helper ends. Environment code
    may print or spawn children that write to fd 1, so fd 1 goes to stderr; the answer is written
    to the stream returned, the original stdout."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return out

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", required=True)
    parser.add_argument("--class", dest="class_name", required=True)
    parser.add_argument("--config-class")
    parser.add_argument("--root", default=os.getcwd())
    parser.add_argument("--static-only", metavar="REASON")
    args = parser.parse_args()

    out = isolate_helper()

    path = os.path.abspath(args.file)
    result = None
    import_error = args.static_only
    if import_error is None:
        try:
            result = introspect_import(path, args.class_name, os.path.abspath(args.root))
        except BaseException as err:  # SystemExit from env code included: fall back to source
            import_error = last_line(err)
            traceback.print_exc()
    if result is None:
        try:
            result = introspect_static(path, args.class_name, args.config_class)
        except Exception as err:
            result = {"introspection": "static", "config_class": args.config_class or "BaseEnvConfig", "fields": [], "values": {},
                      "source_error": last_line(err)}
        result["import_error"] = import_error
    out.write(json.dumps(result, allow_nan=False))
    out.flush()
    # Threads the environment started must not keep this process alive.
    os._exit(0)


if __name__ == "__main__":
    main()
