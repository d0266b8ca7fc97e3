from _sums import SumsBase


class GoodSums(SumsBase):
    name = "good_sums"


if __name__ == "__main__":
    GoodSums.cli()
