"""The stored snapshot holds what its turn needs to replay, and nothing it could not show (issue 13).

Property over generated channels: a turn assembled against live rows, captured the way the bot
captures it (``chatcontext.snapshot.capture.capture_snapshot``) and stored (``store_prompt_record``), replays
from the stored JSON to the recorded context items exactly, and to the same output document, byte
for byte, as everything the turn read (``read_snapshot``); yet the stored JSON holds no text of a
privacy-FULL author or of one the persona blocks, no memory the persona cannot load (another lineage,
a FULL, PARTIAL or blacklisted owner, personalization off), no reminder it cannot show and no server
secret.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from bot.conversation.db import in_callers_transaction
from bot.conversation.jobs import TurnJob
from bot.conversation.providers import build_provider, provider_config
from bot.conversation.runner import TurnRunner
from bot.conversation.state import ServerState, read_author_state
from chatcontext.core.config import StageConfig
from chatcontext.core.memory_transport import InMemoryTransport
from chatcontext.core.serialize import dumps_output, turn_output
from chatcontext.core.types import (
    Author,
    ChatTurnContext,
    DiscordMessage,
    MemberInfo,
    PersonaInfo,
    Reaction,
    ReactionEmoji,
)
from chatcontext.management.commands import minimise_snapshots
from chatcontext.models import PromptRecord
from chatcontext.pipeline import build_turn_context
from chatcontext.records.store import TurnRecord, record_turn
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import SnapshotTurn, load_snapshot_rows, snapshot_turn, validate_snapshot
from chatcontext.snapshot.capture import capture_snapshot, read_snapshot
from chatcontext.snapshot.minimise import FULL_USER_KEYS, WITHHELD, minimise_snapshot
from personas import models as m
from tests.budgets import database_property
from tests.chatcontext.pipeline.documents import (
    BOT_ID,
    START_MS,
    SyntheticUser,
    author_json,
    base_document,
    marker,
    message_json,
    user_id,
)
from tests.markers import BOTH
from tests.paths import EXAMPLE
from tests.replays import recorded_items, replayed_output
from tests.strategies import channels

LINEAGES = (0, 10000, 10001, 10002)  # global, Tomori, Ellen, a lineage no persona holds
POSITIONS = ("before_char", "after_char", "at_depth")


class RecordingTransport(InMemoryTransport):
    """What ``bot.discord_transport.DiscordTransport`` remembers of a turn's Discord reads."""

    def __init__(self, base: InMemoryTransport, trigger: DiscordMessage) -> None:
        self.__dict__.update(base.__dict__)
        self.messages: dict[str, DiscordMessage] = {trigger.id: trigger}
        self.members: dict[str, MemberInfo] = {}
        self.reaction_users: dict[tuple[str, ReactionEmoji], list[str]] = {}
        self.channel_names: dict[str, str] = {}
        self.role_names: dict[str, str] = {}

    def _seen(self, message: DiscordMessage | None) -> DiscordMessage | None:
        if message is not None:
            self.messages[message.id] = message
        return message

    def fetch_history(self, limit: int) -> list[DiscordMessage]:
        return [m for m in super().fetch_history(limit) if self._seen(m)]

    def get_cached_message(self, message_id: str) -> DiscordMessage | None:
        return self._seen(super().get_cached_message(message_id))

    def fetch_message(self, message_id: str) -> DiscordMessage:
        found = super().fetch_message(message_id)
        self._seen(found)
        return found

    def fetch_reaction_users(self, message: DiscordMessage, reaction: Reaction, limit: int) -> list[Author]:
        users = super().fetch_reaction_users(message, reaction, limit)
        self.reaction_users[(message.id, reaction.emoji)] = [u.id for u in users]
        return users

    def _member(self, member: MemberInfo | None) -> MemberInfo | None:
        if member is not None:
            self.members[member.user_disc_id] = member
        return member

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        return self._member(super().get_cached_member(user_id))

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        return self._member(super().fetch_member(user_id))

    def channel_label(self, channel_id: str) -> str | None:
        label = super().channel_label(channel_id)
        if label is not None:
            self.channel_names[channel_id] = label.removeprefix("#")
        return label

    def role_name(self, role_id: str) -> str | None:
        name = super().role_name(role_id)
        if name is not None:
            self.role_names[role_id] = name
        return name


