"""Test stand-in for the Tinker SDK package: importable, so install checks pass against the fake
venv. The fake trainer (test/fakes/tinker-atropos/launch_training.py) never calls it."""

__version__ = "0.0.0+fake"
