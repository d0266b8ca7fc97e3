"""An OpenAI-style async client that samples from a Tinker sampling client
(tinker_cookbook/recipes/verifiers_rl/tinker_openai.py): verifiers environments call
``client.chat.completions.create(model=, messages=, max_completion_tokens=, temperature=, ...)``; the
messages are rendered to tokens, sampled once with ``sample_async`` and the reply parsed back. The
response carries ``finish_reason`` "stop" only when the reply ended with the renderer's stop
sequence (else "length"), ``usage`` with prompt and completion token counts, and the token ids and
logprobs the RL recipe trains on. Its ``base_url`` is "http://localhost/" (metadata of an
evaluation names it so)."""
from __future__ import annotations

import time
from typing import Any

import tinker

from tinker_cookbook import renderers
from tinker_cookbook.tokenizer_utils import Tokenizer
from verifiers.utils.client_utils import Record


class TinkerAsyncOpenAIClient:
    base_url = "http://localhost/"

    def __init__(self, sampling_client: tinker.SamplingClient, renderer: renderers.Renderer, tokenizer: Tokenizer) -> None:
        self.sampling_client = sampling_client
        self.renderer = renderer
        self.tokenizer = tokenizer
        self.chat = _Chat(self)

    def set_sampling_client(self, sampling_client: tinker.SamplingClient) -> None:
        self.sampling_client = sampling_client


class _Completions:
    def __init__(self, parent: TinkerAsyncOpenAIClient) -> None:
        self._parent = parent

    async def create(self, **kwargs: Any) -> Record:
        if kwargs.get("tools"):
            raise NotImplementedError("Tool calling is not yet supported by this model's renderer.")
        if kwargs.get("stream", False):
            raise ValueError("stream=True not supported by TinkerAsyncOpenAIClient")
        parent = self._parent
        model_input = parent.renderer.build_generation_prompt(kwargs.get("messages", []))
        max_tokens = kwargs.get("max_tokens") or kwargs.get("max_completion_tokens")
        sample = await parent.sampling_client.sample_async(
            prompt=model_input, num_samples=1,
            sampling_params=tinker.SamplingParams(
                temperature=float(kwargs.get("temperature", 1.0)), max_tokens=int(max_tokens or 128),
                top_p=float(kwargs.get("top_p", 1.0)), top_k=int(kwargs.get("top_k", -1)),
                stop=kwargs.get("stop", parent.renderer.get_stop_sequences())))
        sequence = sample.sequences[0]
        tokens = list(sequence.tokens)
        logprobs = list(sequence.logprobs or [0.0] * len(tokens))
        message, termination = parent.renderer.parse_response(tokens)
        prompt_ids = model_input.to_ints()
        return Record({
            "id": "tinker-chatcmpl", "object": "chat.completion", "created": int(time.time()),
            "model": kwargs.get("model", "tinker"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": renderers.format_content_as_string(message["content"])},
                "finish_reason": "stop" if termination.is_stop_sequence else "length",
                "logprobs": {"content": [{"token": f"token_id:{t}", "logprob": lp, "top_logprobs": []}
                                         for t, lp in zip(tokens, logprobs)]},
                "token_ids": tokens,
            }],
            "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": len(tokens),
                      "total_tokens": len(prompt_ids) + len(tokens)},
            "prompt_token_ids": prompt_ids,
        })


class _Chat:
    def __init__(self, parent: TinkerAsyncOpenAIClient) -> None:
        self.completions = _Completions(parent)
