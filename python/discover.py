"""Static reader for environment discovery: parses Python files with `ast`, never imports them.

Input (stdin): a JSON list of absolute file paths.
Output (stdout): one JSON object per file and line, in input order:
  {"path", "classes": [{"name", "bases", "line", "env_name"?, "config_cls"?, "doc"?,
                        "managed_server"?: true, "server_configs"?, "server_configs_call"?}],
   "imports": {alias: qualified name}, "stars"?: [module], "doc"?,
   "managed_server"?: true, "returns"?: {function: "list"|"single"}}
  or {"path", "error": "SyntaxError: ... (line N)"} when the file cannot be read or parsed.

`managed_server` (on a class: in its body; on the file: in code outside its classes) says the code
names `managed_server`, which the Tinker trainer needs: only those rollouts carry logprobs.
`server_configs` is what the class's own config_init returns second ("list", "single" for one
APIServerConfig(...) or ServerBaseline(...), "unknown"), or `server_configs_call` the helper it
calls for it, which the server looks up in `returns` of the file it comes from.

Qualified names are dotted. Relative imports are resolved against the file's directory written as
a dotted path ("/a/b/x.py" importing ".y.Z" gives "a.b.y.Z"), the same key the server gives a
scanned file, so a base imported from a sibling file is found whatever the package layout.
Runs on any Python 3.8+ so an old RL_PYTHON still gets a listing.
"""
import ast
import gc
import json
import sys

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TEXT = 240
MANAGED = "managed_server"
SINGLE_CONFIGS = ("APIServerConfig", "ServerBaseline")


def dotted(node):
    """`a.b.C` for Name/Attribute chains; the subscripted value for `Generic[T]`; else None."""
    if isinstance(node, ast.Subscript):
        node = node.value
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def first_line(text):
    text = (text or "").strip()
    return text.splitlines()[0].strip()[:MAX_TEXT] if text else None


def with_doc(info, node):
    """`info` plus the first line of `node`'s docstring, when it has one."""
    doc = first_line(ast.get_docstring(node))
    if doc:
        info["doc"] = doc
    return info


def module_level(body):
    """Statements run at import time, including those under if/try/with (guarded imports)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.With, ast.AsyncWith)):
            yield from module_level(stmt.body)
            yield from module_level(getattr(stmt, "orelse", []))
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            yield from module_level(stmt.body)
            for handler in stmt.handlers:
                yield from module_level(handler.body)
            yield from module_level(stmt.orelse)
            yield from module_level(stmt.finalbody)


def assigned(stmt):
    """(target name, value) of `x = v` or `x: T = v` with a single plain target."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target.id, stmt.value
    return None, None


def names_managed_server(node, skip=()):
    """Whether code below `node` (but not below the nodes in `skip`) names managed_server, as an
    attribute or a name: a docstring or comment that mentions it is no use of it."""
    stack = [node]
    while stack:
        node = stack.pop()
        if (isinstance(node, ast.Attribute) and node.attr == MANAGED) or (isinstance(node, ast.Name) and node.id == MANAGED):
            return True
        stack.extend(child for child in ast.iter_child_nodes(node) if child not in skip)
    return False


def server_configs(func, value):
    """What `value`, returned by `func`, is as server configs: {"server_configs": shape} or
    {"server_configs_call": helper}. A local name stands for its last assignment in the body."""
    if isinstance(value, ast.Name):
        assignments = [v for t, v in map(assigned, func.body) if t == value.id]
        value = assignments[-1] if assignments else None
    if isinstance(value, (ast.List, ast.ListComp)):
        return {"server_configs": "list"}
    callee = dotted(value.func) if isinstance(value, ast.Call) else None
    if callee and callee.split(".")[-1] in SINGLE_CONFIGS:
        return {"server_configs": "single"}
    return {"server_configs_call": callee} if callee else {"server_configs": "unknown"}


