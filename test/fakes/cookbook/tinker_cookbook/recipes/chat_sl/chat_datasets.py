"""Chat datasets of the chat_sl recipe (tinker_cookbook/recipes/chat_sl/chat_datasets.py,
supervised/data.py): each conversation rendered to tokens, the loss on its last assistant message.
Upstream downloads no_robots and tulu3 from the Hugging Face hub; here both are a few built-in
conversations. A ``.jsonl`` file (one ``{"messages": [...]}`` per line) is read as upstream does."""
from __future__ import annotations

import json

import chz
import tinker

from tinker_cookbook import renderers
from tinker_cookbook.supervised.train import SupervisedDataset, SupervisedDatasetBuilder
from tinker_cookbook.tokenizer_utils import get_tokenizer

BUILT_IN = [
    [{"role": "user", "content": f"Name a colour that starts with the letter {letter}."},
     {"role": "assistant", "content": colour}]
    for letter, colour in [("B", "Blue"), ("G", "Green"), ("R", "Red"), ("P", "Purple"), ("O", "Orange"),
                           ("Y", "Yellow"), ("W", "White"), ("T", "Teal")]
]


@chz.chz
class ChatDatasetBuilderCommonConfig:
    model_name_for_tokenizer: str
    renderer_name: str
    max_length: int | None
    batch_size: int
    train_on_what: renderers.TrainOnWhat | None = None


class ConversationDataset(SupervisedDataset):
    def __init__(self, conversations: list[list[dict]], common: ChatDatasetBuilderCommonConfig) -> None:
        self.conversations = conversations
        self.batch_size = common.batch_size
        self.renderer = renderers.get_renderer(common.renderer_name, get_tokenizer(common.model_name_for_tokenizer))
        self.max_length = common.max_length

    def __len__(self) -> int:
        return max(1, len(self.conversations) // self.batch_size)

    def _datum(self, messages: list[dict]) -> tinker.Datum:
        prompt = self.renderer.build_generation_prompt(messages[:-1]).to_ints()
        reply = self.renderer.tokenizer.encode(messages[-1]["content"] + "<|im_end|>")
        tokens = (prompt + reply)[: self.max_length] if self.max_length else prompt + reply
        weights = ([0.0] * len(prompt) + [1.0] * len(reply))[: len(tokens)]
        return tinker.Datum(model_input=tinker.ModelInput.from_ints(tokens[:-1]),
                            loss_fn_inputs={"target_tokens": tokens[1:], "weights": weights[1:]})

    def get_batch(self, index: int) -> list[tinker.Datum]:
        start = index * self.batch_size
        return [self._datum(m) for m in self.conversations[start:start + self.batch_size]]


@chz.chz
class NoRobotsBuilder(SupervisedDatasetBuilder):
    common_config: ChatDatasetBuilderCommonConfig

    def __call__(self) -> tuple[ConversationDataset, None]:
        return ConversationDataset(BUILT_IN, self.common_config), None


@chz.chz
class Tulu3Builder(NoRobotsBuilder):
    pass


@chz.chz
class FromConversationFileBuilder(SupervisedDatasetBuilder):
    common_config: ChatDatasetBuilderCommonConfig
    file_path: str

    def __call__(self) -> tuple[ConversationDataset, None]:
        with open(self.file_path) as f:
            conversations = [json.loads(line)["messages"] for line in f if line.strip()]
        return ConversationDataset(conversations, self.common_config), None
