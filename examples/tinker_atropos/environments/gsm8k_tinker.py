"""Atropos environment for GSM8k math problems.

A self-contained take on tinker-atropos' ``gsm8k_tinker``: the same environment name, rewards and
Tinker-compatible generation (``managed_server``, so the trainer gets real token ids and logprobs),
but with a small embedded set of GSM8K-style problems instead of a Hugging Face dataset download, so
it runs offline and starts at once.
"""
import random
import re
import time
from typing import Dict, List, Optional, Tuple, TypedDict

from atroposlib.envs.base import (
    APIServerConfig,
    BaseEnv,
    BaseEnvConfig,
    ScoredDataGroup,
)
from atroposlib.type_definitions import Item

try:  # an installed checkout (pip install -e .)
    from tinker_atropos.environments._rollouts import sample_scored_group, tinker_server_configs, with_percent_correct
except ModuleNotFoundError:  # run as a script from an uninstalled checkout: its folder is on sys.path
    from _rollouts import sample_scored_group, tinker_server_configs, with_percent_correct

SYSTEM_PROMPT = (
    "You are a careful math tutor. Think through the problem step by step, "
    "then give the final numeric answer on its own line as \\boxed{answer}."
)


class GSM8kRow(TypedDict):
    question: str
    answer: str  # GSM8K style: worked solution, then "#### <final answer>"


TRAIN_PROBLEMS: List[GSM8kRow] = [
    {"question": "Lena buys 3 notebooks at $4 each and 2 pens at $1.50 each. How many dollars does she spend?",
     "answer": "Notebooks cost 3 * 4 = 12 dollars. Pens cost 2 * 1.5 = 3 dollars. 12 + 3 = 15.\n#### 15"},
    {"question": "A baker makes 48 muffins and sells 3/4 of them in the morning. How many muffins are left?",
     "answer": "He sells 48 * 3 / 4 = 36 muffins. 48 - 36 = 12 are left.\n#### 12"},
    {"question": "Tom reads 12 pages a day. How many days does he need to finish a 180-page book?",
     "answer": "180 / 12 = 15 days.\n#### 15"},
    {"question": "A farm has 7 cows and twice as many sheep. Each animal eats 2 kg of hay a day. "
                 "How many kilograms of hay does the farm need each day?",
     "answer": "There are 7 * 2 = 14 sheep, so 7 + 14 = 21 animals. 21 * 2 = 42 kg.\n#### 42"},
    {"question": "Maria had $50. She spent $18 on a shirt and half of what remained on lunch. "
                 "How many dollars does she have left?",
     "answer": "After the shirt she has 50 - 18 = 32. Lunch costs 32 / 2 = 16, leaving 32 - 16 = 16.\n#### 16"},
    {"question": "A train travels at 60 km per hour for 2.5 hours and then at 80 km per hour for 1.5 hours. "
                 "How many kilometers does it travel in total?",
     "answer": "60 * 2.5 = 150 km and 80 * 1.5 = 120 km. 150 + 120 = 270.\n#### 270"},
    {"question": "There are 5 boxes with 24 apples each. 17 apples are rotten and thrown away. "
                 "How many good apples remain?",
     "answer": "5 * 24 = 120 apples. 120 - 17 = 103.\n#### 103"},
    {"question": "Jake earns $15 an hour and works 6 hours a day, 5 days a week. How many dollars does he earn in 4 weeks?",
     "answer": "He earns 15 * 6 = 90 a day, 90 * 5 = 450 a week, 450 * 4 = 1800 in 4 weeks.\n#### 1800"},
    {"question": "A rectangle is 9 meters long and 6 meters wide. What is its perimeter in meters?",
     "answer": "2 * (9 + 6) = 30.\n#### 30"},
    {"question": "Sam has 3 times as many marbles as Ben. Together they have 64 marbles. How many marbles does Sam have?",
     "answer": "Ben has 64 / 4 = 16 marbles, so Sam has 3 * 16 = 48.\n#### 48"},
    {"question": "A pizza is cut into 8 slices. 6 friends each eat 2 slices. How many whole pizzas must they order?",
     "answer": "They eat 6 * 2 = 12 slices, which is 12 / 8 = 1.5 pizzas, so they order 2.\n#### 2"},
    {"question": "A store sells pencils in packs of 12. A school needs 150 pencils. How many packs must it buy?",
     "answer": "150 / 12 = 12.5, so it must buy 13 packs.\n#### 13"},
    {"question": "Emma saves $7 a week. After how many weeks will she have saved $84?",
     "answer": "84 / 7 = 12 weeks.\n#### 12"},
    {"question": "The temperature was 8 degrees at noon and dropped 3 degrees every hour. "
                 "What was the temperature 5 hours later?",
     "answer": "It dropped 5 * 3 = 15 degrees, so 8 - 15 = -7.\n#### -7"},
    {"question": "A water tank holds 500 liters and is 40% full. How many more liters are needed to fill it?",
     "answer": "It holds 500 * 0.4 = 200 liters, so 500 - 200 = 300 more are needed.\n#### 300"},
    {"question": "Noah ran 3.5 km on Monday, 4.25 km on Tuesday and 2.25 km on Wednesday. "
                 "How many kilometers did he run in total?",
     "answer": "3.5 + 4.25 + 2.25 = 10.\n#### 10"},
]

