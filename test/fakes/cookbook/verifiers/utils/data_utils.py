"""Answer extraction and the boxed-answer system prompt (verifiers/utils/data_utils.py)."""

BOXED_SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."


def extract_boxed_answer(text: str) -> str:
    """The content of the last ``\\boxed{...}`` (braces balanced), or the whole text without one."""
    start = text.rfind("\\boxed{")
    if start == -1:
        return text
    depth, i = 1, start + len("\\boxed{")
    while i < len(text) and depth > 0:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    if depth != 0:
        return text
    return text[start + len("\\boxed{"):i - 1]


def extract_hash_answer(text: str) -> str:
    """GSM8K's gold answer: what follows ``####``."""
    return text.split("####")[-1].strip() if "####" in text else text.strip()
