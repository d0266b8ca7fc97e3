"""Static reader of what RL_PYTHON has of tinker-cookbook and verifiers: nothing is imported.

Output (stdout), one JSON object:
  {"cookbook": {"dir", "version"?} | null, "cookbook_missing"?: "why",
   "recipes": [{"name", "file", "rl": bool, "doc"?, "config_class"?, "fields": [field], "skipped_fields": [name],
                "dataset_batches": [{"field", "value", "batches"}], "lacks"?: [{"module", "at_load", "extra"?}],
                "cannot_train"?: "why"}],
   "environments": [{"module", "file", "vf_env_id", "doc"?, "env_args": [{"name", "default"?}]}],
   "stamps": [[path, mtime_ms, size]]}

The cookbook's package directory is found with importlib's path finders (`find_spec` of a
top-level name runs no code of it). A recipe is ``recipes/<name>/train.py`` (``recipes/`` and its
folders have no ``__init__.py`` upstream: the folders are walked); it is RL when it imports
``tinker_cookbook.rl`` (supervised recipes import ``tinker_cookbook.supervised``). Its fields are
the annotated attributes of its ``CLIConfig`` class: type, default and the comment above, each
field as the server's config fields are (name, type, kind, nullable, enum?, items?, default,
description). Type aliases (``cli_utils.LogdirBehavior``, ``tinker.types.LossFnType``) are followed
to their ``Literal[...]`` through the files that define or re-export them; a field whose type is a
class (a nested chz config) is skipped.

A verifiers environment is an importable top-level module (a package's ``__init__.py`` or a
``<name>.py`` in a sys.path directory: site-packages and the paths ``.pth`` files add, the
standard library left out) whose source defines a top-level
``load_environment``: what ``prime env install`` puts in site-packages and
``verifiers.load_environment(env_id)`` imports (``env_id.replace("-", "_").split("/")[-1]``).

With ``--recipe NAME``, only that recipe: ``{"recipe": recipe | null}`` (what a start checks).

`stamps` are the files and directories the answer was read from: while none changed (mtime, size),
the answer stands.
"""
import ast
import importlib.machinery
import json
import os
import site
import sys
import sysconfig

# The sibling helper's reading of `a.b.C` (and of `Generic[T]` as `Generic`): one definition for both.
from discover import dotted

MAX_FILE_BYTES = 1024 * 1024
MAX_DOC = 300
SCALARS = {"int": "int", "float": "float", "bool": "bool", "str": "str"}
MAX_ALIAS_DEPTH = 5


