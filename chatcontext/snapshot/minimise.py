"""What a stored turn snapshot keeps (turn-snapshot.md §1; issue 13): the turn's input minus what the
turn could never show.

A snapshot is stored with every prompt record and exported by the admin and the API, so it must not
keep what the person it is about withheld from the personas: a privacy-FULL user's words, memories
the active persona cannot load (another lineage, a blacklisted, FULL or PARTIAL owner, personalization
off, another user's on an impersonation turn), reminders it cannot show, a FULL or PARTIAL member's
presence and roles. ``minimise_snapshot`` removes exactly that and keeps everything the pipeline
reads, so the stored document replays to the same output, byte for byte, as the document it was made
from (tests/chatcontext/pipeline/test_stored_snapshot.py checks it over generated channels, tests/chatcontext/snapshot/
test_golden.py on every golden case):

- a member who is not MINIMAL loses presence, activities and roles (H-12, H-13);
- a message by a FULL author (BC2-10, BC11-03), or by an author the active persona blocks (BC2-11),
  keeps its id, author id, time and what points elsewhere (its reference and forwarded snapshots,
  which a forward chain of someone else's may still show): its fetch-window slot and the block
  notice need no more. A blocked author keeps the names the notice is labelled with;
- a forwarded snapshot whose author the persona hides (its own, or the forwarded message's when
  Discord sends none) keeps only that author and a placeholder text (an empty snapshot would read as
  a forward of a forward, BC3-12);
- a FULL user's row keeps the id, privacy level, live names, time zone (the profile shows it, H-11)
  and saved nickname (never shown, but discovery still matches it as a lookup-only alias, D-19);
  a PARTIAL user's loses pronouns, gender and appearance, and a blacklisted user's (or everyone's,
  with personalization off) pronouns and gender, which the profile hides (P-03..P-06);
- personal memories of the active lineage and lineage 0 whose owner the persona may personalize,
  each with the id the prompt shows (`ID:N`). A MINIMAL owner none of whose memories stay keeps one
  empty marker row, because discovery's eligibility counts memories of any lineage (D-16, D-17);
- server memories of the active lineage and lineage 0; the active persona's live blocks;
- reminders the persona could show (H-15, H-21), and for a MINIMAL target without any of those one
  empty marker of a due reminder (D-16 pending-task evidence);
- voice transcripts of attachments that stay;
- naming preferences of users whose saved names the turn may show (P-02);
- the preset, lorebook entries and card fields of the responding persona only.

Pure: a document in, a new document out; the input is not changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chatcontext.core.participants.mentions import mention_ids
from chatcontext.core.types import JSONDict, PrivacyLevel
from personas import models as m

# Shown instead of a hidden author's forwarded text; never rendered (the snapshot is hidden).
WITHHELD = "[withheld: the turn hides this author]"
FULL_USER_KEYS = ("disc_id", "username", "global_name", "privacy_level", "user_nickname", "timezone_offset")
IDENTITY_KEYS = ("gender_identity", "pronouns")
APPEARANCE_KEYS = ("physical_appearance_tags",)
STUB_KEYS = ("id", "channel_id", "guild_id", "type", "webhook_id", "created_timestamp", "reference")
BLOCKED_AUTHOR_KEYS = ("id", "username", "global_name", "display_name", "bot")
HIDDEN_MEMBER_KEYS = ("presence_status", "activities", "roles")
PERSONA_TURN_KEYS = ("preset", "lorebook", "card")
MEMORY_MARKER_KEYS = ("id", "user_disc_id", "persona_lineage_id")
FORWARDED_PARTS = ("content", "attachments", "embeds", "stickers", "components")  # snapshot_is_empty
_PERSONALIZATION_DEFAULT = m.ServerSettings._meta.get_field("personal_memories_enabled").get_default()


def _items(doc: Mapping[str, Any], key: str) -> list[JSONDict]:
    return list(doc.get(key) or [])


def _active_blocks(doc: Mapping[str, Any]) -> list[JSONDict]:
    """The responding persona's live blocks and mutes, which its block notice lists, and only in a
    guild (BC2-07); of them only the blocks hide messages (``_hiding``)."""
    if doc["server"].get("is_dm"):
        return []
    key, now_ms = doc["turn"]["persona_key"], doc["now_ms"]
    return [
        b
        for b in _items(doc, "persona_user_blocks")
        if b.get("persona_key") in (None, key) and b["expires_at_ms"] > now_ms
    ]


def _hiding(block: Mapping[str, Any]) -> bool:
    """BC2-11: a block hides its user's messages; a mute only stops triggering (absent: a block)."""
    return (block.get("block_type") or "block") == "block"


