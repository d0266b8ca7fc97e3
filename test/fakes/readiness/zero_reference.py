from _sums import SumsBase, boxed


class ZeroReference(SumsBase):
    """Compares with the question instead of the answer: the right answer scores 0."""
    name = "zero_reference"

    def grade(self, item, completion: str) -> float:
        return 1.0 if boxed(completion) == item["question"] else 0.0


if __name__ == "__main__":
    ZeroReference.cli()
