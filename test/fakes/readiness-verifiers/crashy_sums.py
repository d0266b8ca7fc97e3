"""A verifiers environment whose reward function raises on an empty reply. verifiers' rubric catches
the exception, logs "Error calling reward function" and scores 0.0: a crash that looks like a zero."""
import verifiers as vf

ROWS = [{"question": f"What is {a} + {b}?", "answer": str(a + b)} for a, b in ((2, 3), (7, 8), (12, 30))]


def first_char_reward(completion, answer, **kwargs) -> float:
    text = completion[-1]["content"]
    if text[0] == "\\":  # IndexError on an empty reply
        return 1.0 if vf.extract_boxed_answer(text) == answer else 0.0
    return 1.0 if vf.extract_boxed_answer(text) == answer else 0.0


def load_environment(**kwargs):
    parser = vf.Parser()
    return vf.SingleTurnEnv(dataset=vf.Dataset(ROWS), system_prompt="Answer in \\boxed{}.", parser=parser, rubric=vf.Rubric(funcs=[first_char_reward], parser=parser))