@dataclass
class Secrets:
    """Texts of the generated channel that no stored snapshot may hold, by what they are."""

    hidden_messages: set[str]
    unloadable_memories: set[str]
    unshowable_reminders: set[str]
    other_server_memories: set[str]
    hidden_profile_fields: set[str]
    other_persona_data: set[str]  # the preset and lorebook of the persona that does not answer

    def all(self) -> Iterator[str]:
        yield from self.hidden_messages | self.unloadable_memories | self.unshowable_reminders
        yield from self.other_server_memories | self.hidden_profile_fields | self.other_persona_data


@st.composite
def personal_channels(draw: st.DrawFn) -> tuple[dict[str, Any], Secrets]:
    """A generated channel (``test_properties.channels``) with the personalization rows a turn reads:
    forwards, saved nicknames, pronouns, activities, personal memories in four lineages, server memories,
    reminders for Tomori, Ellen, nobody and the bot, mentions of the users; Tomori's or Ellen's turn,
    personalization on or off, sometimes impersonating a user."""
    doc, _hidden, _trigger = draw(channels())
    users = doc["users"]
    persona_key = draw(st.sampled_from(("tomori", "ellen")))
    lineage = 10000 if persona_key == "tomori" else 10001
    personalization = draw(st.booleans())
    doc["server"]["settings"]["personal_memories_enabled"] = personalization
    doc["turn"]["persona_key"] = persona_key
    impersonated = draw(st.none() | st.sampled_from([u["disc_id"] for u in users]))
    doc["turn"]["impersonated_user_disc_id"] = impersonated
    levels = {u["disc_id"]: u["privacy_level"] for u in users}
    blacklisted = {b["user_disc_id"] for b in doc["blacklist"]}
    hidden_fields = set()
    for user in users:
        uid, n = user["disc_id"], int(user["disc_id"][-2:])
        if draw(st.booleans()):
            user["user_nickname"] = f"nick{n}"
        # Pronouns show for MINIMAL users the persona may personalize, a presence for MINIMAL members.
        user["pronouns"] = f"pronouns p{n}q"
        own = n == 1 or uid == impersonated  # the triggerer's (user 1) and an impersonated user's rows stay whole
        if not (levels[uid] == 0 and uid not in blacklisted and personalization) and not own:
            hidden_fields.add(user["pronouns"])
        if draw(st.booleans()):
            # A saved name for Tomori's or Ellen's lineage, which only a user P-02 lets be named keeps.
            preference = {"user_disc_id": uid, "persona_lineage_id": draw(st.sampled_from((10000, 10001)))}
            preference["nickname_override"] = f"pref n{n}q"
            doc.setdefault("naming_preferences", []).append(preference)
            if not (levels[uid] != 2 and uid not in blacklisted and personalization):
                hidden_fields.add(preference["nickname_override"])
    for member in doc["members"]:
        uid = member["user_disc_id"]
        if uid in levels:
            member["activities"] = [{"type": "playing", "name": f"game g{uid[-2:]}q"}]
            if levels[uid] != 0:
                hidden_fields.add(f"game g{uid[-2:]}q")
    messages = doc["messages"]
    for n, msg in enumerate(messages):
        if draw(st.integers(0, 3)) == 0:
            msg["content"] += f" <@{draw(st.sampled_from(users))['disc_id']}>"
        if 0 < n < len(messages) - 1 and draw(st.integers(0, 4)) == 0:
            # A forward of an earlier message, author-less as Discord sends it, or empty (a chain, BC3-12).
            origin = messages[draw(st.integers(0, n - 1))]
            msg["reference"] = {"type": "forward", "message_id": origin["id"], "channel_id": origin["channel_id"]}
            msg["message_snapshots"] = [{"content": origin["content"]}] if draw(st.booleans()) else [{}]
    blocked = {b["user_disc_id"] for b in doc["persona_user_blocks"] if b["persona_key"] == persona_key}
    now = doc["now_ms"]

    memories, unloadable = [], set()
    for n, owner in enumerate(draw(st.lists(st.sampled_from(users), max_size=8))):
        text, on = f"memory m{n}q", draw(st.sampled_from(LINEAGES))
        memories.append({"user_disc_id": owner["disc_id"], "persona_lineage_id": on, "content": text,
                         "created_at_ms": now - (n + 1) * 3_600_000})  # fmt: skip
        uid = owner["disc_id"]
        loadable = personalization and levels[uid] == 0 and uid not in blacklisted and on in (0, lineage)
        if not loadable or impersonated not in (None, uid):
            unloadable.add(text)
    doc["personal_memories"] = memories
    doc["server_memories"] = [
        {"persona_lineage_id": on, "content": f"rule s{n}q", "created_at_ms": now - n * 60_000}
        for n, on in enumerate(draw(st.lists(st.sampled_from(LINEAGES), max_size=4)))
    ]
    others = {sm["content"] for sm in doc["server_memories"] if sm["persona_lineage_id"] not in (0, lineage)}

    reminders, unshowable = [], set()
    targets = st.sampled_from([u["disc_id"] for u in users] + [BOT_ID])
    for n, target in enumerate(draw(st.lists(targets, max_size=6))):
        key = draw(st.sampled_from(("tomori", "ellen", None)))
        due = now + draw(st.sampled_from((-1, 1))) * (n + 1) * 3_600_000
        text = f"task r{n}q"
        reminders.append({"user_disc_id": target, "persona_key": key, "purpose": text, "due_at_ms": due})
        if target == BOT_ID:
            showable = key == persona_key and impersonated is None
        else:
            showable = key == persona_key or (key is None and persona_key == "tomori")
        if due <= now or not showable:
            unshowable.add(text)
    doc["reminders"] = reminders
    if draw(st.booleans()):
        _known_bystander(draw, doc, unloadable, unshowable)

    hidden = {
        marker(n)
        for n, msg in enumerate(doc["messages"], start=1)
        if levels.get(msg["author"]["id"]) == 2 or msg["author"]["id"] in blocked
    }
    persona_data = _persona_data(draw, doc, shown=[n for n in range(1, len(messages) + 1) if marker(n) not in hidden])
    other_persona = set().union(*(texts for key, texts in persona_data.items() if key != persona_key))
    return validate_snapshot(doc), Secrets(hidden, unloadable, unshowable, others, hidden_fields, other_persona)


