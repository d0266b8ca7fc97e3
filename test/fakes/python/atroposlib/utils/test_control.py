"""Test-only behaviour switches of the fakes (not part of the real atroposlib): a JSON file in the
working directory or beside the running script (the checkout root: the trainer works in its run's
own directory), e.g. ``fake_env.json`` for ``serve`` and ``fake_trainer.json`` for the trainer."""
import json
import os
import sys
from typing import Any, Dict


def read_control_file(name: str) -> Dict[str, Any]:
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv and sys.argv[0] else "."
    for path in (name, os.path.join(script_dir, name)):
        try:
            with open(path) as f:
                return json.load(f)
        except FileNotFoundError:
            continue
    return {}
