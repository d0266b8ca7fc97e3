"""Test environment that samples with ``self.server.chat_completion`` and tokenizes the answers
itself, as many upstream environments do instead of using ``managed_server``: its groups carry no
``inference_logprobs``, which the Tinker trainer reads for every sequence (TA trainer.py:242), so a
run with it fails at step 0 with "'NoneType' object is not subscriptable", after setup and a first
batch. Its config_init returns a list, so the endpoint it is given is the one it asks.
"""
from typing import Dict, List, Optional, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnvConfig, ScoredDataGroup
from gsm8k_server import GSM8kServerEnv

PROMPT_MASK = -100


class GSM8kUnmanagedEnv(GSM8kServerEnv):
    name = "gsm8k_unmanaged"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        env_config, server_config = super().config_init()
        return env_config, [server_config]

    async def collect_trajectories(self, item: Dict[str, str]) -> Tuple[Optional[ScoredDataGroup], list]:
        messages = self.prompt(item)
        completion = await self.server.chat_completion(
            messages=messages, n=self.config.group_size, max_tokens=self.config.max_token_length, temperature=1.0
        )
        prompt = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        group = ScoredDataGroup(tokens=[], masks=[], scores=[])
        for choice in completion.choices:
            output = self.tokenizer.encode(choice.message.content or "", add_special_tokens=False)
            group["tokens"].append(prompt + output)
            group["masks"].append([PROMPT_MASK] * len(prompt) + output)
            group["scores"].append(self.score(item, choice.message.content))
        return self.unless_all_equal(group), []


if __name__ == "__main__":
    GSM8kUnmanagedEnv.cli()