def _known_bystander(draw: st.DrawFn, doc: dict[str, Any], unloadable: set[str], unshowable: set[str]) -> None:
    """D-16: Zed (user 90), of any privacy level, perhaps blacklisted, has a member row of the server
    (``known_users``) but is no member the transport knows; a message names his saved nickname. His
    memory and his reminder are never the turn's to show, whatever their lineage or persona."""
    zed = user_id(90)
    doc["users"].append(
        {"disc_id": zed, "username": "user90", "global_name": "User 90", "user_nickname": "Zeddy",
         "privacy_level": draw(st.sampled_from((0, 1, 2)))}
    )  # fmt: skip
    doc["known_users"] = [{"user_disc_id": zed}]
    if draw(st.booleans()):
        doc["blacklist"].append({"user_disc_id": zed})
    messages = doc["messages"]
    named = messages[draw(st.integers(0, len(messages) - 1))]
    named["content"] += " have you seen Zeddy?"
    if named.get("clean_content"):
        named["clean_content"] += " have you seen Zeddy?"
    if draw(st.booleans()):
        memory = {"persona_lineage_id": draw(st.sampled_from(LINEAGES)), "content": "zed memory z1q"}
        doc["personal_memories"].append({"user_disc_id": zed, **memory, "created_at_ms": doc["now_ms"] - 60_000})
        unloadable.add("zed memory z1q")
    if draw(st.booleans()):
        task = {"persona_key": draw(st.sampled_from(("tomori", "ellen", None))), "purpose": "zed task z2q"}
        doc["reminders"].append({"user_disc_id": zed, **task, "due_at_ms": doc["now_ms"] + 3_600_000})
        unshowable.add("zed task z2q")


