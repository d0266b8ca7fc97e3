"""Test environment in the image of atropos' ``environments/gsm8k_server.py``, for what the bundled
examples do not show (line numbers are upstream's file's):
- ``config_init`` returns ONE APIServerConfig (upstream :71-78): ServerManager takes it as a template
  and spreads it over localhost:9004-9007, so the endpoint a run config or --openai.* gives is
  never asked (only two or more YAML ``openai`` entries are used as they are);
- its server_type is the default "openai", so ``managed_server`` needs
  ATROPOS_ALLOW_DUMMY_MANAGED_SERVER=1;
- a right answer scores 1, a wrong one -1 (:317), and a group whose scores are all equal is dropped
  (None, :354-355): a model that is always right, or always wrong, yields no group at all.
Its problems are embedded (GSM8K-style) instead of the Hugging Face dataset, and the final answer is
read from the last \\boxed{} instead of with math_verify.
"""
import re
from typing import Dict, List, Optional, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnv, BaseEnvConfig, ScoredDataGroup

SYSTEM_PROMPT = "Think step by step, then end your answer with \\boxed{your answer here}."

TRAIN_PROBLEMS = [
    {"question": "A shelf holds 6 rows of 14 books. 19 books are lent out. How many books are still on the shelf?",
     "answer": "6 * 14 = 84 books, and 84 - 19 = 65 remain.\n#### 65"},
    {"question": "Ravi cycles 18 km each weekday and 25 km on Saturday. How many kilometers does he cycle in that week?",
     "answer": "5 * 18 = 90 on weekdays, and 90 + 25 = 115.\n#### 115"},
    {"question": "A jar has 3 times as many red beads as blue beads, and 48 beads in all. How many red beads are there?",
     "answer": "There are 48 / 4 = 12 blue beads, so 3 * 12 = 36 red.\n#### 36"},
]


def final_answer(text: str) -> Optional[float]:
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", text.split("</think>")[-1])
    try:
        return float(boxed[-1].replace(",", "")) if boxed else None
    except ValueError:
        return None


class GSM8kServerEnv(BaseEnv):
    name = "gsm8k_server"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, APIServerConfig]:
        env_config = BaseEnvConfig(
            tokenizer_name="NousResearch/DeepHermes-3-Llama-3-3B-Preview",
            group_size=8,
            use_wandb=True,
            rollout_server_url="http://localhost:8000",
            total_steps=1000,
            batch_size=12,
            steps_per_eval=100,
            max_token_length=2048,
            wandb_name="gsm8k",
        )
        server_config = APIServerConfig(
            model_name="NousResearch/DeepHermes-3-Llama-3-3B-Preview",
            base_url="http://localhost:9001/v1",
            api_key="x",
            num_requests_for_eval=256,
        )
        return env_config, server_config

    async def setup(self):
        self.iter = 0

    async def get_next_item(self) -> Dict[str, str]:
        item = TRAIN_PROBLEMS[self.iter % len(TRAIN_PROBLEMS)]
        self.iter += 1
        return item

    @staticmethod
    def prompt(item: Dict[str, str]) -> List[Dict[str, str]]:
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": item["question"]}]

    @staticmethod
    def score(item: Dict[str, str], content: Optional[str]) -> float:
        gold = float(item["answer"].split("####")[-1].strip())
        return 1.0 if final_answer(content or "") == gold else -1.0

    @staticmethod
    def unless_all_equal(group: ScoredDataGroup) -> Optional[ScoredDataGroup]:
        # Equal scores mean zero advantages: nothing to learn, so upstream returns None.
        return None if len(set(group["scores"])) == 1 else group

    async def evaluate(self, *args, **kwargs):
        # Upstream's gsm8k_server evaluates a test split; this stand-in has none, so it is the
        # test environment without a held-out evaluation (the evaluate subcommand writes no metrics).
        return None

    async def collect_trajectories(self, item: Dict[str, str]) -> Tuple[Optional[ScoredDataGroup], list]:
        async with self.server.managed_server(tokenizer=self.tokenizer) as managed:
            completion = await managed.chat_completion(
                messages=self.prompt(item), n=self.config.group_size, max_tokens=self.config.max_token_length, temperature=1.0
            )
            nodes = managed.get_state()["nodes"]
        group = ScoredDataGroup(tokens=[], masks=[], scores=[], inference_logprobs=[])
        for choice, node in zip(completion.choices, nodes):
            group["tokens"].append(node.tokens)
            group["masks"].append(node.masked_tokens)
            group["inference_logprobs"].append(node.logprobs)
            group["scores"].append(self.score(item, choice.message.content))
        return self.unless_all_equal(group), []


if __name__ == "__main__":
    GSM8kServerEnv.cli()
