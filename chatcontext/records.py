"""Prompt records: one assembled turn exactly as the model saw it, with its snapshot (design.md).

``store_prompt_record`` is the only writer. It stores the §2 output document of the turn, a token
estimate per context item, the exclusion log (who was left out and why, never the excluded text)
and the Discord ids of everyone whose data the record holds, so forget-me can find it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from chatcontext.models import PromptRecord
from chatcontext.serialize import turn_output
from chatcontext.types import ChatTurnContext, JSONDict
from personas import models as m


def estimate_tokens(text: str) -> int:
    """A provider-neutral estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def _is_snowflake(value: Any) -> bool:
    return isinstance(value, str) and value.isdigit()


def _prompt_user_ids(ctx: ChatTurnContext, output: JSONDict) -> Iterator[str]:
    for entry in ctx.simplified_messages:
        # A webhook persona's entry carries the persona id as author id, not a person's.
        is_persona_id = entry.author_persona_id is not None and entry.author_id == str(entry.author_persona_id)
        if _is_snowflake(entry.author_id) and not is_persona_id:
            yield entry.author_id
    for target in output["participant_target_index"].get("targets", []):
        if str(target.get("serialized_key", "")).startswith("discord_user:") and _is_snowflake(target.get("target_id")):
            yield target["target_id"]


def _snapshot_user_ids(snapshot: Mapping[str, Any]) -> Iterator[str]:
    """Everyone the stored snapshot holds data about: it keeps whole messages, memories and
    profiles, including those the prompt left out."""
    for user in snapshot.get("users") or []:
        yield user["disc_id"]
    for key in ("members", "personal_memories", "blacklist", "persona_user_blocks", "reminders"):
        for row in snapshot.get(key) or []:
            yield row["user_disc_id"]
    for message in snapshot.get("messages") or []:
        if not message.get("webhook_id"):  # a webhook's author id is the webhook, not a person
            yield message["author"]["id"]
        for forwarded in message.get("message_snapshots") or []:
            if forwarded.get("author"):
                yield forwarded["author"]["id"]
        for reaction in message.get("reactions") or []:
            yield from reaction.get("users") or []
    turn = snapshot.get("turn") or {}
    if turn.get("impersonated_user_disc_id"):
        yield turn["impersonated_user_disc_id"]
    if turn.get("reminder"):
        yield turn["reminder"]["user_disc_id"]


def subject_user_ids(ctx: ChatTurnContext, output: JSONDict, snapshot: Mapping[str, Any]) -> list[str]:
    """Distinct Discord user ids (first-seen order) whose messages or profile are in the prompt,
    plus everyone the stored snapshot holds data about. The bot's own account is not a subject."""
    bot_id = ctx.turn.bot_user.id
    seen: dict[str, None] = {}
    ids: Iterable[str] = (*_prompt_user_ids(ctx, output), *_snapshot_user_ids(snapshot))
    for user_id in ids:
        if _is_snowflake(user_id) and user_id != bot_id:
            seen.setdefault(user_id, None)
    return list(seen)


def store_prompt_record(
    ctx: ChatTurnContext,
    *,
    snapshot: JSONDict,
    source: str,
    provider: str = "",
    model_name: str = "",
    reply_text: str = "",
    error: str = "",
    latency_ms: int | None = None,
    usage: JSONDict | None = None,
) -> PromptRecord:
    """Write one prompt record in one transaction on the live database.

    The server and persona are found by Discord id and nickname rather than by the context's
    internal ids, so a turn assembled on the replay database records against the live rows.
    Raises ``Server.DoesNotExist`` when the server is not registered here.
    """
    output = turn_output(ctx)
    items = []
    total = 0
    for item in output["context_items"]:
        tokens = estimate_tokens(item["text"])
        total += tokens
        items.append({**item, "token_estimate": tokens})
    turn = ctx.turn
    with transaction.atomic():
        server = m.Server.objects.get(server_disc_id=turn.server.server_disc_id)
        nickname = ctx.current_persona.persona_nickname
        persona = m.Persona.objects.filter(server=server, persona_nickname__iexact=nickname.strip()).first()
        return PromptRecord.objects.create(
            server=server,
            channel_disc_id=turn.locked_turn.channel_id,
            channel_name=turn.channel_name,
            persona=persona,
            persona_nickname=nickname,
            trigger_message_disc_id=turn.incoming.message.id,
            source=source,
            created_at=timezone.now(),
            provider=provider,
            model_name=model_name,
            context_items=items,
            simplified_messages=output["simplified_messages"],
            message_id_map=output["message_id_map"],
            streaming_context=output["streaming_context"],
            participant_target_index=output["participant_target_index"],
            diagnostics=output["diagnostics"],
            exclusions=list(ctx.exclusions),
            snapshot=snapshot,
            token_estimate=total,
            reply_text=reply_text,
            error=error,
            latency_ms=latency_ms,
            usage=usage or {},
            subject_user_ids=subject_user_ids(ctx, output, snapshot),
        )