@dataclass(frozen=True)
class TurnView:
    """Who the snapshot's turn can see, read from the document the way the pipeline reads the rows."""

    persona_key: str
    lineages: frozenset[int]
    is_main_persona: bool
    personalization: bool
    privacy: Mapping[str, int]
    blacklisted: frozenset[str]
    blocked: frozenset[str]
    bot_id: str
    now_ms: int
    impersonated_id: str | None
    # Whose whole row the turn reads: its triggerer's (naming, modes) and an impersonated user's (BC7-03).
    own_row_ids: frozenset[str]
    message_authors: Mapping[str, str]

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> TurnView:
        turn = doc["turn"]
        persona = next(p for p in _items(doc, "personas") if p["key"] == turn["persona_key"])
        personalization = (doc["server"].get("settings") or {}).get("personal_memories_enabled")
        trigger = next(msg for msg in _items(doc, "messages") if msg["id"] == turn["trigger_message_id"])
        impersonated = turn.get("impersonated_user_disc_id")
        return cls(
            persona_key=turn["persona_key"],
            lineages=frozenset({persona["persona_lineage_id"], m.GLOBAL_LINEAGE_ID}),
            is_main_persona=not persona["is_alter"],
            personalization=_PERSONALIZATION_DEFAULT if personalization is None else bool(personalization),
            privacy={u["disc_id"]: u.get("privacy_level") or PrivacyLevel.MINIMAL for u in _items(doc, "users")},
            blacklisted=frozenset(b["user_disc_id"] for b in _items(doc, "blacklist")),
            blocked=frozenset(b["user_disc_id"] for b in _active_blocks(doc) if _hiding(b)),
            bot_id=doc["bot_user"]["id"],
            now_ms=doc["now_ms"],
            impersonated_id=impersonated,
            own_row_ids=frozenset(i for i in (trigger["author"]["id"], impersonated) if i),
            message_authors={msg["id"]: msg["author"]["id"] for msg in _items(doc, "messages")},
        )

    def level(self, user_id: str) -> int:
        return self.privacy.get(user_id, PrivacyLevel.MINIMAL)  # P-01: no row reads as MINIMAL

    def minimal(self, user_id: str) -> bool:
        return self.level(user_id) == PrivacyLevel.MINIMAL

    def hides(self, author_id: str) -> bool:
        """``Visibility.is_hidden_author``: a FULL author, or one the responding persona blocks."""
        return self.level(author_id) == PrivacyLevel.FULL or author_id in self.blocked

    def saved_names(self, user_id: str) -> bool:
        """P-02 (``saved_name_allowed``): whether the turn may name the user by their saved names."""
        return self.personalization and user_id not in self.blacklisted and self.level(user_id) != PrivacyLevel.FULL

    def memory_loadable(self, owner_id: str, lineage: int) -> bool:
        """H-14 step 1 with hydration's P-04/P-05 precedence: what ``load_memories`` may
        return for this owner."""
        if self.impersonated_id is not None and owner_id != self.impersonated_id:
            return False
        return (
            self.personalization
            and owner_id not in self.blacklisted
            and self.minimal(owner_id)
            and lineage in self.lineages
        )

    def reminder_showable(self, reminder: Mapping[str, Any]) -> bool:
        """H-15 (a human's reminders of this persona, unassigned ones for the main persona) and H-21
        (the persona's own self-tasks, not on impersonation turns), due after the turn's clock."""
        if reminder["due_at_ms"] <= self.now_ms:
            return False
        key = reminder.get("persona_key")
        if reminder["user_disc_id"] == self.bot_id:
            self_task = reminder.get("self_reminder") is not False  # unset: a reminder aimed at the bot
            return self_task and key == self.persona_key and self.impersonated_id is None
        return key == self.persona_key or (key is None and self.is_main_persona)


