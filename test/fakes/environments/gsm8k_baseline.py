"""Test environment whose config_init returns a bare ServerBaseline, as many upstream environments
do: ``process`` then ignores every --openai.* flag (AT openai_server.py:214-217) and ServerManager
spreads the baseline over localhost:9004-9007.
"""
from typing import Tuple

from atroposlib.envs.base import BaseEnvConfig, ServerBaseline
from gsm8k_server import GSM8kServerEnv


class GSM8kBaselineEnv(GSM8kServerEnv):
    name = "gsm8k_baseline"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, ServerBaseline]:
        env_config, server_config = super().config_init()
        return env_config, ServerBaseline(model_name=server_config.model_name)


if __name__ == "__main__":
    GSM8kBaselineEnv.cli()
