"""The prompt records a user appears in, for the user view and the export (``community.export``): the
newest prompt records about one user, matched like forget-me matches them (``subject_user_ids``), in the given
servers. One query; the heavy JSON columns are never read."""

from __future__ import annotations

from typing import Any

from chatcontext.records.forgetting import records_about
from personas.times import iso


def newest_records_about(user_disc_id: str, server_ids: frozenset[int] | None, limit: int) -> list[dict[str, Any]]:
    rows = records_about(user_disc_id)
    if server_ids is not None:
        rows = rows.filter(server_id__in=sorted(server_ids))
    fields = ("pk", "server_id", "created_at", "channel_name", "channel_disc_id", "persona_nickname", "source")
    return [
        {
            "id": pk,
            "server_id": server_id,
            "created_at": iso(created_at),
            "channel": f"#{channel_name}" if channel_name else channel_disc_id,
            "persona": persona_nickname,
            "source": source,
        }
        for pk, server_id, created_at, channel_name, channel_disc_id, persona_nickname, source in rows.order_by(
            "-created_at", "-id"
        ).values_list(*fields)[:limit]
    ]
