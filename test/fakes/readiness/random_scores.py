import random

from _sums import SumsBase


class RandomScores(SumsBase):
    name = "random_scores"

    def grade(self, item, completion: str) -> float:
        return random.random()


if __name__ == "__main__":
    RandomScores.cli()
