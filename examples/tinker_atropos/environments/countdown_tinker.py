"""Countdown arithmetic puzzles: combine the given numbers to hit a target.

Each problem is a set of numbers and a target built from a hidden expression over a subset of them.
The model answers with an expression inside <answer></answer>; it earns 1.0 when the expression uses
only the given numbers (each at most once) and the allowed operators and evaluates exactly to the
target, ``format_reward`` for a well-formed but wrong expression, and 0.0 otherwise. Problems are
generated from ``seed``, so a run is reproducible.
"""
import ast
import operator
import random
import re
from collections import Counter
from enum import Enum
from fractions import Fraction
from typing import Dict, List, Optional, Tuple

from pydantic import Field

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


class Difficulty(str, Enum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class CountdownEnvConfig(BaseEnvConfig):
    difficulty: Difficulty = Field(
        default=Difficulty.MEDIUM,
        description="Puzzle difficulty: easy uses small numbers, hard uses more and larger operands",
    )
    max_operands: int = Field(
        default=4, ge=2, le=6, description="Most numbers offered per puzzle"
    )
    format_reward: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="Reward for a well-formed answer expression that misses the target",
    )
    allowed_operators: List[str] = Field(
        default=["+", "-", "*", "/"],
        description="Operators the answer may use (subset of + - * /)",
    )
    seed: Optional[int] = Field(
        default=None, description="Seed for puzzle generation; None draws a fresh seed per run"
    )
    target_range: Dict[str, int] = Field(
        default_factory=lambda: {"min": 10, "max": 250},
        description="Inclusive bounds for puzzle targets, as {min, max}",
    )


_MAX_PUZZLE_ATTEMPTS = 10_000

# Largest operand value per difficulty.
_OPERAND_CEILING = {Difficulty.EASY: 10, Difficulty.MEDIUM: 25, Difficulty.HARD: 100}

_AST_OPERATORS = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
}

SYSTEM_PROMPT = (
    "You solve Countdown number puzzles. Combine some of the given numbers, each at most once, "
    "with the allowed operators and parentheses to reach the target exactly. Think briefly, then "
    "give only the expression inside <answer></answer>, for example <answer>(25 - 5) * 4</answer>."
)


class InvalidExpression(ValueError):
    pass


def evaluate_expression(expression: str, allowed_operators: List[str]) -> Tuple[Fraction, List[int]]:
    """Exact value of an arithmetic expression and the integers it uses.

    The expression is parsed with ``ast`` and walked by hand: only integer literals, parentheses and
    the allowed binary operators are accepted, so no model output is ever executed.
    """
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        raise InvalidExpression(f"not an expression: {exc.msg}") from exc
    operands: List[int] = []

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            operands.append(node.value)
            return Fraction(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _AST_OPERATORS:
            symbol, apply = _AST_OPERATORS[type(node.op)]
            if symbol not in allowed_operators:
                raise InvalidExpression(f"operator {symbol} is not allowed")
            left, right = walk(node.left), walk(node.right)
            if symbol == "/" and right == 0:
                raise InvalidExpression("division by zero")
            return apply(left, right)
        raise InvalidExpression(f"unsupported element {type(node).__name__}")

    return walk(tree.body), operands


def extract_expression(completion: str) -> Optional[str]:
    matches = re.findall(r"<answer>(.*?)</answer>", completion.split("</think>")[-1], flags=re.DOTALL)
    return matches[-1].strip() if matches else None


class CountdownEnv(BaseEnv):
    name = "countdown"
    env_config_cls = CountdownEnvConfig

    def __init__(
        self,
        config: CountdownEnvConfig,
        server_configs: List[APIServerConfig],
        slurm=False,
        testing=False,
    ):
        super().__init__(config, server_configs, slurm, testing)
        self.percent_correct_buffer: List[float] = []

    @classmethod
    def config_init(cls) -> Tuple[CountdownEnvConfig, List[APIServerConfig]]:
        env_config = CountdownEnvConfig(
            group_size=8,
            batch_size=64,
            difficulty=Difficulty.HARD,
            max_operands=5,
            seed=1234,
            tokenizer_name="Qwen/Qwen3-8B",
            wandb_name="countdown",
            total_steps=40,
            max_token_length=1024,
            max_num_workers=16,
            ensure_scores_are_not_same=False,
            rollout_server_url="http://localhost:8000",
            use_wandb=True,
        )
        return env_config, tinker_server_configs()

    async def setup(self):
        unknown = set(self.config.allowed_operators) - {"+", "-", "*", "/"}
        if unknown or not self.config.allowed_operators:
            raise ValueError(f"allowed_operators must be a non-empty subset of + - * /, got {self.config.allowed_operators}")
        low, high = self.config.target_range.get("min", 10), self.config.target_range.get("max", 250)
        if low > high:
            raise ValueError(f"target_range min ({low}) is above max ({high})")
        self.target_bounds = (low, high)
        self.rng = random.Random(self.config.seed)

    def make_puzzle(self) -> Dict:
        count = {
            Difficulty.EASY: 3,
            Difficulty.MEDIUM: min(4, self.config.max_operands),
            Difficulty.HARD: self.config.max_operands,
        }[self.config.difficulty]
        count = max(2, min(count, self.config.max_operands))
        ceiling = _OPERAND_CEILING[self.config.difficulty]
        low, high = self.target_bounds
        for _ in range(_MAX_PUZZLE_ATTEMPTS):
            numbers = [self.rng.randint(1, ceiling) for _ in range(count)]
            used = self.rng.sample(numbers, self.rng.randint(2, count))
            expression = str(used[0])
            for number in used[1:]:
                expression = f"({expression} {self.rng.choice(self.config.allowed_operators)} {number})"
            value, _ = evaluate_expression(expression, self.config.allowed_operators)
            if value.denominator == 1 and low <= value <= high:
                return {"numbers": numbers, "target": int(value), "solution": expression}
        raise ValueError(
            f"no {self.config.difficulty.value} puzzle with operators {self.config.allowed_operators} "
            f"reaches a target in [{low}, {high}]: widen target_range or allow more operators"
        )

    async def get_next_item(self) -> Dict:
        return self.make_puzzle()

    def score_answer(self, puzzle: Dict, completion: str) -> float:
        expression = extract_expression(completion)
        if expression is None:
            return 0.0
        try:
            value, operands = evaluate_expression(expression, self.config.allowed_operators)
        except InvalidExpression:
            return 0.0
        if Counter(operands) - Counter(puzzle["numbers"]):
            return 0.0  # used a number that was not offered, or one more often than offered
        return 1.0 if value == puzzle["target"] else self.config.format_reward

    async def collect_trajectories(self, item: Dict) -> Tuple[Optional[ScoredDataGroup], List[Item]]:
        operators = " ".join(self.config.allowed_operators)
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {
                "role": "user",
                "content": f"Numbers: {', '.join(map(str, item['numbers']))}\n"
                f"Target: {item['target']}\nAllowed operators: {operators}",
            },
        ]
        group = await sample_scored_group(self, messages, lambda content: self.score_answer(item, content))
        if group is None:
            return None, []
        self.percent_correct_buffer.extend(1.0 if s == 1.0 else 0.0 for s in group["scores"])
        return group, []

    async def evaluate(self, *args, **kwargs):
        # Training rewards already measure exact solves; there is no separate held-out set.
        return None

    async def wandb_log(self, wandb_metrics: Optional[Dict] = None):
        wandb_metrics = with_percent_correct(self.percent_correct_buffer, wandb_metrics)
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    CountdownEnv.cli()