def _origin_author(message: JSONDict, view: TurnView) -> str | None:
    """The author of the message a forward points at, when the snapshot holds that message: the
    pipeline checks an author-less forwarded snapshot (Discord sends none) against it."""
    ref = message.get("reference") or {}
    return view.message_authors.get(ref.get("message_id") or "") if ref.get("type") == "forward" else None


def _forward_snapshot(snapshot: JSONDict, message: JSONDict, view: TurnView) -> JSONDict:
    """``_snapshot_hidden``: a forwarded snapshot by a hidden author is never shown, in this forward's
    entry or through a chain that ends here (BC3-12). Without an author of its own it is judged by the
    forward's origin. An empty snapshot holds no words and stays empty: it asks for the chain."""
    if not any(snapshot.get(k) for k in FORWARDED_PARTS):
        return snapshot
    author = snapshot.get("author")
    if author:
        return {"author": {"id": author["id"]}, "content": WITHHELD} if view.hides(author["id"]) else snapshot
    origin = _origin_author(message, view)
    return {"content": WITHHELD} if origin is not None and view.hides(origin) else snapshot


def _message(message: JSONDict, view: TurnView) -> JSONDict:
    forwarded = [_forward_snapshot(s, message, view) for s in message.get("message_snapshots") or []]
    author = message["author"]
    if not view.hides(author["id"]):
        return {**message, "message_snapshots": forwarded} if forwarded else message
    stub = {k: message[k] for k in STUB_KEYS if message.get(k) is not None}
    if view.level(author["id"]) == PrivacyLevel.FULL:
        stub["author"] = {"id": author["id"]}
    else:  # blocked: the notice is labelled with the author's names (BC2-11)
        stub["author"] = {k: author[k] for k in BLOCKED_AUTHOR_KEYS if author.get(k) is not None}
        if message.get("member_display_name") is not None:
            stub["member_display_name"] = message["member_display_name"]
    if forwarded:
        stub["message_snapshots"] = forwarded
    return stub


def _user(row: JSONDict, view: TurnView) -> JSONDict:
    """A row without the fields the profile hides for its owner (H-11; P-03..P-06)."""
    user_id = row["disc_id"]
    if user_id in view.own_row_ids:
        return row
    if view.level(user_id) == PrivacyLevel.FULL:
        return {k: row[k] for k in FULL_USER_KEYS if k in row}
    hidden = set() if view.minimal(user_id) else set(APPEARANCE_KEYS)
    if not (view.minimal(user_id) and user_id not in view.blacklisted and view.personalization):
        hidden.update(IDENTITY_KEYS)
    return {k: v for k, v in row.items() if k not in hidden}


def _persona(persona: JSONDict, view: TurnView) -> JSONDict:
    """Only the responding persona's preset, lorebook and card are read (the stage orders and fills its
    prompt only); another persona's stay out. Its entries stay whole, fired or not, as a loadable
    memory does whether or not its tags let it in: they are persona data, and which fire is decided
    by the history, which the replay scans again."""
    if persona["key"] == view.persona_key:
        return persona
    return {k: v for k, v in persona.items() if k not in PERSONA_TURN_KEYS}


