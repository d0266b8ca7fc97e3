"""The cookbook's exception classes (tinker_cookbook/exceptions.py)."""


class TinkerCookbookError(Exception):
    """Base exception for all tinker-cookbook errors."""


class ConfigurationError(TinkerCookbookError, ValueError):
    """A configuration parameter is invalid or missing."""


class TrainingError(TinkerCookbookError, RuntimeError):
    """Training failed."""
