from _sums import SumsBase, boxed


class CrashOnEmpty(SumsBase):
    """Indexes into the completion: an empty one raises IndexError."""
    name = "crash_on_empty"

    def grade(self, item, completion: str) -> float:
        if completion[0] == "\\":
            return 1.0 if boxed(completion) == item["answer"] else 0.0
        return 1.0 if boxed(completion) == item["answer"] else 0.0


if __name__ == "__main__":
    CrashOnEmpty.cli()