def _member(member: JSONDict, view: TurnView, needed_roles: set[str]) -> JSONDict:
    """H-12/H-13: presence and roles are a MINIMAL member's only. A role a hidden member holds stays
    when a text mentions it and no MINIMAL member carries it: the transport names roles from the
    members (`<@&id>`, R-14)."""
    if view.minimal(member["user_disc_id"]) or member["user_disc_id"] == view.bot_id:
        return member
    kept = {k: v for k, v in member.items() if k not in HIDDEN_MEMBER_KEYS}
    kept["roles"] = [r for r in member.get("roles") or [] if r["id"] in needed_roles]
    return kept


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _memory_ids(memories: list[JSONDict]) -> list[JSONDict]:
    """Every memory with the id a replay gives it: one without is numbered after the highest given id,
    in document order (``load_snapshot_rows``), so leaving others out renumbers none."""
    highest = max((pm["id"] for pm in memories if pm.get("id") is not None), default=0)
    out = []
    for pm in memories:
        if pm.get("id") is None:
            highest += 1
            pm = {**pm, "id": highest}
        out.append(pm)
    return out


def _personal_memories(doc: Mapping[str, Any], view: TurnView) -> list[JSONDict]:
    memories = _memory_ids(_items(doc, "personal_memories"))
    owners = {
        pm["user_disc_id"] for pm in memories if view.memory_loadable(pm["user_disc_id"], pm["persona_lineage_id"])
    }
    out: list[JSONDict] = []
    for pm in memories:
        owner = pm["user_disc_id"]
        if view.memory_loadable(owner, pm["persona_lineage_id"]):
            out.append(pm)
        elif owner not in owners and view.minimal(owner):
            # D-16/D-17 evidence only: its lineage or owner is one the turn cannot load, so it is never text.
            owners.add(owner)
            out.append({k: pm[k] for k in MEMORY_MARKER_KEYS} | {"content": "", "created_at_ms": 0})
    return out


def _reminders(doc: Mapping[str, Any], view: TurnView) -> list[JSONDict]:
    reminders = _items(doc, "reminders")
    covered = {r["user_disc_id"] for r in reminders if view.reminder_showable(r)}
    out: list[JSONDict] = []
    for r in reminders:
        target = r["user_disc_id"]
        if view.reminder_showable(r):
            out.append(r)
        elif r["due_at_ms"] > view.now_ms and target in view.privacy and view.minimal(target) and target not in covered:
            # D-16 pending-task evidence of a row; another persona's, so never rendered by this turn.
            covered.add(target)
            out.append({k: v for k, v in r.items() if k != "repetition_interval_hours"} | {"purpose": ""})
    return out


def minimise_snapshot(doc: Mapping[str, Any]) -> JSONDict:
    """The stored form of a validated snapshot: what its turn reads, nothing it could not show."""
    doc = copy.deepcopy(dict(doc))
    view = TurnView.of(doc)
    messages = [_message(msg, view) for msg in _items(doc, "messages")]
    attachments = {a["id"] for msg in messages for a in msg.get("attachments") or []}
    minimised: JSONDict = {
        "users": [_user(u, view) for u in _items(doc, "users")],
        "personal_memories": _personal_memories(doc, view),
        "server_memories": [sm for sm in _items(doc, "server_memories") if sm["persona_lineage_id"] in view.lineages],
        "reminders": _reminders(doc, view),
        "persona_user_blocks": _active_blocks(doc),
        "naming_preferences": [n for n in _items(doc, "naming_preferences") if view.saved_names(n["user_disc_id"])],
        "voice_transcripts": [t for t in _items(doc, "voice_transcripts") if t["attachment_id"] in attachments],
        "messages": messages,
        "personas": [_persona(p, view) for p in _items(doc, "personas")],
    }
    members = _items(doc, "members")
    shown_roles = {r["id"] for mem in members if view.minimal(mem["user_disc_id"]) for r in mem.get("roles") or []}
    kept_texts = _strings({**doc, **minimised, "members": []})
    needed_roles = mention_ids(kept_texts)[2] - shown_roles
    minimised["members"] = [_member(mem, view, needed_roles) for mem in members]
    return {**doc, **{k: v for k, v in minimised.items() if k in doc}}
