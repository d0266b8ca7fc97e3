"""ManagedServer and DummyManagedServer (atroposlib/envs/server_handling/managed_server.py): wrap a
server and keep, per completion, the token ids, masks and logprobs the trainer needs."""
from dataclasses import dataclass, field
from typing import Any, Dict, List

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


def _generated_logprob(token_id: int) -> float:
    # Stable, plausible per-token values: the same completion always yields the same logprobs.
    return -round(0.05 + (token_id % 17) / 20, 4)


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
    """Real: ``POST /generate`` with ``input_ids`` returns the sampled ids and their logprobs. Here
    the completion text comes from ``/chat/completions`` and is tokenized with the env's tokenizer
    (the same tokenizer the trainer uses), so tokens decode back to the real prompt and answer."""

    async def chat_completion(self, **kwargs):
        messages = kwargs.get("messages", [])
        response = await self.server.chat_completion(**kwargs)
        prompt = self.tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
        for choice in response.choices:
            output = self.tokenizer.encode(choice.message.content or "", add_special_tokens=False)
            output.append(self.tokenizer.eos_token_id)
            tokens = prompt + output
            self.current_nodes.append(SequenceNode(
                full_text=self.tokenizer.decode(tokens),
                tokens=tokens,
                masked_tokens=[PROMPT_MASK] * len(prompt) + output,
                logprobs=[PROMPT_LOGPROB] * len(prompt) + [_generated_logprob(t) for t in output],
                metadata={"finish_reason": choice.finish_reason or "stop"},
            ))
        return response


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
