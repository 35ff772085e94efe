"""Prompt records: one assembled turn exactly as the model saw it, with its snapshot (design.md).

``record_turn`` is the only writer: one transaction stores the record with its snapshot and points
the rows the turn's tool calls wrote at it (their provenance and audit trail). A record holds the §2
output document of the turn, a token estimate per context item, the turn's input/output tokens and
cost (``chatcontext.core.usage``), the exclusion log (who was left out and why, never the
excluded text) and the Discord ids of everyone the record is about (``subject_user_ids``: whose
words, profile or memories it holds), so forget-me deletes those records and no others.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from chatcontext.core.serialize import turn_output
from chatcontext.core.tokens import estimate_tokens
from chatcontext.core.types import ChatTurnContext, JSONDict
from chatcontext.core.usage import NOTHING, got_no_answer, turn_cost, turn_tokens
from chatcontext.records.models import PromptRecord
from personas import models as m
from personas.actions.actor import Actor, name_prompt_record
from personas.provenance import WrittenRow, attach_prompt_record


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
    section): authors of messages or forwards with content, users of personal memories,
    reminders and naming preferences, user rows holding profile fields, member rows holding a
    server nickname or activities, an impersonated user. An id alone — a user row with only names and privacy level, a
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
    for key in ("personal_memories", "reminders", "naming_preferences"):
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


def _asker(command: JSONDict | None) -> list[str]:
    """Who asked for the command, when a person did (an automatic compaction has no asker)."""
    return [str(command["by"])] if command and _is_snowflake(command.get("by")) else []


@dataclass(frozen=True)
class Generation:
    """What the model gave back for the turn: its reply of record, or the error that stood for it."""

    provider: str = ""
    model_name: str = ""
    reply_text: str = ""
    error: str = ""
    latency_ms: int | None = None
    usage: JSONDict | None = None
    # How the reply was asked for (bot.conversation.providers): the sampling sent, and each endpoint
    # tried in order, with the one that answered and why the others did not.
    requested: JSONDict | None = None


@dataclass(frozen=True)
class ToolWrites:
    """The persona's tool calls of the turn (``calls``), the people they were about (``subjects``,
    subjects of the record), the rows they wrote (pointed at the record) and the actor whose audit
    trail names the record."""

    calls: JSONDict
    subjects: tuple[str, ...] = ()
    written: tuple[WrittenRow, ...] = ()
    actor: Actor | None = None


@dataclass(frozen=True)
class TurnRecord:
    """One turn to record: its context, the snapshot captured with it, and what came of it."""

    ctx: ChatTurnContext
    snapshot: JSONDict
    source: str
    generation: Generation = Generation()
    images: JSONDict | None = None
    tools: ToolWrites | None = None
    # What a command made of the turn (chatcontext.records.commands.TurnCommand); who asked is a subject.
    command: JSONDict | None = None


def record_turn(record: TurnRecord) -> PromptRecord:
    """Record one turn in one transaction on the live database: its prompt record with its snapshot,
    the provenance of the rows its tool calls wrote and the record's name in their audit trail.

    The server and persona are found by Discord id and nickname rather than by the context's
    internal ids, so a turn assembled on the replay database records against the live rows.
    Raises ``Server.DoesNotExist`` when the server is not registered here.
    """
    ctx, generation, tools = record.ctx, record.generation, record.tools
    output = turn_output(ctx)
    items = []
    total = 0
    for item in output["context_items"]:
        tokens = estimate_tokens(item["text"])
        total += tokens
        items.append({**item, "token_estimate": tokens})
    turn = ctx.turn
    if got_no_answer(error=generation.error, reply_text=generation.reply_text):
        counted = NOTHING
    else:
        counted = turn_tokens(
            generation.usage or {}, prompt_estimate=total, reply_estimate=estimate_tokens(generation.reply_text)
        )
    subjects = subject_user_ids(output, record.snapshot, bot_id=turn.bot_user.id)
    note = turn.short_term_memory
    if note is not None and note.content:
        # The note's words came from these people's messages: forget-me must find this record too.
        subjects = [*subjects, *note.author_ids]
    with transaction.atomic():
        server = m.Server.objects.select_related("settings").get(server_disc_id=turn.server.server_disc_id)
        prices = server.settings
        nickname = ctx.current_persona.persona_nickname
        persona = m.Persona.objects.filter(server=server, persona_nickname__iexact=nickname.strip()).first()
        stored = PromptRecord.objects.create(
            server=server,
            channel_disc_id=turn.locked_turn.channel_id,
            channel_name=turn.channel_name,
            persona=persona,
            persona_nickname=nickname,
            trigger_message_disc_id=turn.incoming.message.id,
            source=record.source,
            created_at=timezone.now(),
            provider=generation.provider,
            model_name=generation.model_name,
            context_items=items,
            simplified_messages=output["simplified_messages"],
            message_id_map=output["message_id_map"],
            streaming_context=output["streaming_context"],
            participant_target_index=output["participant_target_index"],
            diagnostics=output["diagnostics"],
            exclusions=list(ctx.exclusions),
            snapshot=record.snapshot,
            token_estimate=total,
            reply_text=generation.reply_text,
            error=generation.error,
            latency_ms=generation.latency_ms,
            usage=generation.usage or {},
            input_tokens=counted.input,
            output_tokens=counted.output,
            tokens_measured=counted.measured,
            cost=turn_cost(counted, input_price=prices.llm_input_price, output_price=prices.llm_output_price),
            images=record.images or {},
            tool_calls=tools.calls if tools else {},
            generation=record.generation.requested or {},
            command=record.command or {},
            subject_user_ids=list(
                dict.fromkeys([*subjects, *(tools.subjects if tools else ()), *_asker(record.command)])
            ),
        )
        if tools is not None:
            attach_prompt_record(tools.written, stored.pk)
            if tools.actor is not None:
                name_prompt_record(tools.actor, stored.pk)
    return stored
