"""The per-turn translation table between Discord message ids and LLM-visible keys (build-context.md §5).

The LLM never sees a raw message snowflake (BC5-05): every message it can address is named by an
opaque key `ref_N` (to reply to / reference it) or `media_N` (to read its media or files). Tools
resolve those keys back through the same map, so exactly one map exists per persona turn (BC5-03).
"""

from __future__ import annotations

import re
from typing import Literal

Prefix = Literal["ref", "media"]

_KEY = re.compile(r"^(media|ref)_\d+$")


class MessageIdMap:
    """Two independent counters, one per prefix, starting at 1 (BC5-01); numbering follows
    registration order (BC5-04) and registration is idempotent per (prefix, real id) (BC5-02)."""

    def __init__(self) -> None:
        self._key_to_real: dict[str, str] = {}
        self._real_to_key: dict[tuple[Prefix, str], str] = {}
        self._counters: dict[Prefix, int] = {"ref": 0, "media": 0}

    def register(self, real_id: str, prefix: Prefix) -> str:
        existing = self._real_to_key.get((prefix, real_id))
        if existing is not None:
            return existing
        self._counters[prefix] += 1
        key = f"{prefix}_{self._counters[prefix]}"
        self._real_to_key[(prefix, real_id)] = key
        self._key_to_real[key] = real_id
        return key

    def resolve(self, key: str) -> str | None:
        return self._key_to_real.get(key)

    def get_opaque(self, real_id: str, prefix: Prefix) -> str | None:
        return self._real_to_key.get((prefix, real_id))

    @staticmethod
    def is_opaque_key(value: str) -> bool:
        return bool(_KEY.match(value))

    def as_dict(self) -> dict[str, str]:
        """Compact id → real id, in registration order (both prefixes interleaved)."""
        return dict(self._key_to_real)

    def __len__(self) -> int:
        return len(self._key_to_real)
