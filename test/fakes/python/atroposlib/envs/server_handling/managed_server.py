"""ManagedServer and DummyManagedServer (atroposlib/envs/server_handling/managed_server.py): wrap a
server and keep, per completion, the token ids, masks and logprobs the trainer needs."""
from dataclasses import dataclass, field
from typing import Any, Dict, List

from .openai_server import ChatCompletion, ChatCompletionMessage, Choice

# Positions the trainer must not learn from: the prompt.
PROMPT_MASK = -100
# Logprob marking a prompt position in inference_logprobs, as the Tinker trainer expects.
PROMPT_LOGPROB = 1.0


@dataclass
class SequenceNode:
    full_text: str
    tokens: List[int]
    masked_tokens: List[int]
    logprobs: List[float]
    metadata: Dict[str, Any] = field(default_factory=dict)


class _NodeTracker:
    def __init__(self, server, tokenizer=None):
        self.server = server
        self.tokenizer = tokenizer
        self.current_nodes: List[SequenceNode] = []

    def get_state(self) -> Dict[str, Any]:
        return {"nodes": list(self.current_nodes)}

    def reset(self) -> None:
        self.current_nodes.clear()


class ManagedServer(_NodeTracker):
    """The chat prompt is rendered and tokenized here and sent as ``input_ids`` through the server's
    token path (``/generate`` for sglang); the sampled ids and their logprobs come back and are kept."""

    async def chat_completion(self, **kwargs) -> ChatCompletion:
        messages = kwargs.pop("messages", [])
        prompt = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=not messages or messages[-1]["role"] != "assistant")
        input_ids = self.tokenizer.encode(prompt, add_special_tokens=False)
        prompt_tokens, outputs, logprobs, finish_reasons = await self.server.tokens_and_logprobs_completion(**kwargs, prompt=prompt, input_ids=input_ids)
        choices = []
        for index, (output, output_logprobs) in enumerate(zip(outputs, logprobs)):
            reason = finish_reasons[index] if index < len(finish_reasons) else "stop"
            if isinstance(reason, dict):
                reason = reason.get("type", "stop")
            text = self.tokenizer.decode(output, skip_special_tokens=True)
            self.current_nodes.append(SequenceNode(
                full_text=prompt + text,
                tokens=prompt_tokens + output,
                masked_tokens=[PROMPT_MASK] * len(prompt_tokens) + output,
                logprobs=[PROMPT_LOGPROB] * len(prompt_tokens) + output_logprobs,
                metadata={"finish_reason": reason},
            ))
            choices.append(Choice(index=index, message=ChatCompletionMessage(content=text), finish_reason=reason))
        return ChatCompletion(id="", model=self.server.config.model_name, choices=choices)


class DummyManagedServer(_NodeTracker):
    """For OpenAI endpoints (no token ids): placeholder tokens 0..127 and logprobs -0.5; the text
    and therefore the scores are real."""

    DUMMY_TOKENS = list(range(128))
    DUMMY_MASKED_TOKENS = [PROMPT_MASK] + DUMMY_TOKENS[1:]
    DUMMY_LOGPROBS = [-0.5] * 128

    async def chat_completion(self, **kwargs):
        messages = kwargs.get("messages", [])
        response = await self.server.chat_completion(**kwargs)
        for choice in response.choices:
            transcript = messages + [{"role": "assistant", "content": choice.message.content or ""}]
            self.current_nodes.append(SequenceNode(
                full_text="\n\n".join(f"{m['role']}:{m['content']}" for m in transcript),
                tokens=self.DUMMY_TOKENS,
                masked_tokens=self.DUMMY_MASKED_TOKENS,
                logprobs=self.DUMMY_LOGPROBS,
                metadata={"finish_reason": choice.finish_reason or "stop", "dummy_tokens": True},
            ))
        return response