TEST_PROBLEMS: List[GSM8kRow] = [
    {"question": "A class has 28 students and 3/7 of them are boys. How many girls are there?",
     "answer": "There are 28 * 3 / 7 = 12 boys, so 28 - 12 = 16 girls.\n#### 16"},
    {"question": "A bike costs $240 and is on sale for 25% off. What is the sale price in dollars?",
     "answer": "The discount is 240 * 0.25 = 60, so the price is 240 - 60 = 180.\n#### 180"},
    {"question": "Ava bakes 4 trays of 15 cookies and gives away 22. How many cookies does she keep?",
     "answer": "4 * 15 = 60 cookies. 60 - 22 = 38.\n#### 38"},
    {"question": "A car uses 6 liters of fuel per 100 km. How many liters does it use for 350 km?",
     "answer": "350 / 100 * 6 = 21 liters.\n#### 21"},
]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def gold_answer(row: GSM8kRow) -> str:
    return row["answer"].split("####")[-1].strip().replace(",", "")


def extract_answer(completion: str) -> Optional[str]:
    """The model's final answer: the last \\boxed{...}, else the last "#### n", else the last number."""
    text = completion.split("</think>")[-1].replace(",", "")
    candidates = re.findall(r"\\boxed\{([^{}]*)\}", text) or re.findall(r"####\s*([^\n]*)", text)
    haystack = candidates[-1] if candidates else text
    numbers = _NUMBER.findall(haystack)
    if not numbers:
        return None
    # Inside \boxed{} or after #### the first number is the answer ("15 dollars"); in free text the last.
    return numbers[0] if candidates else numbers[-1]


def answers_match(predicted: Optional[str], gold: str) -> bool:
    if predicted is None:
        return False
    try:
        return abs(float(predicted) - float(gold)) < 1e-6
    except ValueError:
        return False


class GSM8kEnv(BaseEnv):
    name = "gsm8k"

    def __init__(
        self,
        config: BaseEnvConfig,
        server_configs: List[APIServerConfig],
        slurm=False,
        testing=False,
    ):
        super().__init__(config, server_configs, slurm, testing)
        self.percent_correct_buffer: List[float] = []
        self.eval_metrics: List[Tuple[str, float]] = []

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        env_config = BaseEnvConfig(
            group_size=16,
            batch_size=128,
            max_token_length=2048,
            tokenizer_name="Qwen/Qwen3-8B",
            wandb_name="gsm8k",
            total_steps=50,
            steps_per_eval=100,
            max_num_workers=24,
            ensure_scores_are_not_same=False,
            rollout_server_url="http://localhost:8000",
            use_wandb=True,
        )
        return env_config, tinker_server_configs()

    async def setup(self):
        self.train = list(TRAIN_PROBLEMS)
        random.Random(42).shuffle(self.train)
        self.test = list(TEST_PROBLEMS)
        self.iter = 0

    async def get_next_item(self) -> GSM8kRow:
        item = self.train[self.iter % len(self.train)]
        self.iter += 1
        return item

    def save_checkpoint(self, step, data=None):
        data = dict(data or {})
        data["iter"] = self.iter
        super().save_checkpoint(step, data)

    async def collect_trajectories(self, item: GSM8kRow) -> Tuple[Optional[ScoredDataGroup], List[Item]]:
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": item["question"]},
        ]
        gold = gold_answer(item)

        def score(content: str) -> Optional[float]:
            # An empty completion says nothing about the policy; leaving it out makes the group
            # short, so it is dropped rather than trained on.
            if not content.strip():
                return None
            return 1.0 if answers_match(extract_answer(content), gold) else 0.0

        group = await sample_scored_group(self, messages, score)
        if group is None:
            return None, []
        self.percent_correct_buffer.extend(group["scores"])
        return group, []

    async def rollout_and_score_eval(self, row: GSM8kRow) -> Dict:
        completion = await self.server.chat_completion(
            messages=[
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": row["question"]},
            ],
            n=1,
            max_tokens=self.config.max_token_length,
            temperature=0.0,
            split="eval",
        )
        response = completion.choices[0].message.content or ""
        predicted = extract_answer(response)
        score = 1.0 if answers_match(predicted, gold_answer(row)) else 0.0
        return {
            "score": score,
            "sample": {
                "question": row["question"],
                "gold_answer": gold_answer(row),
                "model_answer": predicted,
                "response": response,
                "score": score,
                "finish_reason": completion.choices[0].finish_reason,
            },
        }

    async def evaluate(self, *args, **kwargs):
        start_time = time.time()
        results = [await self.rollout_and_score_eval(row) for row in self.test]
        percent_correct = sum(r["score"] for r in results) / len(results)
        self.eval_metrics.append(("eval/percent_correct", percent_correct))
        await self.evaluate_log(
            metrics={"eval/percent_correct": percent_correct},
            samples=[r["sample"] for r in results],
            start_time=start_time,
            end_time=time.time(),
            generation_parameters={"temperature": 0.0, "max_tokens": self.config.max_token_length},
        )

    async def wandb_log(self, wandb_metrics: Optional[Dict] = None):
        wandb_metrics = with_percent_correct(self.percent_correct_buffer, wandb_metrics)
        for key, value in self.eval_metrics:
            wandb_metrics[key] = value
        self.eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    GSM8kEnv.cli()
