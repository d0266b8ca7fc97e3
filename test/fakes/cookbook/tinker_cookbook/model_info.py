"""The models the cookbook knows (tinker_cookbook/model_info.py) and the renderer it recommends for
each. A model it does not know fails here, before Tinker is asked: an unknown organization raises
``ConfigurationError("Unknown model: <name>")``, an unknown model of a known organization a
``KeyError`` of its version (e.g. ``KeyError: 'Qwen9-1B'``), a name without "/" a ValueError. A
model Tinker has retired (the Llama models, Qwen3-30B-A3B, ...) is still known here: it fails when
the training client is created (the service refuses it). Only part of upstream's list is kept."""
import logging

from tinker_cookbook.exceptions import ConfigurationError

logger = logging.getLogger(__name__)

_QWEN3 = ("qwen3", "qwen3_disable_thinking")
_QWEN3_5 = ("qwen3_5", "qwen3_5_disable_thinking")
_QWEN3_INSTRUCT = ("qwen3_instruct",)
_LLAMA3 = ("llama3",)
_ROLE_COLON = ("role_colon",)
_GPT_OSS = ("gpt_oss_no_sysprompt", "gpt_oss_medium_reasoning")

_MODELS = {
    "meta-llama": {"Llama-3.1-8B-Instruct": _LLAMA3, "Llama-3.2-1B": _ROLE_COLON, "Llama-3.2-3B": _ROLE_COLON,
                   "Llama-3.1-8B": _ROLE_COLON, "Llama-3.1-70B": _ROLE_COLON, "Llama-3.3-70B-Instruct": _LLAMA3},
    "Qwen": {"Qwen3-8B": _QWEN3, "Qwen3-8B-Base": _ROLE_COLON, "Qwen3-32B": _QWEN3, "Qwen3-30B-A3B": _QWEN3,
             "Qwen3-30B-A3B-Base": _ROLE_COLON, "Qwen3-4B-Instruct-2507": _QWEN3_INSTRUCT,
             "Qwen3-30B-A3B-Instruct-2507": _QWEN3_INSTRUCT, "Qwen3.5-4B": _QWEN3_5, "Qwen3.5-9B": _QWEN3_5,
             "Qwen3.5-9B-Base": _ROLE_COLON, "Qwen3.5-27B": _QWEN3_5, "Qwen3.5-35B-A3B": _QWEN3_5,
             "Qwen3.5-397B-A17B": _QWEN3_5, "Qwen3.6-27B": _QWEN3_5, "Qwen3.6-35B-A3B": _QWEN3_5},
    "openai": {"gpt-oss-20b": _GPT_OSS, "gpt-oss-120b": _GPT_OSS},
}


def get_recommended_renderer_names(model_name: str) -> list[str]:
    model_name = model_name.split(":", 1)[0]
    if "/" not in model_name:
        raise ValueError(f"Model name must be in 'org/model' format, got {model_name!r}")
    org, version = model_name.split("/", 1)
    if org not in _MODELS:
        raise ConfigurationError(f"Unknown model: {model_name}")
    return list(_MODELS[org][version])


def get_recommended_renderer_name(model_name: str) -> str:
    return get_recommended_renderer_names(model_name)[0]


def warn_if_renderer_not_recommended(model_name: str, renderer_name: str | None) -> None:
    if renderer_name is None:
        return
    try:
        recommended = get_recommended_renderer_names(model_name)
    except (ConfigurationError, KeyError, ValueError):
        return
    if renderer_name not in recommended:
        logger.warning(
            "Renderer %r is not recommended for model %r. Recommended renderer(s): %s. "
            "Using an incompatible renderer can silently degrade training quality "
            "(e.g., prefilling tokens the model was never trained on).",
            renderer_name, model_name, ", ".join(repr(r) for r in recommended),
        )
