"""Real pings from the reply: ``@handle`` becomes ``<@id>`` when exactly one participant of the
turn's target index claims that handle as an output mention and may be pinged (participants.md
X-02, X-08); an unknown or shared handle stays text. Only user pings exist: delivery's
``allowed_mentions`` never permits ``@everyone``, ``@here`` or roles, so a prompt-injected
``@everyone`` pings no one."""

from __future__ import annotations

import re

from chatcontext.core.participants.model import normalize_alias
from chatcontext.core.participants.target_index import ParticipantTargetIndex, can_ping

_HANDLE = re.compile(r"(?<![\w<@])@([\w.\-]{1,32})")


def ping_handles(text: str, index: ParticipantTargetIndex) -> str:
    claims: dict[str, set[str]] = {}
    pingable: dict[str, str] = {}
    for target in index.targets:
        for alias in target.aliases_for("output_mention"):
            claims.setdefault(alias.normalized, set()).add(target.serialized_key)
        if can_ping(target) and target.target_id is not None:
            pingable[target.serialized_key] = target.target_id

    def replace(match: re.Match[str]) -> str:
        owners = claims.get(normalize_alias(match.group(1)), set())
        if len(owners) != 1:
            return match.group(0)
        target_id = pingable.get(next(iter(owners)))
        return f"<@{target_id}>" if target_id else match.group(0)

    return _HANDLE.sub(replace, text)
