from typing import Dict, List

from _sums import PROBLEMS, SumsBase


class LongPrompts(SumsBase):
    """A few-shot preamble far longer than max_token_length."""
    name = "long_prompts"

    def prompt(self, item) -> List[Dict[str, str]]:
        preamble = " ".join(f"Example {i}: {p['question']} \\boxed{{{p['answer']}}}." for i, p in enumerate(PROBLEMS * 40))
        return [{"role": "system", "content": preamble}, {"role": "user", "content": item["question"]}]


if __name__ == "__main__":
    LongPrompts.cli()