def returned(func):
    """The value of the last return among the function's own statements (not nested blocks)."""
    returns = [stmt.value for stmt in func.body if isinstance(stmt, ast.Return) and stmt.value is not None]
    return returns[-1] if returns else None


def config_init_shape(func):
    value = returned(func)
    if isinstance(value, ast.Tuple) and len(value.elts) >= 2:
        return server_configs(func, value.elts[1])
    return {"server_configs": "unknown"}


def describe_class(node, mentions_managed):
    info = {"name": node.name, "bases": [b for b in map(dotted, node.bases) if b], "line": node.lineno}
    for stmt in node.body:
        target, value = assigned(stmt)
        if target == "name" and isinstance(value, ast.Constant) and isinstance(value.value, str):
            info["env_name"] = value.value
        elif target == "env_config_cls":
            config = dotted(value)
            if config:
                info["config_cls"] = config
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "config_init":
            info.update(config_init_shape(stmt))
    if mentions_managed and names_managed_server(node):
        info["managed_server"] = True
    return with_doc(info, node)


def function_returns(functions):
    """{name: "list"|"single"} for the module-level functions that return server configs."""
    out = {}
    for func in functions:
        value = returned(func)
        shape = server_configs(func, value).get("server_configs") if value is not None else None
        if shape in ("list", "single"):
            out[func.name] = shape
    return out


def package_parts(path, level):
    parts = [p for p in path.split("/")[:-1] if p]
    return parts[: len(parts) - (level - 1)] if level > 1 else parts


def read_file(path):
    with open(path, "rb") as handle:
        source = handle.read(MAX_FILE_BYTES + 1)
    if len(source) > MAX_FILE_BYTES:
        return {"path": path, "error": "file larger than %d MiB, not parsed" % (MAX_FILE_BYTES // (1024 * 1024))}
    tree = ast.parse(source, filename=path)
    # Most files never name it: the text test spares walking their trees.
    mentions_managed = MANAGED.encode() in source
    classes, imports, stars, class_nodes, functions = [], {}, [], [], []
    for stmt in module_level(tree.body):
        if isinstance(stmt, ast.ClassDef):
            class_nodes.append(stmt)
            if stmt.bases:  # a class without bases cannot lead to BaseEnv
                classes.append(describe_class(stmt, mentions_managed))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(stmt)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".")[0]
                    imports[head] = head
        elif isinstance(stmt, ast.ImportFrom):
            module = stmt.module.split(".") if stmt.module else []
            prefix = package_parts(path, stmt.level) + module if stmt.level else module
            for alias in stmt.names:
                if alias.name == "*":
                    stars.append(".".join(prefix))
                else:
                    imports[alias.asname or alias.name] = ".".join(prefix + [alias.name])
    out = {"path": path, "classes": classes, "imports": imports}
    if stars:
        out["stars"] = stars
    if mentions_managed and names_managed_server(tree, skip=set(class_nodes)):
        out["managed_server"] = True
    returns = function_returns(functions)
    if returns:
        out["returns"] = returns
    return with_doc(out, tree)


def failure(path, err):
    if isinstance(err, SyntaxError):
        message = "%s: %s" % (type(err).__name__, err.msg)
        if err.lineno:
            message += " (line %d)" % err.lineno
    elif isinstance(err, OSError):
        message = "cannot read: %s" % (err.strerror or err)
    else:
        message = "%s: %s" % (type(err).__name__, err)
    return {"path": path, "error": message.splitlines()[0][:MAX_TEXT] if message else type(err).__name__}


def main():
    # Parsing allocates millions of AST nodes and frees them by reference counting; the cyclic
    # collector only adds passes over them (about 10% of the run).
    gc.disable()
    paths = json.load(sys.stdin)
    write = sys.stdout.write
    for path in paths:
        try:
            result = read_file(path)
        except Exception as err:  # one bad file never ends the listing
            result = failure(path, err)
        write(json.dumps(result, separators=(",", ":")) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
