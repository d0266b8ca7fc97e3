"""Token completers (tinker_cookbook/completers.py): the policy an RL rollout samples from."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tinker

StopCondition = Any


@dataclass
class TokensWithLogprobs:
    tokens: list[int]
    maybe_logprobs: list[float] | None
    stop_reason: str | None = None

    @property
    def logprobs(self) -> list[float]:
        if self.maybe_logprobs is None:
            raise ValueError("Logprobs are not available")
        return self.maybe_logprobs


class TokenCompleter:
    async def __call__(self, model_input: tinker.ModelInput, stop: StopCondition, max_tokens: int | None = None) -> TokensWithLogprobs:
        raise NotImplementedError


@dataclass
class TinkerTokenCompleter(TokenCompleter):
    """Samples one completion from a Tinker sampling client, at most ``max_tokens`` tokens."""

    sampling_client: tinker.SamplingClient
    max_tokens: int
    temperature: float = 1.0

    async def __call__(self, model_input: tinker.ModelInput, stop: StopCondition, max_tokens: int | None = None) -> TokensWithLogprobs:
        limit = self.max_tokens if max_tokens is None else min(self.max_tokens, max_tokens)
        result = await self.sampling_client.sample_async(
            prompt=model_input, num_samples=1,
            sampling_params=tinker.SamplingParams(stop=stop, max_tokens=limit, temperature=self.temperature))
        sequence = result.sequences[0]
        return TokensWithLogprobs(tokens=list(sequence.tokens), maybe_logprobs=list(sequence.logprobs or [0.0] * len(sequence.tokens)),
                                  stop_reason=sequence.stop_reason)