def stamp(path, stamps):
    try:
        info = os.stat(path)
        stamps.append([path, int(info.st_mtime_ns // 1_000_000), info.st_size])
    except OSError:
        stamps.append([path, -1, -1])


def read_source(path):
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return None


def parse(path):
    text = read_source(path)
    if text is None:
        return None
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None


def first_paragraph(doc):
    doc = (doc or "").strip()
    if not doc:
        return None
    return " ".join(doc.split("\n\n")[0].split())[:MAX_DOC]


def package_dir(top):
    """The directory of top-level package `top`, found without importing it."""
    spec = importlib.machinery.PathFinder.find_spec(top, sys.path)
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def module_file(dotted):
    """The source file of a dotted module name, walking directories from its top-level package."""
    parts = dotted.split(".")
    base = package_dir(parts[0])
    if base is None:
        spec = importlib.machinery.PathFinder.find_spec(parts[0], sys.path)
        return spec.origin if spec is not None and len(parts) == 1 and spec.origin and spec.origin.endswith(".py") else None
    path = os.path.join(base, *parts[1:])
    for candidate in (os.path.join(path, "__init__.py"), path + ".py"):
        if os.path.isfile(candidate):
            return candidate
    return None


def resolve_relative(module_path, level, name):
    """The dotted name a relative import of `module_path`'s file means (its package found by walking up)."""
    directory = os.path.dirname(module_path)
    for _ in range(level - 1):
        directory = os.path.dirname(directory)
    parts = []
    d = directory
    while os.path.isfile(os.path.join(d, "__init__.py")):
        parts.append(os.path.basename(d))
        d = os.path.dirname(d)
    # Namespace folders (recipes/<name>) have no __init__.py: the package root is found by name.
    if not parts:
        return None
    prefix = ".".join(reversed(parts))
    return f"{prefix}.{name}" if name else prefix


def imports_of(tree, path):
    """alias -> dotted module or module.symbol, for the file's imports."""
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = resolve_relative(path, node.level, module)
                if module is None:
                    continue
            for a in node.names:
                names[a.asname or a.name] = f"{module}.{a.name}"
    return names


def literal_values(node):
    """The values of `Literal[...]`, or None."""
    if not (isinstance(node, ast.Subscript) and dotted(node.value) in ("Literal", "typing.Literal", "typing_extensions.Literal")):
        return None
    elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    try:
        return [ast.literal_eval(e) for e in elements]
    except ValueError:
        return None


def find_alias(dotted, depth=0):
    """What `module.symbol` is: ("literal", values), ("class", None) or None when not found."""
    if depth > MAX_ALIAS_DEPTH or "." not in dotted:
        return None
    module, symbol = dotted.rsplit(".", 1)
    path = module_file(module)
    if path is None:
        # `module` may itself be `package.symbol`'s package attribute: try it as a module.
        return None
    tree = parse(path)
    if tree is None:
        return None
    return alias_in(tree, path, symbol, depth)


def alias_in(tree, path, symbol, depth):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == symbol:
            return ("class", None)
        value = None
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == symbol for t in node.targets):
            value = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == symbol:
            value = node.value
        if value is not None:
            values = literal_values(value)
            return ("literal", values) if values is not None else None
    imported = imports_of(tree, path).get(symbol)
    return find_alias(imported, depth + 1) if imported else None


def split_optional(node):
    """(inner annotation, nullable) for `X | None` and `Optional[X]`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = []

        def flatten(n):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr):
                flatten(n.left)
                flatten(n.right)
            else:
                parts.append(n)

        flatten(node)
        rest = [p for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
        if len(rest) == 1:
            return rest[0], len(rest) < len(parts)
        return node, len(rest) < len(parts)
    if isinstance(node, ast.Subscript) and dotted(node.value) in ("Optional", "typing.Optional"):
        return node.slice, True
    return node, False


def describe_type(node, tree, path):
    """{"kind", "enum"?, "items"?} of an annotation, or None for a class (a nested config)."""
    name = dotted(node)
    values = literal_values(node)
    if values is not None:
        return {"kind": "enum", "enum": values}
    if isinstance(node, ast.Subscript) and name in ("dict", "Dict", "typing.Dict", "Mapping"):
        return {"kind": "dict"}
    if isinstance(node, ast.Subscript) and name in ("list", "List", "typing.List", "Sequence", "tuple"):
        item = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        items = SCALARS.get(dotted(item) or "")
        return {"kind": "list", **({"items": items} if items else {})}
    if name in SCALARS:
        return {"kind": SCALARS[name]}
    if name in ("dict", "Dict"):
        return {"kind": "dict"}
    if name in ("list", "List"):
        return {"kind": "list"}
    if name in ("Any", "typing.Any"):
        return {"kind": "any"}
    if name is None:
        return {"kind": "str"}
    found = alias_in(tree, path, name, 0) if "." not in name else None
    if found is None:
        head, _, tail = name.partition(".")
        qualified = imports_of(tree, path).get(head)
        found = find_alias(f"{qualified}.{tail}" if tail else qualified) if qualified else None
    if found is not None and found[0] == "class":
        return None
    if found is not None:
        return {"kind": "enum", "enum": found[1]}
    # An alias the reader cannot follow: its values are passed as text, and chz checks them.
    return {"kind": "str"}


def field_default(value):
    """(default, required): a literal, `chz.field(default=...)`, or None for a factory."""
    if value is None:
        return None, True
    if isinstance(value, ast.Call) and (dotted(value.func) or "").endswith("field"):
        kw = {k.arg: k.value for k in value.keywords}
        if "default" in kw:
            return field_default(kw["default"])
        return None, "default_factory" not in kw
    try:
        return ast.literal_eval(value), False
    except ValueError:
        return None, False


def field_doc(value):
    """`chz.field(doc=...)`; comments above fields are section headings upstream, not descriptions."""
    if isinstance(value, ast.Call):
        for k in value.keywords:
            if k.arg == "doc" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
                return k.value.value[:MAX_DOC]
    return ""


def cli_fields(cls, tree, path):
    fields, skipped = [], []
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        inner, nullable = split_optional(node.annotation)
        described = describe_type(inner, tree, path)
        if described is None:
            skipped.append(node.target.id)
            continue
        default, required = field_default(node.value)
        fields.append({
            "name": node.target.id,
            "type": ast.unparse(node.annotation),
            "kind": described["kind"],
            "nullable": nullable,
            **({"enum": described["enum"]} if "enum" in described else {}),
            **({"items": described["items"]} if "items" in described else {}),
            "default": default,
            "required": required,
            "description": field_doc(node.value),
        })
    return fields, skipped


def is_rl(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and (node.module == "tinker_cookbook.rl" or node.module.startswith("tinker_cookbook.rl.")):
            return True
        if isinstance(node, ast.Import) and any(a.name == "tinker_cookbook.rl" or a.name.startswith("tinker_cookbook.rl.") for a in node.names):
            return True
    return False


def dataset_batches(tree, field_names):
    """The batches a recipe's dataset holds where its source says so without loading it: a branch
    ``if <field> == "<value>":`` building its dataset with ``n_batches=<int>`` (math_rl's
    ``env == "arithmetic"``: 100). [{"field", "value", "batches"}]; other datasets come from a hub."""
    found = []
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if not (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id in field_names
                and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
                and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str)):
            continue
        for inner in (n for stmt in node.body for n in ast.walk(stmt)):
            if isinstance(inner, ast.Call):
                batches = next((k.value.value for k in inner.keywords if k.arg == "n_batches" and isinstance(k.value, ast.Constant)
                                and type(k.value.value) is int), None)
                if batches is not None:
                    found.append({"field": test.left.id, "value": test.comparators[0].value, "batches": batches})
                    break
    return found


IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


def imported_modules(tree, path, module_level_only):
    """[(dotted, at_load)]: the modules a file imports where a failure would raise (not under
    try/except ImportError nor `if TYPE_CHECKING`), with `from pkg import name` also as `pkg.name`
    (it may be a submodule); `at_load` when importing the file imports it, not a function when it
    runs. Functions are read too unless `module_level_only`: a recipe imports some extras where it
    uses them (harbor_rl's modal)."""
    found = []

    def visit(nodes, guarded, at_load):
        for node in nodes:
            if isinstance(node, ast.Import):
                if not guarded:
                    found.extend((a.name, at_load) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    module = resolve_relative(path, node.level, module)
                if module and not guarded:
                    found.append((module, at_load))
                    found.extend((f"{module}.{a.name}", at_load) for a in node.names if a.name != "*")
            elif isinstance(node, ast.Try):
                catches = any(h.type is None or any(e in ast.unparse(h.type) for e in IMPORT_ERRORS) for h in node.handlers)
                visit(node.body, guarded or catches, at_load)
                for part in [h.body for h in node.handlers] + [node.orelse, node.finalbody]:
                    visit(part, guarded, at_load)
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse, guarded, at_load)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not module_level_only:
                    visit(node.body, guarded, False)
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    visit([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)], guarded, at_load)

    visit(tree.body, False, True)
    return found


def resolvable(dotted):
    """Whether `dotted` would be found on RL_PYTHON's sys.path, looked up without importing anything."""
    parts = dotted.split(".")
    if parts[0] in sys.builtin_module_names or parts[0] in getattr(sys, "stdlib_module_names", ()):
        return True
    spec = importlib.machinery.PathFinder.find_spec(parts[0], sys.path)
    if spec is None:
        return False
    locations = list(spec.submodule_search_locations or [])
    for part in parts[1:]:
        if not locations:
            return True  # a module's attribute, not a submodule
        nxt = None
        for location in locations:
            if os.path.isdir(os.path.join(location, part)):
                nxt = [os.path.join(location, part)]
                break
            if any(os.path.isfile(os.path.join(location, part + suffix)) for suffix in importlib.machinery.all_suffixes()):
                nxt = []
                break
        if nxt is None:
            return False
        locations = nxt
    return True


class ImportReader:
    """What a recipe needs outside tinker_cookbook: its train.py's imports, followed through the
    cookbook's own modules (the recipe's folder whole, the rest at module level), each file read once."""

    def __init__(self, cookbook_dir, stamps):
        self.recipes_dir = os.path.join(cookbook_dir, "recipes")
        self.stamps = stamps
        self.memo = {}

    def file_imports(self, path):
        if path not in self.memo:
            tree = parse(path)
            inside_recipe = os.path.realpath(path).startswith(os.path.realpath(self.recipes_dir) + os.sep)
            self.memo[path] = [] if tree is None else imported_modules(tree, path, not inside_recipe)
        return self.memo[path]

    def missing(self, train_path):
        """[(module, at_load)]: what the recipe imports that RL_PYTHON cannot resolve; `at_load` when
        starting it imports the module (a start fails), else only code that runs later does."""
        seen, external, queue = {}, {}, [(train_path, True)]
        while queue:
            path, loaded = queue.pop()
            if seen.get(path) is True or (path in seen and not loaded):
                continue
            seen[path] = loaded
            for dotted, at_load in self.file_imports(path):
                now = loaded and at_load
                if dotted.split(".")[0] == "tinker_cookbook":
                    inner = module_file(dotted)
                    if inner is not None:
                        queue.append((inner, now))
                else:
                    external[dotted] = external.get(dotted, False) or now
        # `from pkg import name` lists pkg.name too: a name in a package that resolves is an attribute.
        lacking = {d for d in external if not resolvable(d) and not ("." in d and d.rsplit(".", 1)[0] in external and resolvable(d.rsplit(".", 1)[0]))}
        lacking = {d for d in lacking if not any(d.startswith(other + ".") for other in lacking)}
        # Several modules of one missing package (rich.console, rich.table) are the package.
        tops = {}
        for d in lacking:
            tops.setdefault(d.split(".")[0], []).append(d)
        return sorted((names[0] if len(names) == 1 else top, any(external[n] for n in names)) for top, names in tops.items())


def cookbook_extras():
    """Which optional extra of the installed tinker_cookbook brings a module: its metadata's
    ``Requires-Dist: <dist>...; extra == "<extra>"``, a distribution named as its module
    (``google-genai`` -> ``google.genai`` / ``google_genai``)."""
    try:
        from importlib import metadata
        requires = metadata.distribution("tinker_cookbook").requires or []
    except Exception:
        return {}
    extras = {}
    for requirement in requires:
        name, _, marker = requirement.partition(";")
        extra = marker.split("extra", 1)[-1].strip(" =\"'") if "extra" in marker else None
        dist = name.strip().split()[0] if name.strip() else ""
        for ch in "<>=!~[(":
            dist = dist.split(ch)[0]
        if extra and dist:
            dist = dist.lower()
            extras.setdefault(dist.replace("-", "."), extra)
            extras.setdefault(dist.replace("-", "_"), extra)
    return extras


def lacking_imports(reader, extras, train_path):
    """[{"module", "at_load", "extra"?}]: what the recipe imports that RL_PYTHON cannot, whether
    starting it imports it, and the cookbook extra that brings it."""
    out = []
    for module, at_load in reader.missing(train_path):
        candidates = [".".join(module.split(".")[:i]) for i in range(len(module.split(".")), 0, -1)]
        extra = next((extras[c.lower()] for c in candidates if c.lower() in extras), None)
        out.append({"module": module, "at_load": at_load, **({"extra": extra} if extra else {})})
    return out


def function_params(fn):
    """(names a call may pass by keyword, whether it takes **kwargs, its signature as text)."""
    args = fn.args
    names = [a.arg for a in args.args + args.kwonlyargs]
    bare = ast.arguments(**{k: getattr(args, k) for k in args._fields})
    for arg in bare.posonlyargs + bare.args + bare.kwonlyargs + [a for a in (bare.vararg, bare.kwarg) if a]:
        arg.annotation = None
    return set(names), args.kwarg is not None, f"{fn.name}({ast.unparse(bare)})"


def override_problem(tree, path):
    """Why a recipe that replaces the cookbook's group rollout function (verifiers_rl:
    ``rollouts.do_group_rollout = custom_do_group_rollout``) cannot train: the module it rebinds
    never calls the name (the override does nothing), or calls it with a keyword the replacement
    does not take (the first batch raises TypeError). None when it fits, or the recipe replaces nothing."""
    aliases = imports_of(tree, path)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Name) or node.value.id not in functions:
            continue
        for target in node.targets:
            if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.attr == "do_group_rollout"):
                continue
            module = aliases.get(target.value.id)
            module_path = module_file(module) if module else None
            module_tree = parse(module_path) if module_path else None
            if module_tree is None:
                continue
            calls = [c for c in ast.walk(module_tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == "do_group_rollout"]
            fn = functions[node.value.id]
            accepted, any_keyword, signature = function_params(fn)
            if not calls:
                return (f"the recipe replaces {module}.do_group_rollout with its {fn.name}, but {module} never calls "
                        f"do_group_rollout: the replacement is never used, so its environments' rollouts do not run")
            for call in calls:
                unaccepted = [k.arg for k in call.keywords if k.arg is not None and k.arg not in accepted]
                if unaccepted and not any_keyword:
                    where = f"{os.path.relpath(module_path, os.path.dirname(package_dir('tinker_cookbook') or module_path))}:{call.lineno}"
                    return (f"the recipe's {signature} does not accept {', '.join(repr(k) for k in unaccepted)}, which "
                            f"{where} passes to do_group_rollout: the first batch raises TypeError")
    return None


def read_recipe(name, path):
    tree = parse(path)
    if tree is None:
        return {"name": name, "file": path, "rl": False, "error": "cannot be read or parsed"}
    recipe = {"name": name, "file": path, "rl": is_rl(tree), "fields": [], "skipped_fields": []}
    doc = first_paragraph(ast.get_docstring(tree))
    if doc:
        recipe["doc"] = doc
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CLIConfig"), None)
    if cls is not None:
        recipe["config_class"] = "CLIConfig"
        recipe["fields"], recipe["skipped_fields"] = cli_fields(cls, tree, path)
        recipe["dataset_batches"] = dataset_batches(tree, {f["name"] for f in recipe["fields"]})
    if recipe["rl"]:
        problem = override_problem(tree, path)
        if problem is not None:
            recipe["cannot_train"] = problem
        recipe.setdefault("doc", first_paragraph(ast.get_docstring(cls)))
    return recipe


def recipes(cookbook_dir, stamps):
    root = os.path.join(cookbook_dir, "recipes")
    stamp(root, stamps)
    found = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return found
    reader, extras = ImportReader(cookbook_dir, stamps), cookbook_extras()
    for name in names:
        path = os.path.join(root, name, "train.py")
        if os.path.isfile(path):
            stamp(path, stamps)
            recipe = read_recipe(name, path)
            if recipe["rl"]:
                recipe["lacks"] = lacking_imports(reader, extras, path)
            found.append(recipe)
    return found


def module_candidates(directory):
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        if name.startswith(("_", ".")) or "-" in name:
            continue
        path = os.path.join(directory, name)
        if name.endswith(".py") and name[:-3].isidentifier():
            yield name[:-3], path
        elif name.isidentifier() and os.path.isfile(os.path.join(path, "__init__.py")):
            yield name, os.path.join(path, "__init__.py")


def environment_of(module, path):
    text = read_source(path)
    if text is None or "def load_environment" not in text:
        return None
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "load_environment"), None)
    if fn is None:
        return None
    args = fn.args.args + fn.args.kwonlyargs
    defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults) + list(fn.args.kw_defaults)
    env_args = [{"name": a.arg, **({"default": ast.unparse(d)[:80]} if d is not None else {})} for a, d in zip(args, defaults)]
    env = {"module": module, "file": path, "vf_env_id": module.replace("_", "-"), "env_args": env_args}
    doc = first_paragraph(ast.get_docstring(tree))
    if doc:
        env["doc"] = doc
    return env


