"""What the readiness fakes share (beside them, one environment per file, each written to fail one
check, and good_sums.py that passes them all): items are small sums with their answer under
``answer``; a group is sampled through ``managed_server`` as the bundled environments do, and every
completion scored by the environment's own ``grade``. The underscore keeps discovery from offering it."""
from typing import Dict, List, Optional, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig, ScoredDataGroup

PROBLEMS = [{"question": f"What is {a} + {b}? Answer with \\boxed{{n}}.", "answer": str(a + b)} for a, b in ((2, 3), (7, 8), (12, 30), (5, 9), (21, 21), (3, 4))]


def boxed(text: str) -> Optional[str]:
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    end = text.find("}", start)
    return text[start + 7:end].strip() if end > start else None


class SumsBase(BaseEnv):
    max_token_length = 512

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        config = BaseEnvConfig(group_size=8, batch_size=64, max_token_length=cls.max_token_length, tokenizer_name="Qwen/Qwen3-8B",
                               wandb_name=cls.name, total_steps=10, ensure_scores_are_not_same=False, use_wandb=True)
        return config, [APIServerConfig(model_name="Qwen/Qwen3-8B", base_url="http://localhost:8001/v1", api_key="x", server_type="sglang")]

    async def setup(self):
        self.train = list(PROBLEMS)
        self.iter = 0

    async def get_next_item(self) -> Dict[str, str]:
        item = self.train[self.iter % len(self.train)]
        self.iter += 1
        return item

    def prompt(self, item) -> List[Dict[str, str]]:
        return [{"role": "user", "content": item["question"]}]

    def grade(self, item, completion: str) -> float:
        return 1.0 if boxed(completion) == item["answer"] else 0.0

    async def collect_trajectories(self, item):
        messages = self.prompt(item)
        async with self.server.managed_server(tokenizer=self.tokenizer) as managed:
            completions = await managed.chat_completion(messages=messages, n=self.config.group_size, max_tokens=64)
            nodes = managed.get_state()["nodes"]
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], inference_logprobs=[], messages=[])
        for choice, node in zip(completions.choices, nodes):
            content = choice.message.content
            group["tokens"].append(node.tokens)
            group["masks"].append(node.masked_tokens)
            group["inference_logprobs"].append(node.logprobs)
            group["scores"].append(self.grade(item, content))
            group["messages"].append(messages + [{"role": "assistant", "content": content}])
        return group, []

    async def evaluate(self, *args, **kwargs):
        return None
