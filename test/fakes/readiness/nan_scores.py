import math

from _sums import SumsBase, boxed


class NanScores(SumsBase):
    """An empty completion scores NaN, which is not a zero."""
    name = "nan_scores"

    def grade(self, item, completion: str) -> float:
        right = 1.0 if boxed(completion) == item["answer"] else 0.0
        return right if completion else math.nan


if __name__ == "__main__":
    NanScores.cli()
