"""What the bundled environments share: the Tinker trainer as their inference server, and one
sampled, scored group. The leading underscore keeps discovery from treating this as an environment.
"""
from typing import Callable, Dict, List, Optional

from atroposlib.envs.base import APIServerConfig, BaseEnv, ScoredDataGroup


def tinker_server_configs() -> List[APIServerConfig]:
    # The Tinker trainer serves /generate (token ids in, logprobs out), SGLang-style.
    return [
        APIServerConfig(
            model_name="Qwen/Qwen3-8B",
            base_url="http://localhost:8001/v1",
            api_key="x",
            server_type="sglang",
            num_requests_for_eval=256,
        )
    ]


async def sample_scored_group(
    env: BaseEnv,
    messages: List[Dict[str, str]],
    score: Callable[[str], Optional[float]],
) -> Optional[ScoredDataGroup]:
    """``group_size`` completions of ``messages`` through ``managed_server``, so the trainer gets
    real token ids and logprobs, each scored by ``score``. A completion scored None is left out;
    None comes back when nothing is left (the group is dropped rather than trained on)."""
    async with env.server.managed_server(tokenizer=env.tokenizer) as managed:
        completions = await managed.chat_completion(
            messages=messages,
            n=env.config.group_size,
            max_tokens=env.config.max_token_length,
            temperature=1.0,
        )
        nodes = managed.get_state()["nodes"]

    group = ScoredDataGroup(tokens=[], masks=[], scores=[], inference_logprobs=[], messages=[])
    for choice, node in zip(completions.choices, nodes):
        content = choice.message.content or ""
        reward = score(content)
        if reward is None:
            continue
        group["tokens"].append(node.tokens)
        group["masks"].append(node.masked_tokens)
        group["inference_logprobs"].append(node.logprobs)
        group["scores"].append(float(reward))
        group["messages"].append(messages + [{"role": "assistant", "content": content}])
    return group if group["tokens"] else None


def with_percent_correct(buffer: List[float], wandb_metrics: Optional[Dict]) -> Dict:
    """``wandb_metrics`` plus ``train/percent_correct`` over the completions scored since the last
    log; empties ``buffer``. atroposlib prefixes the key with the env's W&B name when logging."""
    metrics = dict(wandb_metrics or {})
    if buffer:
        metrics["train/percent_correct"] = sum(buffer) / len(buffer)
        buffer.clear()
    return metrics
