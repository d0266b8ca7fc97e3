"""Baseline for bench/discovery.bench.ts: environment discovery the way the Hermes seed did it.

Every non-private `*.py` is read and `ast.parse`d, every class in the whole tree (`ast.walk`) is
checked for a base literally named `BaseEnv` (a Name or the last part of an Attribute), and its
`name`, `env_config_cls` and docstring are read from the class body. Unlike the seed, which only
looked at the top folder, this walks the tree recursively so both scans cover the same files.
Prints `<environments found> <files parsed>`.
"""
import ast
import os
import sys


def base_name(base):
    if isinstance(base, ast.Name):
        return base.id
    if isinstance(base, ast.Attribute):
        return base.attr
    return ""


def scan_file(path):
    found = []
    with open(path, "r") as handle:
        tree = ast.parse(handle.read())
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or not any(base_name(b) == "BaseEnv" for b in node.bases):
            continue
        info = {"class_name": node.name, "name": os.path.basename(path)[:-3], "config_class": "BaseEnvConfig", "description": ""}
        for item in node.body:
            if isinstance(item, ast.Assign):
                for target in item.targets:
                    if isinstance(target, ast.Name) and target.id == "name" and isinstance(item.value, ast.Constant):
                        info["name"] = item.value.value
                    elif isinstance(target, ast.Name) and target.id == "env_config_cls" and isinstance(item.value, ast.Name):
                        info["config_class"] = item.value.id
            if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
                info["description"] = info["description"] or item.value.value.split("\n")[0].strip()
        found.append(info)
    return found


def main(root):
    environments, parsed = [], 0
    for folder, _dirs, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            parsed += 1
            try:
                environments.extend(scan_file(os.path.join(folder, name)))
            except Exception:
                pass  # the seed printed a warning and went on
    print(len(environments), parsed)


if __name__ == "__main__":
    main(sys.argv[1])
