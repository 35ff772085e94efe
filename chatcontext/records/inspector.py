"""The prompt-record inspector behind the admin pages (issue 5): view models and "replay now".

The view-model functions are pure: they turn a record's stored JSON into rows a template renders
(prompt blocks with role, tag and token estimate; the simplified history with its `ref_N` ids;
the exclusion log; a unified diff between two prompts). They never add text a record does not
already hold — in particular the exclusion log names who and what was left out and why, never the
excluded text.

``replay_now`` (over ``assemble_live``) is the one imperative part: it assembles the record's snapshot again with the
same ``build_turn_context`` the bot runs, from the snapshot's messages and turn but with TODAY's
database rows of the server (memories, privacy levels, blacklist, blocks, personas), and diffs
the result against the record.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.http import JsonResponse

from chatcontext.core.compaction import summary_prompt
from chatcontext.core.config import StageConfig
from chatcontext.core.serialize import turn_output
from chatcontext.core.types import ChatTurnContext, JSONDict
from chatcontext.core.usage import scale_to
from chatcontext.pipeline import build_turn_context
from chatcontext.records.models import PromptRecord
from chatcontext.records.store import estimate_tokens
from chatcontext.snapshot import (
    LoadedSnapshot,
    snapshot_turn,
    validate_snapshot,
)
from chatcontext.stage_settings import stage_config
from personas import models as m

SUMMARY_CHARS = 100
PREVIEW_CHARS = 200  # the list's stylesheet cuts a row's preview to its column
DIFF_CONTEXT_LINES = 2

# Why an entry is in the exclusion log (history.py for messages, pipeline.participant_exclusions
# for profiles). Unknown reasons are shown as they are.
EXCLUSION_REASONS = {
    "privacy_full": "privacy level FULL: nothing of theirs reaches the prompt",
    "privacy_partial": "privacy level PARTIAL: messages kept, no personal details",
    "blacklisted": "on the server's personalization blacklist: no memories or profile details",
    "personalization_disabled": "personal memories are switched off on this server",
    "blocked": "the author is blocked by this persona",
    "reset_marker": "before the last conversation reset",
    "dropped_empty": "nothing left to show after simplification",
    "fetch_limit": "beyond the server's message fetch limit",
    "history_step": "before the history window's start, which moves several messages at a time (BC2-07a)",
    "context_budget": "cut to fit the model's context window: oldest history first, then lower-priority blocks (BC13)",
    "context_budget_truncated": "shortened from its end to fit the model's context window (BC13)",
}


# --- view models -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptBlock:
    position: int
    role: str
    tag: str
    tokens: int
    text: str
    summary: str
    message_id: str | None
    message_refs: tuple[str, ...]  # ref_N / media_N ids of the block's message
    fired: tuple[str, ...] = ()  # a lorebook block's entries and the key each fired on


def fired_entries(item: Mapping[str, Any]) -> tuple[str, ...]:
    """`Mara (book 3, entry 2) on "mara"` for each lorebook entry of a world-info item."""
    hits = item.get("world_info")
    lines = []
    for hit in hits if isinstance(hits, list) else []:
        name = str(hit.get("comment") or "entry")
        reason = "constant" if hit.get("key") is None else f'on "{hit.get("key")}"'
        lines.append(f"{name} (book {hit.get('book')}, entry {hit.get('entry')}) {reason}")
    return tuple(lines)


@dataclass(frozen=True)
class HistoryEntry:
    refs: tuple[str, ...]
    message_ids: tuple[str, ...]
    author_name: str
    author_type: str
    content: str
    sent_at: datetime | None


@dataclass(frozen=True)
class ExclusionEntry:
    reason: str
    explanation: str
    scope: str  # "message" or "profile"
    user_id: str
    message_id: str
    user_name: str = ""
    user_url: str | None = None
    message_url: str | None = None


@dataclass(frozen=True)
class RecordLinks:
    """How one reader may name and link the people and messages a record mentions by id.

    ``names`` holds only names the reader may see (a Discord username, or what the record itself
    rendered): never a saved nickname, so a privacy-FULL user's chosen name stays out of the page.
    """

    names: Mapping[str, str]
    user_urls: Mapping[str, str]
    message_urls: Mapping[str, str]


NO_LINKS = RecordLinks(names={}, user_urls={}, message_urls={})


def rendered_user_names(simplified_messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Discord user id → the name the record's history gave them (people's own entries, not `$:`
    lines shown as the persona's), first one wins."""
    names: dict[str, str] = {}
    for entry in simplified_messages:
        author, name = str(entry.get("author_id") or ""), str(entry.get("author_name") or "")
        if entry.get("author_type") == "user" and author and name:
            names.setdefault(author, name)
    return names