def _persona_data(draw: st.DrawFn, doc: dict[str, Any], shown: list[int]) -> dict[str, set[str]]:
    """Each persona a preset (or none) and lorebook entries keyed on the tokens of messages the turn
    may show (a key on a hidden author's token would put the token in the snapshot), so that some
    fire; each persona's texts by its key."""
    texts: dict[str, set[str]] = {}
    for index, persona in enumerate(doc["personas"]):
        own: set[str] = set()
        if draw(st.booleans()):
            own.add(f"preset p{index}q")
            persona["preset"] = [
                {
                    "identifier": "custom",
                    "marker": False,
                    "content": f"preset p{index}q",
                    "role": "system",
                    "enabled": True,
                }
            ] + [
                {"identifier": name, "marker": True, "content": "", "role": "system", "enabled": True}
                for name in ("main", "charDescription", "chatHistory")
            ]
        entries = []
        keyed_on = draw(st.lists(st.sampled_from(shown), max_size=3)) if shown else []
        for uid, n in enumerate(keyed_on, start=1):
            own.add(f"lore l{index}u{uid}q")
            entries.append({
                "book_id": index + 1, "uid": uid, "content": f"lore l{index}u{uid}q", "keys": [marker(n)],
                "secondary_keys": [], "comment": "", "selective": False, "selective_logic": "and_any",
                "constant": False, "insertion_order": 100, "position": draw(st.sampled_from(POSITIONS)), "depth": 1,
                "scan_depth": draw(st.sampled_from((2, 50))), "case_sensitive": False, "match_whole_words": True,
                "token_budget": 2048,
            })  # fmt: skip
        persona["lorebook"] = entries
        texts[persona["key"]] = own
    return texts


def _constant_clock() -> float:
    return 0.0


def live_turn(
    doc: dict[str, Any], *, member_rows: tuple[str, ...] = ()
) -> tuple[ChatTurnContext, dict[str, Any], dict[str, Any]]:
    """The turn assembled against live rows (the snapshot's, loaded in the open transaction), its
    stored record's snapshot and everything it read, with a server key set that must stay out.
    ``member_rows``: users with a member row of the server whom the transport does not know (D-16)."""
    loaded = load_snapshot_rows(doc)
    m.ServerMember.objects.bulk_create(m.ServerMember(server_id=loaded.server_id, user_disc_id=u) for u in member_rows)
    # Rows as they were when the turn started (capture reads those created before the turn's clock).
    m.DiscordUser.objects.update(created_at=datetime(2020, 1, 1, tzinfo=UTC))
    m.ServerSettings.objects.filter(server_id=loaded.server_id).update(
        llm_api_key="sk-live-secret-key", llm_base_url="https://llm.invalid/v1"
    )
    inputs = snapshot_turn(doc, loaded)
    transport = RecordingTransport(inputs.transport, inputs.turn.incoming.message)
    config = StageConfig()
    ctx = build_turn_context(
        inputs.turn, transport, transcripts=inputs.transcripts, config=config, clock=_constant_clock
    )
    record = record_turn(TurnRecord(ctx, snapshot=capture_snapshot(ctx, transport, config=config), source="bot"))
    record.refresh_from_db()
    return ctx, record.snapshot, read_snapshot(ctx, transport)


def replay_output(doc: dict[str, Any]) -> str:
    return dumps_output(turn_output(replay_snapshot(validate_snapshot(doc), config=StageConfig(), transcriber=None)))


class SnapshotOutlet:
    """The channel a generated snapshot describes, as the runner's outlet: every persona turn reads
    it through a fresh recording transport; what the persona says goes nowhere."""

    source = PromptRecord.Source.BOT
    thread_parent_id = None

    def __init__(self, inputs: SnapshotTurn) -> None:
        self.inputs = inputs
        self.bot_user = inputs.turn.bot_user
        self.channel_name = inputs.turn.channel_name
        self.channel_description = inputs.turn.channel_description

    def transport(self) -> RecordingTransport:
        return RecordingTransport(self.inputs.transport, self.inputs.turn.incoming.message)

    @asynccontextmanager
    async def composing(self, persona: PersonaInfo) -> AsyncIterator[None]:
        yield None

    async def deliver(self, persona: PersonaInfo, text: str, **_: Any) -> None:
        return None

    async def notify_failure(self, persona: PersonaInfo, **_: Any) -> None:
        return None

    async def post_notices(self, persona: PersonaInfo, notices: list[Any]) -> None:
        return None

    async def react(self, message_id: str, emoji: str) -> None:
        return None


