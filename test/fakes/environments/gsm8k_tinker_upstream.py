"""Test environment in the image of tinker-atropos' ``tinker_atropos/environments/gsm8k_tinker.py``,
for what the bundled example (which keeps its conversations) does not show:
- it samples through ``managed_server`` and keeps only tokens, masks, logprobs and scores: no
  ``messages``, so under ATROPOS_ALLOW_DUMMY_MANAGED_SERVER (an OpenAI endpoint) the JSONL of
  ``process`` holds atroposlib's placeholder tokens, and its forced include_messages writes those
  placeholders decoded as the only "text";
- ``ensure_scores_are_not_same`` is false (TA configs/default.yaml:12) and ``score`` never drops an
  equal-score group, so an always-right model yields groups of equal scores, not retries;
- ``score`` shuffles the group before scoring and skips completions of fewer than 10 tokens, so a
  score's position says nothing about which completion earned it;
- its config_init returns a one-entry list of an ``sglang`` server (the trainer's /generate).
Its problems are gsm8k_server's (embedded) and the answer is read from the last \\boxed{} instead
of with math_verify.
"""
import random
from typing import Dict, List, Optional, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnvConfig, ScoredDataGroup
from gsm8k_server import GSM8kServerEnv, final_answer

MIN_COMPLETION_TOKENS = 10


class GSM8kTinkerUpstreamEnv(GSM8kServerEnv):
    name = "gsm8k_tinker_upstream"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        env_config, _ = super().config_init()
        # TA configs/default.yaml's values, as its config_init reads them.
        env_config = env_config.model_copy(update={
            "tokenizer_name": "meta-llama/Llama-3.1-8B-Instruct", "group_size": 16, "total_steps": 50, "batch_size": 128,
            "max_token_length": 256, "max_num_workers": 24, "wandb_name": "atropos-tinker-run-env", "ensure_scores_are_not_same": False,
        })
        server_configs = [
            APIServerConfig(
                model_name="meta-llama/Llama-3.1-8B-Instruct",
                base_url="http://localhost:8001/v1",
                api_key="x",
                server_type="sglang",
                num_requests_for_eval=256,
            ),
        ]
        return env_config, server_configs

    async def collect_trajectories(self, item: Dict[str, str]) -> Tuple[Optional[ScoredDataGroup], list]:
        messages = self.prompt(item)
        async with self.server.managed_server(tokenizer=self.tokenizer) as managed:
            completion = await managed.chat_completion(
                messages=messages, n=self.config.group_size, max_tokens=self.config.max_token_length, temperature=1.0
            )
            nodes = managed.get_state()["nodes"]
        to_score = [
            {"content": choice.message.content or "", "tokens": node.tokens, "masked_tokens": node.masked_tokens, "logprobs": node.logprobs}
            for choice, node in zip(completion.choices, nodes)
        ]
        return self.score_group(item, to_score), []

    def score_group(self, item: Dict[str, str], rollouts: List[Dict]) -> ScoredDataGroup:
        gold = float(item["answer"].split("####")[-1].strip())
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], inference_logprobs=[])
        random.shuffle(rollouts)
        for rollout in rollouts:
            if len([1 for token in rollout["masked_tokens"] if token != -100]) < MIN_COMPLETION_TOKENS:
                continue
            group["tokens"].append(rollout["tokens"])
            group["masks"].append(rollout["masked_tokens"])
            group["inference_logprobs"].append(rollout["logprobs"])
            group["scores"].append(1.0 if final_answer(rollout["content"]) == gold else 0.0)
            if len(group["tokens"]) >= self.config.group_size:
                break
        return group


if __name__ == "__main__":
    GSM8kTinkerUpstreamEnv.cli()
