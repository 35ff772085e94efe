"""A persona's sampling settings: how its replies are drawn from the model (issue 31 item 5).

Plain data without Django: the admin and the preset import check values here, the pipeline carries
them on ``PersonaInfo``, and the provider sends the ones that are set (``None`` and an empty stop list
leave the provider's default). The ranges are OpenAI's, which the OpenAI-compatible servers follow.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

# name → (lowest, highest) for the decimal settings.
RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "presence_penalty": (-2.0, 2.0),
    "frequency_penalty": (-2.0, 2.0),
}
MAX_STOP_STRINGS = 4  # OpenAI refuses more
MAX_STOP_CHARS = 200
SEED_RANGE = (-(2**63), 2**63 - 1)


class SamplingError(ValueError):
    """A value outside what a provider accepts; the message names the setting."""


@dataclass(frozen=True)
class Sampling:
    temperature: float | None = None
    top_p: float | None = None
    max_reply_tokens: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None

    def __post_init__(self) -> None:
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if value is not None and not low <= value <= high:
                raise SamplingError(f"{name}: {value} is outside {low:g} to {high:g}")
        if self.max_reply_tokens is not None and self.max_reply_tokens < 1:
            raise SamplingError(f"max_reply_tokens: {self.max_reply_tokens} is below 1")
        if self.seed is not None and not SEED_RANGE[0] <= self.seed <= SEED_RANGE[1]:
            raise SamplingError(f"seed: {self.seed} is not a 64-bit integer")
        check_stop(self.stop)

    def capped(self, max_reply_tokens: int) -> Sampling:
        """The settings as sent: the reply cap is the operator's ``LLM_MAX_REPLY_TOKENS`` at most."""
        own = self.max_reply_tokens
        return replace(self, max_reply_tokens=max_reply_tokens if own is None else min(own, max_reply_tokens))

    def as_json(self) -> dict[str, Any]:
        """The settings that are set, as the prompt record shows them."""
        shown = {name: value for name, value in asdict(self).items() if value not in (None, ())}
        return shown | ({"stop": list(self.stop)} if self.stop else {})


def check_stop(stop: tuple[str, ...] | list[str]) -> None:
    if len(stop) > MAX_STOP_STRINGS:
        raise SamplingError(f"stop: {len(stop)} strings, at most {MAX_STOP_STRINGS}")
    for text in stop:
        if not isinstance(text, str) or not text or len(text) > MAX_STOP_CHARS:
            raise SamplingError(f"stop: each string is 1 to {MAX_STOP_CHARS} characters")
