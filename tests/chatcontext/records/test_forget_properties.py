"""Forget-me property (issue 13 item 5): over generated prompt records, forgetting a user deletes
exactly the records that hold their words, profile or memories, and leaves every other record
byte for byte as it was, on SQLite and PostgreSQL.

Each generated record places people in it in every way a stored record can: as authors of messages
with text or attachments or of forwards, as profile fields of user rows, server nicknames and
activities of member rows, personal memories, reminders, an impersonated user, authors of prompt
history entries and participants of the prompt's target index — each carrying a marker
``«<id>:…»`` of that user's data — and as bare ids that hold nothing of theirs: user rows with only
names and a privacy level, member rows with only names and roles, reactions, blacklist and block
entries, text-less messages, persona entries whose author id is a persona id, and the bot. The
generator keeps, per record, who it placed data of; that is the ground truth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.models import PromptRecord
from chatcontext.records.store import subject_user_ids
from community.forget import forget_user
from personas.models import Server
from tests.actors import TEST_ACTOR
from tests.budgets import database_property

pytestmark = pytest.mark.django_db

PEOPLE = ("11", "12", "13", "14", "15")
BOT = "9000"
# A persona's internal id, which its webhook entries carry as author id; equal to a person's id on
# purpose, so that counting the entry as theirs would show.
PERSONA_ID = 11


@dataclass
class Draft:
    """One record under construction and the users whose data it holds."""

    snapshot: dict[str, Any] = field(
        default_factory=lambda: {"bot_user": {"id": BOT, "username": "tomoribot"}, "turn": {}}
    )
    simplified: list[dict[str, Any]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    about: set[str] = field(default_factory=set)
    n: int = 0

    def mark(self, user: str) -> str:
        """A piece of ``user``'s data, recognisable in the stored JSON."""
        self.n += 1
        self.about.add(user)
        return f"«{user}:{self.n}»"

    def rows(self, key: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self.snapshot.setdefault(key, [])
        return rows


people = st.sampled_from(PEOPLE)


@st.composite
def records(draw: st.DrawFn) -> Draft:
    draft = Draft()
    for author in draw(st.lists(st.sampled_from([*PEOPLE, BOT]), max_size=3)):
        kind = draw(st.sampled_from(["text", "attachment", "stub", "webhook"]))
        message: dict[str, Any] = {"id": str(6000 + draft.n), "author": {"id": author, "username": f"u{author}"}}
        if kind == "webhook":
            message.update(webhook_id="8800", content=f"«webhook:{author}»")
        elif kind == "text":
            text = draft.mark(author) if author != BOT else "bot words"
            message.update(content=text, clean_content=text)
        elif kind == "attachment":
            draft.mark(author) if author != BOT else None
            message["attachments"] = [{"id": "7300", "name": "cat.png"}]
        else:  # an excluded author's message kept as a stub: nothing of theirs but the id
            message.update(content="", clean_content="", attachments=[])
        if draw(st.booleans()):
            original = draw(people)
            message["message_snapshots"] = [{"author": {"id": original}, "content": draft.mark(original)}]
            if kind != "webhook" and author != BOT:  # what a person forwards is a message they posted
                draft.about.add(author)
        message["reactions"] = [{"emoji": {"name": "👍"}, "count": 1, "users": draw(st.lists(people, max_size=3))}]
        draft.rows("messages").append(message)
    for user in draw(st.lists(people, unique=True, max_size=3)):
        level = draw(st.sampled_from([0, 1, 2]))
        row: dict[str, Any] = {"disc_id": user, "username": f"user{user}", "privacy_level": level}
        profile = draw(st.sampled_from([None, "user_nickname", "pronouns", "timezone_offset", "prefix_override"]))
        if profile == "timezone_offset":
            draft.about.add(user)
            row[profile] = 9
        elif profile is not None:
            row[profile] = draft.mark(user)
        draft.rows("users").append(row)
    for user in draw(st.lists(people, unique=True, max_size=3)):
        member: dict[str, Any] = {"user_disc_id": user, "username": f"user{user}", "roles": [{"id": "1", "name": "R"}]}
        shown = draw(st.sampled_from([None, "nickname", "activities"]))
        if shown == "nickname":
            member["nickname"] = draft.mark(user)
        elif shown == "activities":
            member["activities"] = [{"type": "custom", "name": "Custom Status", "state": draft.mark(user)}]
        else:
            member.update(nickname=None, activities=[])
        draft.rows("members").append(member)
    for user in draw(st.lists(people, max_size=2)):
        draft.rows("personal_memories").append({"user_disc_id": user, "content": draft.mark(user)})
    for user in draw(st.lists(st.sampled_from([*PEOPLE, BOT]), max_size=2)):
        purpose = draft.mark(user) if user != BOT else "a self-task"
        draft.rows("reminders").append({"user_disc_id": user, "purpose": purpose})
    draft.rows("blacklist").extend({"user_disc_id": u} for u in draw(st.lists(people, max_size=2)))
    draft.rows("persona_user_blocks").extend({"user_disc_id": u} for u in draw(st.lists(people, max_size=2)))
    if draw(st.booleans()):
        impersonated = draw(people)
        draft.mark(impersonated)
        draft.snapshot["turn"]["impersonated_user_disc_id"] = impersonated
    for author in draw(st.lists(people, max_size=2)):
        draft.simplified.append({"author_id": author, "author_persona_id": None, "content": draft.mark(author)})
    if draw(st.booleans()):
        draft.simplified.append({"author_id": str(PERSONA_ID), "author_persona_id": PERSONA_ID, "content": "hoot"})
    for user in draw(st.lists(people, unique=True, max_size=2)):
        label = draft.mark(user)
        draft.targets.append({"serialized_key": f"discord_user:{user}", "target_id": user, "display_label": label})
    return draft


def store(server: Server, draft: Draft) -> PromptRecord:
    output = {"simplified_messages": draft.simplified, "participant_target_index": {"targets": draft.targets}}
    return PromptRecord.objects.create(
        server=server,
        channel_disc_id="4200",
        created_at=timezone.now(),
        simplified_messages=draft.simplified,
        participant_target_index=output["participant_target_index"],
        snapshot=draft.snapshot,
        subject_user_ids=subject_user_ids(output, draft.snapshot, bot_id=BOT),
    )


def stored() -> dict[int, str]:
    fields = ("snapshot", "simplified_messages", "participant_target_index", "subject_user_ids")
    return {pk: json.dumps(rest, sort_keys=True) for pk, *rest in PromptRecord.objects.values_list("pk", *fields)}


@database_property
@given(drafts=st.lists(records(), min_size=1, max_size=4), order=st.permutations(PEOPLE))
def test_forget_me_deletes_exactly_the_records_holding_the_users_data(drafts: list[Draft], order: list[str]) -> None:
    """Everyone is forgotten in turn; after each, exactly the records about them are gone."""
    with transaction.atomic():
        server = Server.objects.create(server_disc_id="4100", name="Night Owls")
        ids = [store(server, draft).pk for draft in drafts]
        for forgotten in order:
            about = {pk for pk, draft in zip(ids, drafts, strict=True) if forgotten in draft.about}
            before = stored()
            result = forget_user(forgotten, actor=TEST_ACTOR)
            after = stored()
            assert result.prompt_records == len(about & before.keys()), forgotten
            assert after == {pk: text for pk, text in before.items() if pk not in about}, forgotten
            assert not any(f"«{forgotten}:" in text for text in after.values()), forgotten
        transaction.set_rollback(True)
