"""Test fake of the ``gsm8k`` verifiers environment (PrimeIntellect-ai/verifiers
environments/gsm8k/gsm8k.py before the v1 move, as ``prime env install primeintellect/gsm8k``
installs it): ``load_environment(system_prompt, num_train_examples, num_eval_examples)`` returns a
``vf.SingleTurnEnv`` whose reward is ``MathRubric``'s ``correct_answer`` (the last ``\\boxed{}`` of the
reply against the gold answer). Upstream downloads openai/gsm8k; this one carries a few problems of
the same form (the gold answer after ``####``), so the tests' fake endpoints can answer them right or
wrong on purpose. Its pyproject.toml (beside this file, as ``vf-eval`` looks for it) sets the
``vf-eval`` defaults: 5 examples, 3 rollouts each."""
import verifiers as vf
from verifiers.utils.data_utils import BOXED_SYSTEM_PROMPT, extract_hash_answer

TRAIN_PROBLEMS = [
    {"question": "Mia has 3 boxes of 12 crayons and gives away 7 crayons. How many crayons does she have left?",
     "answer": "3 * 12 = 36 crayons, and 36 - 7 = 29.\n#### 29"},
    {"question": "A bus carries 45 people on each trip and makes 6 trips. How many people does it carry?",
     "answer": "45 * 6 = 270.\n#### 270"},
    {"question": "Tom reads 15 pages a day for 8 days and then 20 more pages. How many pages did he read?",
     "answer": "15 * 8 = 120, and 120 + 20 = 140.\n#### 140"},
    {"question": "A farmer has 96 eggs and packs them into cartons of 12. How many cartons does he fill?",
     "answer": "96 / 12 = 8.\n#### 8"},
    {"question": "Lena buys 4 notebooks at $3 each and a pen for $2. How many dollars does she spend?",
     "answer": "4 * 3 = 12, and 12 + 2 = 14.\n#### 14"},
    {"question": "A garden has 7 rows of 9 tulips. 11 tulips are picked. How many tulips remain?",
     "answer": "7 * 9 = 63, and 63 - 11 = 52.\n#### 52"},
    {"question": "Sam saves $25 a week for 5 weeks and spends $40. How many dollars does he have left?",
     "answer": "25 * 5 = 125, and 125 - 40 = 85.\n#### 85"},
    {"question": "A train travels 80 km per hour for 3 hours and then 50 km. How far does it travel in km?",
     "answer": "80 * 3 = 240, and 240 + 50 = 290.\n#### 290"},
]

TEST_PROBLEMS = [
    {"question": "A baker makes 8 trays of 15 muffins and sells 53. How many muffins are left?",
     "answer": "8 * 15 = 120, and 120 - 53 = 67.\n#### 67"},
    {"question": "Nora walks 4 km a day for 9 days. How many kilometers does she walk?",
     "answer": "4 * 9 = 36.\n#### 36"},
    {"question": "A class of 28 students splits into teams of 4. How many teams are there?",
     "answer": "28 / 4 = 7.\n#### 7"},
    {"question": "Ben has 150 stickers and gives 12 to each of 5 friends. How many stickers does he keep?",
     "answer": "12 * 5 = 60, and 150 - 60 = 90.\n#### 90"},
    {"question": "A shop sells 35 apples in the morning and twice as many in the afternoon. How many apples does it sell?",
     "answer": "35 * 2 = 70, and 35 + 70 = 105.\n#### 105"},
]


def _rows(problems: list[dict[str, str]], count: int) -> list[dict[str, str]]:
    rows = [{"question": p["question"], "answer": extract_hash_answer(p["answer"])} for p in problems]
    return rows if count == -1 else rows[:count]


def load_environment(system_prompt: str = BOXED_SYSTEM_PROMPT, num_train_examples=-1, num_eval_examples=-1):
    rubric = vf.MathRubric()
    return vf.SingleTurnEnv(
        dataset=vf.Dataset(_rows(TRAIN_PROBLEMS, num_train_examples)),
        eval_dataset=vf.Dataset(_rows(TEST_PROBLEMS, num_eval_examples)),
        system_prompt=system_prompt,
        parser=rubric.parser,
        rubric=rubric,
    )
