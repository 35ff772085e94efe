"""Where each persona's history window starts in each channel (build-context.md BC2-07a), remembered
between turns in this process so consecutive prompts share their history and a provider's prefix
cache holds. Forgetting it (a restart, the bound below) costs one turn's cache, nothing else: the
next turn starts afresh."""

from __future__ import annotations

import threading
from collections import OrderedDict

# Channels × personas remembered; the least recently used goes first.
MAX_ENTRIES = 10_000


class WindowMemory:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._anchors: OrderedDict[tuple[str, int | None], str] = OrderedDict()
        self._max = max_entries
        self._lock = threading.Lock()

    def anchor(self, channel_id: str, persona_id: int | None) -> str | None:
        with self._lock:
            key = (channel_id, persona_id)
            if key in self._anchors:
                self._anchors.move_to_end(key)
            return self._anchors.get(key)

    def remember(self, channel_id: str, persona_id: int | None, anchor_id: str | None) -> None:
        with self._lock:
            key = (channel_id, persona_id)
            if anchor_id is None:
                self._anchors.pop(key, None)
                return
            self._anchors[key] = anchor_id
            self._anchors.move_to_end(key)
            while len(self._anchors) > self._max:
                self._anchors.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._anchors.clear()


WINDOWS = WindowMemory()