SITE_DIR_NAMES = ("site-packages", "dist-packages")


def site_directories():
    """Where installers put modules for this interpreter: its site-packages (a venv's own, and the
    system's it may see) and the user's."""
    paths = sysconfig.get_paths()
    found = [paths[k] for k in ("purelib", "platlib") if k in paths]
    try:
        found += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module has neither
        pass
    return {os.path.realpath(p) for p in found}


def scanned_directories(entries, stdlib, site_dirs):
    """The sys.path directories an environment may be installed in: every entry but the standard
    library (its folders and those directly in them, like lib-dynload). A site-packages directory
    sits in the standard library's folder (``lib/python3.X/site-packages``; in a venv ``lib/python3.X``
    is sysconfig's platstdlib) and is where pip, uv and ``prime env install`` put environments."""
    seen, scanned = set(), []
    for directory in entries:
        if directory in seen:
            continue
        seen.add(directory)
        is_site = directory in site_dirs or os.path.basename(directory) in SITE_DIR_NAMES
        if not is_site and (directory in stdlib or os.path.dirname(directory) in stdlib):
            continue
        scanned.append(directory)
    return scanned


def environments(stamps):
    paths = sysconfig.get_paths()
    stdlib = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths}
    entries = [os.path.realpath(entry or os.getcwd()) for entry in sys.path]
    found = []
    for directory in scanned_directories(entries, stdlib, site_directories()):
        if not os.path.isdir(directory):
            continue
        stamp(directory, stamps)
        for module, path in module_candidates(directory):
            # The library itself re-exports load_environment; only environments define their own.
            if module in ("verifiers", "tinker_cookbook") or any(e["module"] == module for e in found):
                continue
            env = environment_of(module, path)
            if env is not None:
                stamp(path, stamps)
                found.append(env)
    return found


def check_recipe(name):
    """`--recipe NAME`: that recipe alone, read now ({"recipe": recipe | null}): what a start checks."""
    cookbook_dir = package_dir("tinker_cookbook")
    path = os.path.join(cookbook_dir, "recipes", name, "train.py") if cookbook_dir else None
    if path is None or not os.path.isfile(path):
        json.dump({"recipe": None}, sys.stdout)
        return
    recipe = read_recipe(name, path)
    if recipe["rl"]:
        recipe["lacks"] = lacking_imports(ImportReader(cookbook_dir, []), cookbook_extras(), path)
    json.dump({"recipe": recipe}, sys.stdout)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--recipe":
        check_recipe(sys.argv[2])
        return
    stamps = []
    cookbook_dir = package_dir("tinker_cookbook")
    answer = {"cookbook": None, "recipes": [], "environments": environments(stamps), "stamps": stamps}
    if cookbook_dir is None:
        answer["cookbook_missing"] = f"tinker_cookbook is not importable by {sys.executable}"
    else:
        answer["cookbook"] = {"dir": cookbook_dir}
        answer["recipes"] = recipes(cookbook_dir, stamps)
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
