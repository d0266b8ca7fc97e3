"""Test environment that imports ``tinker_atropos.config`` at the top, as TA gsm8k_tinker.py:17
does. An environment process has only its own file's folder on sys.path, so this runs only where the
checkout is installed (``pip install -e .``); otherwise it dies with
"ModuleNotFoundError: No module named 'tinker_atropos'", after the trainer registered.
"""
from typing import List, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnvConfig
from gsm8k_unmanaged import GSM8kUnmanagedEnv
from tinker_atropos.config import TinkerAtroposConfig


class GSM8kCheckoutEnv(GSM8kUnmanagedEnv):
    name = "gsm8k_checkout"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        env_config, server_configs = super().config_init()
        # As TA's environments: the model comes from the tinker-atropos config.
        env_config.tokenizer_name = TinkerAtroposConfig().base_model
        return env_config, server_configs


if __name__ == "__main__":
    GSM8kCheckoutEnv.cli()
