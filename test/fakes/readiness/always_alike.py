from _sums import SumsBase


class AlwaysAlike(SumsBase):
    """Rewards answering at all: every completion of every group scores the same."""
    name = "always_alike"

    def grade(self, item, completion: str) -> float:
        return 1.0


if __name__ == "__main__":
    AlwaysAlike.cli()
