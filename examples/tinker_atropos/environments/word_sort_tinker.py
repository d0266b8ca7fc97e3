"""Sort a short list of words alphabetically.

A single-turn task built on ``SingleTurnQAEnv``: the prompt lists 4 to 8 words, the model answers
with them in alphabetical order, comma separated, inside <answer></answer>. Exact order earns 1.0;
the right words in a partly wrong order earn the fraction of adjacent pairs in order, halved.
"""
import random
import re
from typing import Dict, List, Tuple

from atroposlib.envs.base import APIServerConfig, BaseEnvConfig

try:  # an installed checkout (pip install -e .)
    from tinker_atropos.environments._rollouts import tinker_server_configs
    from tinker_atropos.environments.single_turn import SingleTurnQAEnv
except ModuleNotFoundError:  # run as a script from an uninstalled checkout: its folder is on sys.path
    from _rollouts import tinker_server_configs
    from single_turn import SingleTurnQAEnv

VOCABULARY = (
    "apple anchor banjo breeze candle cobalt dragon ember falcon fjord garnet glacier harbor "
    "hazel island ivory jasmine juniper kettle kiwi lantern lemon marble meadow nectar nimbus "
    "orchid otter pepper pumpkin quartz quill raven ribbon saffron silver tundra thistle umber "
    "violet walnut willow yarrow zephyr"
).split()

SYSTEM_PROMPT = (
    "Sort the words you are given in alphabetical order. Reply with the sorted words, comma "
    "separated, inside <answer></answer>, for example <answer>ant, bee, cat</answer>."
)


def parse_words(completion: str) -> List[str]:
    matches = re.findall(r"<answer>(.*?)</answer>", completion.split("</think>")[-1], flags=re.DOTALL)
    if not matches:
        return []
    return [word.strip().lower() for word in re.split(r"[,\s]+", matches[-1]) if word.strip()]


class WordSortEnv(SingleTurnQAEnv):
    name = "word_sort"

    @classmethod
    def config_init(cls) -> Tuple[BaseEnvConfig, List[APIServerConfig]]:
        env_config = BaseEnvConfig(
            group_size=8,
            batch_size=64,
            max_token_length=512,
            tokenizer_name="Qwen/Qwen3-8B",
            wandb_name="word_sort",
            total_steps=30,
            max_num_workers=16,
            ensure_scores_are_not_same=False,
            rollout_server_url="http://localhost:8000",
            use_wandb=True,
        )
        return env_config, tinker_server_configs()

    async def setup(self):
        self.rng = random.Random(7)

    async def get_next_item(self) -> Dict[str, List[str]]:
        words = self.rng.sample(VOCABULARY, self.rng.randint(4, 8))
        return {"words": words, "sorted": sorted(words)}

    def format_prompt(self, item: Dict[str, List[str]]) -> List[Dict[str, str]]:
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Words: " + ", ".join(item["words"])},
        ]

    def score_answer(self, item: Dict[str, List[str]], completion: str) -> float:
        answer = parse_words(completion)
        if answer == item["sorted"]:
            return 1.0
        if sorted(answer) != item["sorted"]:
            return 0.0
        in_order = sum(1 for a, b in zip(answer, answer[1:]) if a <= b)
        return 0.5 * in_order / (len(answer) - 1)


if __name__ == "__main__":
    WordSortEnv.cli()
