"""Test-only behaviour switches of the fakes (not part of the real atroposlib): a JSON file in the
working directory, e.g. ``fake_env.json`` for ``serve`` and ``fake_trainer.json`` for the trainer."""
import json
from typing import Any, Dict


def read_control_file(name: str) -> Dict[str, Any]:
    try:
        with open(name) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}
