/**
 * A generated environments tree for the discovery benchmark: files of a few hundred lines each,
 * laid out in group folders, with the base-class shapes real trees have (direct, aliased, dotted,
 * abstract bases in other files reached by module path or relative import, subclasses of other
 * environments) and a few files that do not parse.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface GeneratedTree {
  files: number;
  bytes: number;
}

const GROUPS = 20;

/** A method body of realistic Python (loops, comprehensions, f-strings, awaits), ~`lines` lines. */
function methodBlock(i: number, lines: number): string {
  const out: string[] = [];
  for (let m = 0; out.length < lines; m++) {
    out.push(
      `    async def step_${m}(self, item: Item, attempts: int = 3) -> Tuple[Optional[ScoredDataGroup], List[Item]]:`,
      `        """Rollout helper ${m} for environment ${i}."""`,
      `        prompt = self.tokenizer.apply_chat_template([{"role": "user", "content": item["question"]}], tokenize=False)`,
      `        completions = await self.server.completion(prompt=prompt, n=self.config.group_size, max_tokens=${256 + m})`,
      `        scores = {"tokens": [], "masks": [], "scores": []}`,
      `        for choice in completions.choices:`,
      `            text = choice.text.strip()`,
      `            reward = 1.0 if self._check(text, item["answer"]) else -1.0`,
      `            tokens = [t for t in self.tokenizer.encode(text) if t != self.tokenizer.pad_token_id]`,
      `            if len(tokens) < ${8 + (m % 5)}:`,
      `                continue`,
      `            scores["tokens"].append(tokens)`,
      `            scores["masks"].append([-100] * len(prompt) + tokens[len(prompt):])`,
      `            scores["scores"].append(reward)`,
      `        self.percent_correct_buffer.extend(max(s, 0) for s in scores["scores"])`,
      `        logger.debug(f"step ${m}: {len(scores['scores'])} scored, mean {sum(scores['scores']) / max(len(scores['scores']), 1):.3f}")`,
      `        return (scores if scores["scores"] else None), []`,
      ``,
    );
  }
  return out.join('\n');
}

const HEADER = (i: number, extraImports: string): string => `"""Generated environment ${i}: a math-style task used to benchmark discovery."""
import asyncio
import logging
import random
from typing import Dict, List, Optional, Tuple, TypedDict

from pydantic import Field
${extraImports}
from atroposlib.envs.base import APIServerConfig, BaseEnvConfig, ScoredDataGroup

logger = logging.getLogger(__name__)


class Item(TypedDict):
    question: str
    answer: str


class Config${i}(BaseEnvConfig):
    """Extra knobs of environment ${i}."""

    difficulty: int = Field(default=${i % 7}, ge=0, le=10, description="How hard the generated problems are")
    shuffle_seed: Optional[int] = Field(default=None, description="Seed for the dataset shuffle")
    prompt_style: str = Field(default="plain", description="plain | chat | few_shot")
`;

interface Shape {
  imports: string;
  bases: string;
  named: boolean;
}

/** The base-class shape of file `i` in group `g`: indices chosen so every shape is well mixed. */
function shape(i: number, g: number, part: number): Shape {
  const abstractOf = (k: number): string => `abstract_${k}`;
  switch (i % 20) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
      return { imports: 'from atroposlib.envs.base import BaseEnv', bases: 'BaseEnv', named: true };
    case 8:
    case 9:
    case 10:
      return { imports: 'from atroposlib.envs.base import BaseEnv as AtroposBaseEnv', bases: 'AtroposBaseEnv', named: true };
    case 11:
      return { imports: 'import atroposlib.envs.base as base', bases: 'base.BaseEnv', named: true };
    case 12:
      return { imports: 'import atroposlib.envs', bases: 'atroposlib.envs.BaseEnv', named: true };
    case 13:
    case 14:
      // Abstract bases of their group, subclassed by cases 15-18.
      return { imports: 'from atroposlib.envs.base import BaseEnv', bases: 'BaseEnv', named: false };
    case 15:
    case 16:
      return { imports: `from .${abstractOf(i - 2)} import Env${i - 2} as Shared`, bases: 'Shared', named: true };
    case 17:
      return { imports: `from bench_envs.group_${g}.part_${part}.${abstractOf(i - 4)} import Env${i - 4}`, bases: `Env${i - 4}`, named: true };
    case 18:
      return { imports: `from ...group_${(g + 1) % GROUPS}.part_${part} import ${abstractOf(i - 4)}`, bases: `${abstractOf(i - 4)}.Env${i - 4}`, named: false };
    default:
      return { imports: `from .env_${i - 19} import Env${i - 19}`, bases: `Env${i - 19}`, named: false };
  }
}

function fileName(i: number): string {
  const local = i % 20;
  return local === 13 || local === 14 ? `abstract_${local}.py` : `env_${local}.py`;
}

/** Writes `count` environment files under `dir` (bench_envs/group_G/part_P/...). */
export function generateTree(dir: string, count = 1000, linesPerFile = 260): GeneratedTree {
  let bytes = 0;
  const perGroup = Math.ceil(count / GROUPS);
  for (let n = 0; n < count; n++) {
    const g = Math.floor(n / perGroup);
    const i = n % perGroup;
    const part = Math.floor(i / 20);
    const { imports, bases, named } = shape(i % 20, g, part);
    const groupDir = join(dir, 'bench_envs', `group_${g}`, `part_${part}`);
    mkdirSync(groupDir, { recursive: true });
    const local = i % 20;
    const head = HEADER(n, imports);
    const cls = `

class Env${local}(${bases}):
    """Environment ${n} of the benchmark tree."""

${named ? `    name = "bench_${n}"\n` : ''}    env_config_cls = Config${n}

    def __init__(self, config: Config${n}, server_configs: List[APIServerConfig], slurm=False, testing=False):
        super().__init__(config, server_configs, slurm, testing)
        self.percent_correct_buffer: List[float] = []

    @classmethod
    def config_init(cls) -> Tuple[Config${n}, List[APIServerConfig]]:
        return Config${n}(group_size=8, total_steps=100), [APIServerConfig(model_name="Qwen/Qwen3-8B", server_type="sglang")]

    def _check(self, text: str, answer: str) -> bool:
        return text.split("####")[-1].strip() == answer.strip()

`;
    const broken = n % 97 === 50 ? '\n    def oops(self:\n' : '';
    const source = head + cls + methodBlock(n, linesPerFile - head.split('\n').length - cls.split('\n').length) + broken + '\n';
    writeFileSync(join(groupDir, fileName(i)), source);
    bytes += Buffer.byteLength(source);
  }
  return { files: count, bytes };
}
