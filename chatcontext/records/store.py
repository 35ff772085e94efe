"""Prompt records: one assembled turn exactly as the model saw it, with its snapshot (design.md).

``store_prompt_record`` is the only writer. It stores the §2 output document of the turn, a token
estimate per context item, the turn's input/output tokens and cost (``chatcontext.records.usage``), the
exclusion log (who was left out and why, never the excluded text) and the Discord ids of everyone
the record is about (``subject_user_ids``: whose words, profile or memories it holds), so
forget-me deletes those records and no others.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from chatcontext.records.models import PromptRecord
from chatcontext.records.usage import NOTHING, got_no_answer, turn_cost, turn_tokens
from chatcontext.serialize import turn_output
from chatcontext.types import ChatTurnContext, JSONDict
from personas import models as m


def estimate_tokens(text: str) -> int:
    """A provider-neutral estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)


def _is_snowflake(value: Any) -> bool:
    return isinstance(value, str) and value.isdigit()


def _rows(doc: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """The dict rows of one list of a stored document; records written by older code may hold
    other shapes, which name nobody."""
    rows = doc.get(key) if isinstance(doc, Mapping) else None
    return [row for row in rows if isinstance(row, Mapping)] if isinstance(rows, list) else []


# What a stored message (or forwarded message) holds that its author wrote or posted; a message
# stripped of all of it (an excluded author's, kept for its place in the history) holds only an id.
_MESSAGE_WORDS = ("content", "clean_content", "attachments", "stickers", "embeds", "components", "message_snapshots")
# What a member row holds that its user chose to show of themselves in the server, beyond their
# account's id, username and global name, roles and online status.
_MEMBER_PROFILE = ("nickname", "activities")


def _holds(row: Mapping[str, Any], keys: Iterable[str]) -> bool:
    return any(row.get(key) not in (None, "", [], {}) for key in keys)


def _prompt_subjects(output: Mapping[str, Any]) -> Iterator[Any]:
    """Authors of the prompt's history entries, and everyone its participant index names."""
    for entry in _rows(output, "simplified_messages"):
        # A webhook persona's entry carries the persona id as author id, not a person's.
        persona_id = entry.get("author_persona_id")
        if persona_id is None or str(entry.get("author_id")) != str(persona_id):
            yield entry.get("author_id")
    targets = output.get("participant_target_index")
    for target in _rows(targets if isinstance(targets, Mapping) else {}, "targets"):
        if str(target.get("serialized_key", "")).startswith("discord_user:"):
            yield target.get("target_id")


def _snapshot_subjects(snapshot: Mapping[str, Any]) -> Iterator[Any]:
    """Users whose words, profile or memories the stored snapshot holds (the README's forget-me
    section): authors of messages or forwards with content, users of personal memories and
    reminders, user rows holding profile fields, member rows holding a server nickname or
    activities, an impersonated user. An id alone — a user row with only names and privacy level, a
    member row with only names and roles, a reactor, a blacklist or block entry — is no subject."""
    for message in _rows(snapshot, "messages"):
        author = message.get("author")
        # A webhook's author id is the webhook, not a person.
        if not message.get("webhook_id") and isinstance(author, Mapping) and _holds(message, _MESSAGE_WORDS):
            yield author.get("id")
        for forwarded in _rows(message, "message_snapshots"):
            original = forwarded.get("author")
            if isinstance(original, Mapping) and _holds(forwarded, _MESSAGE_WORDS):
                yield original.get("id")
    for user in _rows(snapshot, "users"):
        if _holds(user, m.PROFILE_FIELDS):
            yield user.get("disc_id")
    for member in _rows(snapshot, "members"):
        if _holds(member, _MEMBER_PROFILE):
            yield member.get("user_disc_id")
    for key in ("personal_memories", "reminders"):
        for row in _rows(snapshot, key):
            yield row.get("user_disc_id")
    turn = snapshot.get("turn")
    if isinstance(turn, Mapping):
        yield turn.get("impersonated_user_disc_id")
        if isinstance(turn.get("reminder"), Mapping):
            yield turn["reminder"].get("user_disc_id")


def subject_user_ids(output: Mapping[str, Any], snapshot: Mapping[str, Any], *, bot_id: str | None) -> list[str]:
    """Distinct Discord user ids (first-seen order) the record is about: whose messages or profile
    are in the prompt (``output``: its ``simplified_messages`` and ``participant_target_index``),
    or whose words, profile or memories its stored snapshot holds. The bot's own account is not a
    subject. Computed from stored JSON only, so a record stored by older code gets the same answer
    (migration 0002 recomputes them)."""
    seen: dict[str, None] = {}
    for user_id in (*_prompt_subjects(output), *_snapshot_subjects(snapshot)):
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
    images: JSONDict | None = None,
    tool_calls: JSONDict | None = None,
    tool_subjects: Iterable[str] = (),
    command: JSONDict | None = None,
) -> PromptRecord:
    """Write one prompt record in one transaction on the live database.

    The server and persona are found by Discord id and nickname rather than by the context's
    internal ids, so a turn assembled on the replay database records against the live rows.
    Raises ``Server.DoesNotExist`` when the server is not registered here. ``tool_calls`` are the
    persona's tool calls; the people they were about (``tool_subjects``) are subjects of the record.
    ``command``: the steering command that caused the call, and what it did.
    """
    output = turn_output(ctx)
    items = []
    total = 0
    for item in output["context_items"]:
        tokens = estimate_tokens(item["text"])
        total += tokens
        items.append({**item, "token_estimate": tokens})
    turn = ctx.turn
    if got_no_answer(error=error, reply_text=reply_text):
        counted = NOTHING
    else:
        counted = turn_tokens(usage or {}, prompt_estimate=total, reply_estimate=estimate_tokens(reply_text))
    with transaction.atomic():
        server = m.Server.objects.select_related("settings").get(server_disc_id=turn.server.server_disc_id)
        prices = server.settings
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
            input_tokens=counted.input,
            output_tokens=counted.output,
            tokens_measured=counted.measured,
            cost=turn_cost(counted, input_price=prices.llm_input_price, output_price=prices.llm_output_price),
            images=images or {},
            tool_calls=tool_calls or {},
            command=command or {},
            subject_user_ids=list(
                dict.fromkeys([*subject_user_ids(output, snapshot, bot_id=turn.bot_user.id), *tool_subjects])
            ),
        )
