"""The verifiers error classes a rollout records in ``state["error"]`` (verifiers/errors.py)."""


class Error(Exception):
    """Base class for all errors."""


class ModelError(Error):
    """Used to catch errors while interacting with the model."""


class EmptyModelResponseError(ModelError):
    """Used to catch empty or invalid model responses (e.g. response.choices is None)."""


class OverlongPromptError(Error):
    """Used to catch overlong prompt errors."""


class InfraError(Error):
    """Used to catch errors while interacting with infrastructure."""