def runner_turn(doc: dict[str, Any]) -> PromptRecord:
    """The turn run by the real ``TurnRunner`` (context and snapshot in one call, the offline echo
    provider, the record in one call) against live rows: the snapshot's, loaded in the open
    transaction, with a server key set that must stay out."""
    loaded = load_snapshot_rows(doc)
    m.DiscordUser.objects.update(created_at=datetime(2020, 1, 1, tzinfo=UTC))
    m.ServerSettings.objects.filter(server_id=loaded.server_id).update(
        llm_api_key="sk-live-secret-key", llm_base_url="https://llm.invalid/v1", llm_provider="echo"
    )
    inputs = snapshot_turn(doc, loaded)
    turn, trigger = inputs.turn, inputs.turn.incoming.message
    settings = m.ServerSettings.objects.get(server_id=loaded.server_id)
    server = ServerState(turn.server, turn.all_personas, provider_config(settings), stream_replies=False)
    responders = {p.persona_id: p for p in turn.all_personas if p.persona_id in turn.locked_turn.triggered_persona_ids}
    personas = (turn.persona, *(p for pid, p in responders.items() if pid != turn.persona.persona_id))
    author = read_author_state(loaded.server_id, trigger.author.id, turn.now_ms)
    job = TurnJob(
        turn.locked_turn,
        SnapshotOutlet(inputs),
        personas,
        server,
        author,
        triggerer=inputs.transport.get_cached_member(trigger.author.id),
    )
    runner = TurnRunner(
        db=in_callers_transaction,
        provider_factory=build_provider,
        transcripts=inputs.transcripts,
        clock=lambda: doc["now_ms"],
    )
    result = async_to_sync(runner.run_persona_turn)(job, turn.persona, 0)
    assert result is not None
    result.record.refresh_from_db()
    return result.record


@BOTH
@database_property
@given(personal_channels())
def test_a_stored_snapshot_replays_exactly_and_holds_nothing_the_turn_could_not_show(
    channel: tuple[dict[str, Any], Secrets],
) -> None:
    doc, secrets = channel
    with transaction.atomic():
        record = runner_turn(doc)
        stored, recorded = record.snapshot, recorded_items(record)
        transaction.set_rollback(True)

    assert replayed_output(stored)["context_items"] == recorded

    text = json.dumps(stored, ensure_ascii=False)
    assert [s for s in secrets.all() if s in text] == []
    assert "sk-live-secret-key" not in text and "llm.invalid" not in text
    assert minimise_snapshot(stored) == stored


def minimal_channel(privacy_level: int) -> dict[str, Any]:
    """User 2 (of ``privacy_level``) forwards a message of Carol (user 3, FULL) twice, once with its
    author and once author-less as Discord sends it, and user 1 forwards that forward (a chain,
    BC3-12); Carol forwarded Dan's (user 4) earlier, with a reaction by user 1, who asks."""
    alice, bob, carol, dan = (SyntheticUser(1), SyntheticUser(2, privacy_level), SyntheticUser(3, 2), SyntheticUser(4))
    first = message_json(1, author_json(dan), "dan says w1x", created_ms=START_MS)
    carols = message_json(2, author_json(carol), "", created_ms=START_MS + 1000)
    carols["reference"] = {"type": "forward", "message_id": first["id"], "channel_id": first["channel_id"]}
    carols["message_snapshots"] = [{"author": author_json(dan), "content": "dan says w1x"}]
    carols["reactions"] = [{"emoji": {"id": None, "name": "👍"}, "count": 1, "users": [alice.id]}]
    own = message_json(3, author_json(carol), "carol's secret w3x", created_ms=START_MS + 2000)
    relay = message_json(4, author_json(bob), "", created_ms=START_MS + 3000)
    relay["reference"] = {"type": "forward", "message_id": own["id"], "channel_id": own["channel_id"]}
    relay["message_snapshots"] = [{"author": author_json(carol), "content": "carol's secret w3x"}]
    discord_relay = message_json(5, author_json(bob), "", created_ms=START_MS + 3500)
    discord_relay["reference"] = relay["reference"]
    discord_relay["message_snapshots"] = [{"content": "carol's secret w3x"}]
    chain = message_json(6, author_json(alice), "look", created_ms=START_MS + 3600)
    chain["reference"] = {"type": "forward", "message_id": discord_relay["id"], "channel_id": own["channel_id"]}
    chain["message_snapshots"] = [{}]
    ask = message_json(7, author_json(alice), "tomori, what did they say? w7x", created_ms=START_MS + 4000)
    messages = [first, carols, own, relay, discord_relay, chain, ask]
    return base_document([alice, bob, carol, dan], messages, now_ms=START_MS + 60_000)


