"""Test environment whose config_init returns two servers: ``process`` and ``serve`` then refuse
any --openai.* flag with exit code 2 (AT openai_server.py:183-189).
"""
from typing import List, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnvConfig
from gsm8k_server import GSM8kServerEnv


class GSM8kTwoServersEnv(GSM8kServerEnv):
    name = "gsm8k_two_servers"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        env_config, server_config = super().config_init()
        return env_config, [server_config, server_config.model_copy(update={"base_url": "http://localhost:9002/v1"})]


if __name__ == "__main__":
    GSM8kTwoServersEnv.cli()