def _trigger_entry(record: PromptRecord) -> Mapping[str, Any] | None:
    """The history entry holding the trigger message, if the record's history kept it."""
    wanted = record.trigger_message_disc_id
    if not wanted:
        return None
    for entry in record.simplified_messages:
        if wanted in {str(i) for i in (entry.get("combined_message_ids") or [entry.get("id")])}:
            return entry
    return None


def trigger_preview(record: PromptRecord) -> str:
    """The trigger's text as the inspector's history shows it, on one line. Only the simplified history
    is read, never the snapshot: what the history left out (a privacy-FULL author) stays out here too."""
    entry = _trigger_entry(record)
    return preview(str(entry.get("content") or "")) if entry is not None else ""


def trigger_author_id(record: PromptRecord) -> str:
    """Who wrote the trigger message, from the record's history or snapshot; "" when neither says."""
    wanted = record.trigger_message_disc_id
    if not wanted:
        return ""
    if (entry := _trigger_entry(record)) is not None:
        return str(entry.get("author_id") or "")
    for message in (record.snapshot or {}).get("messages") or []:
        if str(message.get("id")) == wanted:
            return str((message.get("author") or {}).get("id") or "")
    return ""


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "file", "hunk", "add", "del" or "same"
    text: str


def _summary(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"


def preview(text: str) -> str:
    """A text on one line for a list row: every line joined, cut to ``PREVIEW_CHARS``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def refs_by_message(message_id_map: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Discord message id → the `ref_N` / `media_N` ids that name it (BC5), in map order."""
    refs: dict[str, list[str]] = {}
    for ref, message_id in message_id_map.items():
        refs.setdefault(str(message_id), []).append(ref)
    return {message_id: tuple(ids) for message_id, ids in refs.items()}


def prompt_blocks(
    items: Sequence[Mapping[str, Any]], message_id_map: Mapping[str, str], *, measured_tokens: int | None = None
) -> list[PromptBlock]:
    """The prompt in order, one block per context item. Records store a token estimate per item;
    an item without one is estimated the same way (``records.estimate_tokens``). With
    ``measured_tokens`` (the provider's prompt count) the estimates are scaled to add up to it."""
    refs = refs_by_message(message_id_map)
    texts = [str(item.get("text") or "") for item in items]
    estimates = [
        tokens if isinstance(tokens := item.get("token_estimate"), int) else estimate_tokens(text)
        for item, text in zip(items, texts, strict=True)
    ]
    counts = estimates if measured_tokens is None else scale_to(estimates, measured_tokens)
    blocks = []
    for position, (item, text, tokens) in enumerate(zip(items, texts, counts, strict=True), start=1):
        message_id = item.get("message_id")
        blocks.append(
            PromptBlock(
                position=position,
                role=str(item.get("role") or ""),
                tag=str(item.get("tag") or "untagged"),
                tokens=tokens,
                text=text,
                summary=_summary(text),
                message_id=str(message_id) if message_id else None,
                message_refs=refs.get(str(message_id), ()) if message_id else (),
                fired=fired_entries(item),
            )
        )
    return blocks


def record_blocks(record: PromptRecord) -> list[PromptBlock]:
    """A record's blocks, scaled to the provider's prompt count when it reported one."""
    measured = record.input_tokens if record.tokens_measured else None
    return prompt_blocks(record.context_items, record.message_id_map, measured_tokens=measured)


def history_entries(
    simplified_messages: Sequence[Mapping[str, Any]], message_id_map: Mapping[str, str]
) -> list[HistoryEntry]:
    """The simplified history (build-context.md §1.5), each entry with the ids the prompt uses for
    its messages; a merged entry lists every message it combines (BC6)."""
    refs = refs_by_message(message_id_map)
    entries = []
    for entry in simplified_messages:
        ids = tuple(str(i) for i in (entry.get("combined_message_ids") or [entry.get("id")]) if i)
        created = entry.get("created_at")
        entries.append(
            HistoryEntry(
                refs=tuple(ref for message_id in ids for ref in refs.get(message_id, ())),
                message_ids=ids,
                author_name=str(entry.get("author_name") or ""),
                author_type=str(entry.get("author_type") or ""),
                content=str(entry.get("content") or ""),
                sent_at=datetime.fromtimestamp(created / 1000, tz=UTC) if isinstance(created, int) else None,
            )
        )
    return entries


def exclusion_user_ids(exclusions: Iterable[Mapping[str, Any]]) -> set[str]:
    return {uid for entry in exclusions if (uid := str(entry.get("user_id") or entry.get("author_id") or ""))}


def _scope(entry: Mapping[str, Any], message_id: str) -> str:
    """What was left out: a message, a profile, or a prompt block named by its tag (BC13-03)."""
    scope = str(entry.get("scope") or ("message" if message_id else "profile"))
    return f"block {entry['block']}" if scope == "block" and isinstance(entry.get("block"), str) else scope


def exclusion_entries(exclusions: Iterable[Mapping[str, Any]], links: RecordLinks = NO_LINKS) -> list[ExclusionEntry]:
    """The exclusion log as rows, named and linked as ``links`` allows. Only ids, reasons and scopes
    are read from the log, so even a malformed entry that carried text would not reach the page."""
    rows = []
    for entry in exclusions:
        reason = str(entry.get("reason") or "unknown")
        message_id = str(entry.get("message_id") or "")
        user_id = str(entry.get("user_id") or entry.get("author_id") or "")
        rows.append(
            ExclusionEntry(
                reason=reason,
                explanation=EXCLUSION_REASONS.get(reason, reason.replace("_", " ")),
                scope=_scope(entry, message_id),
                user_id=user_id,
                message_id=message_id,
                user_name=links.names.get(user_id, ""),
                user_url=links.user_urls.get(user_id),
                message_url=links.message_urls.get(message_id),
            )
        )
    return rows


def prompt_lines(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """A prompt as diffable lines: a header per item (role, tag, message) followed by its text.
    Headers carry no position, so inserting one item does not mark every later one as changed."""
    lines = []
    for item in items:
        header = f"── {item.get('role')} · {item.get('tag') or 'untagged'}"
        if item.get("message_id"):
            header += f" · message {item['message_id']}"
        lines.append(header + " ──")
        lines.extend(str(item.get("text") or "").splitlines() or [""])
    return lines


def prompt_diff(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], *, before_label: str, after_label: str
) -> list[DiffLine]:
    """Unified diff (difflib) between two prompts' items; empty when they are the same."""
    diff = difflib.unified_diff(
        prompt_lines(before),
        prompt_lines(after),
        fromfile=before_label,
        tofile=after_label,
        n=DIFF_CONTEXT_LINES,
        lineterm="",
    )
    out = []
    for line in diff:
        if line.startswith(("---", "+++")):
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        out.append(DiffLine(kind=kind, text=line))
    return out


def snapshot_download(record: PromptRecord) -> JsonResponse:
    """A record's turn snapshot as a `replay_turn` input file (the API export and the admin button)."""
    response = JsonResponse(record.snapshot, json_dumps_params={"ensure_ascii": False, "indent": 1})
    response["Content-Disposition"] = f'attachment; filename="turn-{record.pk}.snapshot.json"'
    return response


def record_label(record: PromptRecord) -> str:
    return f"record {record.pk} ({record.created_at:%Y-%m-%d %H:%M:%S})"


def previous_record(record: PromptRecord) -> PromptRecord | None:
    """The record just before this one in the same channel for the same persona (one indexed query)."""
    same_persona = (
        {"persona_id": record.persona_id}
        if record.persona_id is not None
        else {"persona__isnull": True, "persona_nickname": record.persona_nickname}
    )
    earlier = PromptRecord.objects.filter(
        server_id=record.server_id, channel_disc_id=record.channel_disc_id, **same_persona
    ).filter(created_at__lte=record.created_at)
    return (
        earlier.exclude(created_at=record.created_at, id__gte=record.pk)
        .only("id", "created_at", "context_items")
        .order_by("-created_at", "-id")
        .first()
    )


# --- replay now ----------------------------------------------------------------------------------


class ReplayUnavailable(Exception):
    """The record cannot be replayed; the message says why, for a moderator, without prompt text."""


@dataclass(frozen=True)
class ReplayOutcome:
    context_items: list[JSONDict]
    token_estimate: int
    diff: list[DiffLine]
    exclusions: list[JSONDict] = field(default_factory=list)  # today's exclusion log of the replayed turn

    @property
    def changed(self) -> bool:
        return bool(self.diff)


def _constant_clock() -> float:
    return 0.0


def _live_snapshot_view(doc: JSONDict, server: m.Server) -> tuple[JSONDict, LoadedSnapshot]:
    """The snapshot restricted to personas that still exist on the server, and the live ids of the
    server and those personas (matched by nickname, as records are; data-model.md §2.7)."""
    live = {p.persona_nickname.strip().lower(): p.persona_id for p in m.Persona.objects.filter(server=server)}
    persona_ids = {
        p["key"]: live[p["persona_nickname"].strip().lower()]
        for p in doc.get("personas") or []
        if p["persona_nickname"].strip().lower() in live
    }
    turn = doc["turn"]
    if turn["persona_key"] not in persona_ids:
        raise ReplayUnavailable("The persona of this turn no longer exists on the server.")
    view = {
        **doc,
        "personas": [p for p in doc.get("personas") or [] if p["key"] in persona_ids],
        "turn": {**turn, "co_responder_keys": [k for k in turn.get("co_responder_keys") or [] if k in persona_ids]},
    }
    return view, LoadedSnapshot(server_id=server.server_id, persona_ids=persona_ids, user_ids={})


def assemble_live(doc: JSONDict, server: m.Server, *, config: StageConfig | None = None) -> ChatTurnContext:
    """Assemble a validated snapshot's turn against today's rows of ``server``.

    Messages, members, voice transcripts and the turn come from the snapshot (the transport,
    design.md: "only the transport differs"); settings, personas, users' privacy levels,
    memories, reminders, blacklist and blocks are read live by the ordinary loaders. ``now_ms``
    stays the snapshot's, so times in the prompt and block expiry are those of the original turn.
    The run is wrapped in a transaction that is always rolled back: hydration may register unknown
    users (H-11), and a replay must leave the live database as it found it.
    """
    if str(doc["server"]["disc_id"]) != server.server_disc_id:
        raise ReplayUnavailable("The snapshot belongs to another server than the record.")
    with transaction.atomic():
        try:
            view, loaded = _live_snapshot_view(doc, server)
            inputs = snapshot_turn(view, loaded)
            return build_turn_context(
                inputs.turn,
                inputs.transport,
                transcripts=inputs.transcripts,
                transcriber=None,  # no network or model in a moderator's request: unknown audio stays untranscribed
                config=config or stage_config(),
                clock=_constant_clock,
            )
        finally:
            transaction.set_rollback(True)


def replay_now(record: PromptRecord, *, config: StageConfig | None = None) -> ReplayOutcome:
    """The inspector's "replay now": the record's snapshot assembled again with ``assemble_live``
    and diffed against the record's prompt. Nothing is recorded.

    Raises ``ReplayUnavailable`` (no snapshot, persona gone) or ``SnapshotError`` (invalid snapshot).
    """
    if not record.snapshot:
        raise ReplayUnavailable("This record has no stored snapshot to replay.")
    ctx = assemble_live(validate_snapshot(record.snapshot), record.server, config=config)
    if record.command.get("name") == "compact":
        # The record holds the summary call's prompt, made from the turn context its snapshot replays.
        ctx = replace(ctx, context_items=summary_prompt(ctx, record.command["kind"]))
    items = [{**item, "token_estimate": estimate_tokens(item["text"])} for item in turn_output(ctx)["context_items"]]
    diff = prompt_diff(
        record.context_items, items, before_label=record_label(record), after_label="replayed now with today's data"
    )
    return ReplayOutcome(
        context_items=items,
        token_estimate=sum(i["token_estimate"] for i in items),
        diff=diff,
        exclusions=list(ctx.exclusions),
    )


def command_rows(command: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A record's ``command`` (the steering command that made the call) as name/value rows, by name."""
    return sorted(command.items())