@BOTH
@pytest.mark.parametrize("privacy_level", [0, 2])
def test_bc3_12_forwards_keep_what_a_chain_shows_and_lose_a_hidden_authors_words(privacy_level: int) -> None:
    doc = validate_snapshot(minimal_channel(privacy_level))
    stored = validate_snapshot(minimise_snapshot(doc))
    assert replay_output(stored) == replay_output(doc)
    text = json.dumps(stored)
    assert "carol's secret" not in text and text.count(WITHHELD) == 2
    assert stored["messages"][5]["message_snapshots"] == [{}]  # the chain stays a chain
    [carols_forward] = [msg for msg in stored["messages"] if msg["author"]["id"] == user_id(3) and msg.get("reference")]
    # Carol's own message is a stub; what Dan said still passes through her forward.
    assert carols_forward["message_snapshots"] == [{**doc["messages"][1]["message_snapshots"][0]}]
    assert "content" not in carols_forward and "reactions" not in carols_forward


@BOTH
def test_a_hidden_members_role_stays_only_when_a_text_names_it() -> None:
    doc = minimal_channel(2)
    doc["members"][1]["roles"] = [
        {"id": "77", "name": "Owls", "position": 1},
        {"id": "78", "name": "Bats", "position": 2},
    ]
    doc["members"][1]["activities"] = [{"type": "playing", "name": "chess"}]
    doc["messages"][-1]["content"] += " ask <@&77>"
    doc = validate_snapshot(doc)
    stored = minimise_snapshot(doc)
    bob = stored["members"][1]
    assert bob["roles"] == [{"id": "77", "name": "Owls", "position": 1}] and "activities" not in bob
    assert "@Owls" in replay_output(stored) and replay_output(stored) == replay_output(doc)


def over_full_record(doc: dict[str, Any]) -> PromptRecord:
    """A record as stored before issue 13: the whole snapshot the turn read."""
    m.Server.objects.get_or_create(server_disc_id=doc["server"]["disc_id"], defaults={"name": "Live"})
    return record_turn(TurnRecord(replay_snapshot(doc, transcriber=None), snapshot=doc, source="bot"))


def command(*args: str) -> str:
    out = StringIO()
    call_command("minimise_snapshots", *args, stdout=out)
    return out.getvalue()


@BOTH
def test_minimise_snapshots_rewrites_over_full_records_whose_replay_stays_the_same() -> None:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    record = over_full_record(doc)
    invalid = over_full_record(doc)
    PromptRecord.objects.filter(pk=invalid.pk).update(snapshot={**doc, "now_ms": -1})
    before = replay_output(doc)

    assert command("--dry-run") == (
        "2 records with a snapshot: 1 minimised, 0 already minimal, 0 kept: the replay would differ, "
        "1 kept: not replayable (dry run: nothing written)\n"
    )
    record.refresh_from_db()
    assert record.snapshot == doc

    assert command().startswith("2 records with a snapshot: 1 minimised, 0 already minimal")
    record.refresh_from_db()
    assert record.snapshot == minimise_snapshot(doc) and "4471" not in json.dumps(record.snapshot)
    assert replay_output(record.snapshot) == before
    invalid.refresh_from_db()
    assert invalid.snapshot["now_ms"] == -1  # left as stored
    assert command().startswith("2 records with a snapshot: 0 minimised, 1 already minimal")


