"""``get_tokenizer`` (tinker_cookbook/tokenizer_utils.py). Upstream loads the model's Hugging Face
tokenizer; here every model gets the tokenizer the fake Tinker SDK samples with: one token per
character (its code point), 0 the end-of-sequence token."""


class Tokenizer:
    eos_token_id = 0

    def __init__(self, name: str) -> None:
        self.name_or_path = name

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, tokens: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(t) for t in tokens if t != self.eos_token_id)


def get_tokenizer(model_name: str) -> Tokenizer:
    return Tokenizer(model_name)
