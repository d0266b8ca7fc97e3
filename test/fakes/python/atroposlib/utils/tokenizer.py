"""Stands in for ``transformers.AutoTokenizer.from_pretrained(tokenizer_name)``: no download, no
vocabulary. One token per character (id = code point), ChatML special tokens above the Unicode
range, so ``decode(encode(text)) == text`` and every run tokenizes identically."""
import re
from typing import Dict, List, Sequence

_SPECIAL_TOKENS: Dict[str, int] = {"<|im_start|>": 0x110000, "<|im_end|>": 0x110001, "<|endoftext|>": 0x110002}
_SPECIAL_IDS = {token_id: token for token, token_id in _SPECIAL_TOKENS.items()}
_SPECIAL_PATTERN = re.compile("(" + "|".join(re.escape(token) for token in _SPECIAL_TOKENS) + ")")


class CharTokenizer:
    eos_token = "<|im_end|>"
    pad_token = "<|endoftext|>"
    eos_token_id = _SPECIAL_TOKENS["<|im_end|>"]
    pad_token_id = _SPECIAL_TOKENS["<|endoftext|>"]

    def __init__(self, name_or_path: str):
        self.name_or_path = name_or_path

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        ids: List[int] = []
        for piece in _SPECIAL_PATTERN.split(text):
            if piece in _SPECIAL_TOKENS:
                ids.append(_SPECIAL_TOKENS[piece])
            else:
                ids.extend(ord(char) for char in piece)
        return ids

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        out = []
        for token_id in ids:
            if token_id in _SPECIAL_IDS:
                if not skip_special_tokens:
                    out.append(_SPECIAL_IDS[token_id])
            elif 0 <= token_id < 0x110000:
                out.append(chr(token_id))
        return "".join(out)

    def apply_chat_template(self, messages, tokenize: bool = True, add_generation_prompt: bool = False, **kwargs):
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        if add_generation_prompt:
            text += "<|im_start|>assistant\n"
        return self.encode(text) if tokenize else text

    def __len__(self) -> int:
        return 0x110000 + len(_SPECIAL_TOKENS)