@BOTH
def test_minimise_snapshots_keeps_a_record_whose_replay_would_change(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    record = over_full_record(doc)
    # A minimiser that dropped something the turn shows: Priya's memories.
    monkeypatch.setattr(minimise_snapshots, "minimise_snapshot", lambda d: {**d, "personal_memories": []})
    assert "1 kept: the replay would differ" in command()
    record.refresh_from_db()
    assert record.snapshot == doc


@BOTH
def test_h14_a_memory_renders_with_the_id_its_snapshot_gives() -> None:
    """The prompt shows memories as `ID:N`; a captured snapshot keeps the live id, so its replay
    shows the id the model saw. Without ids a replay numbers them in document order from 1."""
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    prompt = "\n".join(i["text"] for i in json.loads(replay_output(doc))["context_items"])
    assert "ID:1 " in prompt and "ID:2 " in prompt
    for n, memory in enumerate(doc["personal_memories"]):
        memory["id"] = 4100 + n
    prompt = "\n".join(i["text"] for i in json.loads(replay_output(doc))["context_items"])
    assert "ID:4100 " in prompt and "ID:4101 " in prompt and "ID:1 " not in prompt


def bystanders_channel() -> dict[str, Any]:
    """Alice (user 1) asks Tomori; Carol (user 3, FULL) posted before her, with a whole profile and
    memories Tomori's lineage could otherwise load. Dave (user 5, with a plain MINIMAL row) and Erin
    (user 6, no row) are members of the server who take no part: nothing names them, they posted
    nothing and no row gives discovery evidence of them (D-16, D-17)."""
    alice, carol, dave = SyntheticUser(1), SyntheticUser(3, 2), SyntheticUser(5)
    messages = [
        message_json(1, author_json(carol), "carol's words w1x", created_ms=START_MS),
        message_json(2, author_json(alice), "tomori, hello w2x", created_ms=START_MS + 1000),
    ]
    doc = base_document([alice, carol, dave], messages, now_ms=START_MS + 60_000)
    carol_row = doc["users"][1]
    carol_row.update(
        user_nickname="Caz",
        timezone_offset=2.0,
        pronouns="she/her p3q",
        gender_identity="woman g3q",
        physical_appearance_tags=["red scarf a3q"],
        impersonation_prompt="speak like Carol i3q",
        nai_char_ref_url="https://example.invalid/carol-n3q.png",
    )
    doc["users"][2]["pronouns"] = "they/them p5q"
    doc["members"].append({"user_disc_id": user_id(6), "username": "user6", "global_name": "User 6"})
    doc["personal_memories"] = [
        {
            "user_disc_id": carol.id,
            "persona_lineage_id": lineage,
            "content": f"carol memory m{lineage}q",
            "created_at_ms": START_MS - 3_600_000,
        }
        for lineage in (0, 10000)
    ]
    return validate_snapshot(doc)


def captured(doc: dict[str, Any]) -> dict[str, Any]:
    """The snapshot the bot would store for ``doc``'s turn (``live_turn``), checked to replay exactly."""
    with transaction.atomic():
        ctx, stored, everything = live_turn(doc)
        recorded = [{k: v for k, v in i.items() if k != "token_estimate"} for i in turn_output(ctx)["context_items"]]
        transaction.set_rollback(True)
    assert json.loads(replay_output(stored))["context_items"] == recorded
    assert replay_output(stored) == replay_output(everything)
    return stored


@BOTH
def test_p01_a_full_users_stored_row_holds_only_the_documented_keys_and_none_of_their_words() -> None:
    stored = captured(bystanders_channel())
    [carol] = [u for u in stored["users"] if u["disc_id"] == user_id(3)]
    assert set(carol) == set(FULL_USER_KEYS)
    assert carol["privacy_level"] == 2 and carol["user_nickname"] == "Caz"
    text = json.dumps(stored, ensure_ascii=False)
    withheld = ("carol's words", "w1x", "p3q", "g3q", "a3q", "i3q", "n3q", "carol memory")
    assert [s for s in withheld if s in text] == []
    assert [pm for pm in stored["personal_memories"] if pm["user_disc_id"] == user_id(3)] == []


@BOTH
def test_d16_a_member_discovery_never_considered_is_not_in_the_stored_snapshot() -> None:
    stored = captured(bystanders_channel())
    bystanders = {user_id(5), user_id(6)}
    assert {mem["user_disc_id"] for mem in stored["members"]} & bystanders == set()
    assert {u["disc_id"] for u in stored["users"]} & bystanders == set()
    text = json.dumps(stored, ensure_ascii=False)
    assert "user5" not in text and "user6" not in text and "p5q" not in text
    # The people the turn did read stay: the triggerer and the FULL author, as members and rows.
    assert {user_id(1), user_id(3)} <= {mem["user_disc_id"] for mem in stored["members"]}


def nickname_channel(zed: SyntheticUser, *, evidence: bool, **row: Any) -> dict[str, Any]:
    """Alice (user 1) asks Tomori about "Zeddy", the saved nickname of Zed (user 5): the server has a
    member row of Zed (``live_turn``'s ``member_rows``) but the turn's transport does not know him as a
    member (he left, or Discord never sent him), and he posted nothing (D-16's nickname branch). With
    ``evidence`` he has a memory Tomori could load and a reminder due for Tomori (D-16 evidence)."""
    alice = SyntheticUser(1)
    now = START_MS + 60_000
    messages = [message_json(1, author_json(alice), "tomori, have you seen Zeddy lately? w1x", created_ms=START_MS)]
    doc = base_document([alice, zed], messages, now_ms=now)
    doc["users"][1].update(user_nickname="Zeddy", **row)
    doc["members"] = [mem for mem in doc["members"] if mem["user_disc_id"] != zed.id]
    if evidence:
        memory = {"persona_lineage_id": 10000, "content": "zed memory m5q", "created_at_ms": START_MS - 3_600_000}
        doc["personal_memories"] = [{"user_disc_id": zed.id, **memory}]
        reminder = {"persona_key": "tomori", "purpose": "zed reminder r5q", "due_at_ms": now + 3_600_000}
        doc["reminders"] = [{"user_disc_id": zed.id, **reminder}]
    return validate_snapshot(doc)


@BOTH
@pytest.mark.parametrize(
    ("zed", "evidence", "row"),
    [
        (SyntheticUser(5), False, {}),  # a default row: ineligible (D-17)
        (SyntheticUser(5), False, {"timezone_offset": 2.0}),  # eligible, but no member to fetch (D-18)
        (SyntheticUser(5), True, {}),  # eligible by a memory and a due reminder, whose text the turn never shows
        (SyntheticUser(5, privacy_level=2), True, {"pronouns": "he/him p5q"}),  # FULL: none of his words
        (SyntheticUser(5, blacklisted=True), True, {"pronouns": "he/him p5q"}),
    ],
    ids=["ineligible", "eligible", "evidence", "full", "blacklisted"],
)
def test_d16_a_server_member_named_by_saved_nickname_whom_the_transport_never_fetched_is_found_again_in_the_replay(
    zed: SyntheticUser, evidence: bool, row: dict[str, Any]
) -> None:
    """D-16 selects Zed by his saved nickname among the server's member rows; the transport never
    fetched him, so the stored snapshot keeps his row and that he is known to the server (format 4
    ``known_users``), and the replay's discovery finds the same candidates and rejections."""
    doc = nickname_channel(zed, evidence=evidence, **row)
    with transaction.atomic():
        ctx, stored, _ = live_turn(doc, member_rows=(zed.id,))
        live = turn_output(ctx)
        transaction.set_rollback(True)
    discovery = live["diagnostics"]["participants"]
    assert discovery["candidate_count"] >= 1  # the live read selected Zed
    replayed = json.loads(replay_output(stored))
    assert replayed["context_items"] == recorded_items_of(live)
    assert replayed["diagnostics"]["participants"] == discovery
    assert stored["known_users"] == [{"user_disc_id": zed.id}]
    assert zed.id not in {mem["user_disc_id"] for mem in stored["members"]}  # no member the transport lacked
    text = json.dumps(stored, ensure_ascii=False)
    # Only evidence that rows exist: none of a memory's or reminder's text, which the turn could not show,
    # and of a FULL or blacklisted user's row only what minimise keeps of anyone's (P-01, P-05).
    assert [s for s in ("m5q", "r5q", "p5q") if s in text] == []


def recorded_items_of(output: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k != "token_estimate"} for item in output["context_items"]]


@pytest.mark.parametrize(("block_type", "hides"), [("mute", False), ("block", True), (None, True)])
def test_bc2_11_only_a_block_hides_its_users_words_in_a_stored_snapshot(block_type: str | None, hides: bool) -> None:
    """Format 4 keeps the persona's mutes (its block notice lists them, with each reason), but a mute
    only stops triggering: the muted user's messages stay whole; a block (the default) stubs them."""
    doc = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    first = doc["messages"][0]
    block = {"persona_key": doc["turn"]["persona_key"], "user_disc_id": first["author"]["id"],
             "expires_at_ms": doc["now_ms"] + 60_000, "block_type": block_type, "reason": "noisy r1q"}  # fmt: skip
    doc.update(format="tomori-turn-snapshot/4", persona_user_blocks=[block])
    stored = minimise_snapshot(validate_snapshot(doc))
    assert stored["persona_user_blocks"] == [block]
    assert (stored["messages"][0] != first) is hides
    assert (first["content"] in json.dumps(stored, ensure_ascii=False)) is not hides
