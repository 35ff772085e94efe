"""Issue 17, correctness under caching: with the personalization cache on, every turn's context items
equal a cache-free assembly of the same state, whatever was written between turns and through
whichever path wrote it — the actions, the admin, the API, the slash commands, a tool call,
forget-me, retention and the turn's own registrations.

Each example runs in a transaction that is rolled back at its end. The cache keeps only rows read
outside a transaction (``reads_are_committed``, tested in test_personalization_cache.py), so here
it is told the reads are committed: inside the example's transaction this connection sees every
write it made, as a committed read would."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from bot.discord.exts import members
from chatcontext import repository
from chatcontext.core.config import StageConfig
from chatcontext.core.types import ContextItem
from chatcontext.personalization import PersonalizationCache
from chatcontext.pipeline import build_turn_context
from chatcontext.snapshot import load_snapshot_rows, snapshot_turn, validate_snapshot
from community.forget import forget_user
from community.retention import prune_prompt_records
from personas import actions
from personas import models as m
from personas.actions import tool_actions
from tests.actors import TEST_ACTOR
from tests.chatcontext.pipeline.documents import generate_snapshot, user_id

pytestmark = pytest.mark.django_db

PEOPLE = st.integers(min_value=1, max_value=3)
LEVELS = st.sampled_from([int(level) for level in m.PrivacyLevel])


class CachedTurnsMatchFreshOnes(RuleBasedStateMachine):
    """Writes through every path, and after each one a cached turn compared with a fresh one."""

    @initialize()
    def world(self) -> None:
        self.atomic = transaction.atomic()
        self.atomic.__enter__()
        self.doc = generate_snapshot(
            random.Random(11), messages=30, participants=3, memories_per_user=2, reminders_per_user=1
        )
        # User 3 has left the server: no member entry, so the prompt names them from their row,
        # which is where a rename on first contact shows.
        self.doc["members"] = [e for e in self.doc["members"] if e["user_disc_id"] != user_id(3)]
        validate_snapshot(self.doc)
        self.loaded = load_snapshot_rows(self.doc)
        self.server = m.Server.objects.get(pk=self.loaded.server_id)
        self.persona = m.Persona.objects.filter(server=self.server, is_alter=False).get()
        superuser = get_user_model().objects.create_superuser("root-cache", password="pw")
        self.admin = Client()
        self.admin.force_login(superuser)
        _, token = m.ApiToken.issue(self.server, "cache test", m.ApiToken.Scope.READ_WRITE)
        self.api = Client(headers={"Authorization": f"Bearer {token}"})
        self.cache = PersonalizationCache(max_users=1000, max_servers=4)
        self.assemble(None)  # the first turn registers the members without rows

    def teardown(self) -> None:
        if hasattr(self, "atomic"):
            transaction.set_rollback(True)
            self.atomic.__exit__(None, None, None)

    # ---- helpers ----

    def assemble(self, cache: PersonalizationCache | None) -> list[ContextItem]:
        inputs = snapshot_turn(self.doc, self.loaded)
        ctx = build_turn_context(
            inputs.turn, inputs.transport, transcripts=inputs.transcripts, config=StageConfig(), personalization=cache
        )
        return ctx.context_items

    def user(self, n: int) -> m.DiscordUser:
        disc_id = user_id(n)
        found = m.DiscordUser.objects.filter(user_disc_id=disc_id).first()
        return found or actions.register_user(disc_id, username=f"user{n}", global_name=f"User {n}", actor=TEST_ACTOR)

    def api_path(self, n: int, tail: str) -> str:
        return f"/api/v1/servers/{self.server.server_id}/users/{user_id(n)}/{tail}"

    # ---- privacy level: action, admin, API, slash command ----

    @rule(n=PEOPLE, level=LEVELS)
    def privacy_by_action(self, n: int, level: int) -> None:
        actions.set_privacy_level(self.user(n), level, actor=TEST_ACTOR)

    @rule(n=PEOPLE, level=LEVELS)
    def privacy_by_admin(self, n: int, level: int) -> None:
        name = m.PrivacyLevel(level).name.lower()
        response = self.admin.post(
            "/admin/personas/discorduser/",
            {"action": f"set_privacy_{name}", "_selected_action": [self.user(n).pk]},
        )
        assert response.status_code == 302

    @rule(n=PEOPLE, level=LEVELS)
    def privacy_by_api(self, n: int, level: int) -> None:
        self.user(n)
        member = m.ServerMember.objects.filter(server=self.server, user_disc_id=user_id(n)).exists()
        response = self.api.put(self.api_path(n, "privacy"), {"privacy_level": level}, content_type="application/json")
        # The API knows a user by a member snapshot (forget-me removes it) or by their memories.
        assert response.status_code == 200 or (response.status_code == 404 and not member), response.content

    @rule(n=PEOPLE, level=LEVELS)
    def privacy_by_slash_command(self, n: int, level: int) -> None:
        members.change_privacy(members.Member(user_id(n), f"user{n}", f"User {n}"), level)

    # ---- profile and names ----

    @rule(n=PEOPLE, nickname=st.sampled_from([None, "Momo", "Captain"]), pronouns=st.sampled_from([None, "she/her"]))
    def profile_by_action(self, n: int, nickname: str | None, pronouns: str | None) -> None:
        actions.update_profile(self.user(n), {"user_nickname": nickname, "pronouns": pronouns}, actor=TEST_ACTOR)

    @rule(n=PEOPLE, name=st.sampled_from(["renamed", "again"]))
    def rename_on_first_contact(self, n: int, name: str) -> None:
        actions.register_user(user_id(n), username=f"{name}{n}", global_name=name.title(), actor=TEST_ACTOR)

    # ---- blacklist: action, admin, API ----

    @rule(n=PEOPLE)
    def blacklist_by_action(self, n: int) -> None:
        actions.add_to_blacklist(self.server, user_id(n), actor=TEST_ACTOR)

    @rule(n=PEOPLE)
    def unblacklist_by_action(self, n: int) -> None:
        actions.remove_from_blacklist(self.server, user_id(n), actor=TEST_ACTOR)

    @rule(n=PEOPLE)
    def blacklist_by_admin(self, n: int) -> None:
        if m.PersonalizationBlacklist.objects.filter(server=self.server, user_disc_id=user_id(n)).exists():
            return  # the admin's add form refuses a second entry
        response = self.admin.post(
            "/admin/personas/personalizationblacklist/add/",
            {"server": self.server.pk, "user_disc_id": user_id(n), "reason": "test"},
        )
        assert response.status_code == 302

    @rule(n=PEOPLE)
    def unblacklist_by_admin(self, n: int) -> None:
        for entry in m.PersonalizationBlacklist.objects.filter(server=self.server, user_disc_id=user_id(n)):
            response = self.admin.post(f"/admin/personas/personalizationblacklist/{entry.pk}/delete/", {"post": "yes"})
            assert response.status_code == 302

    @rule(n=PEOPLE)
    def blacklist_by_api(self, n: int) -> None:
        response = self.api.post(
            f"/api/v1/servers/{self.server.server_id}/blacklist",
            {"user_disc_id": user_id(n), "reason": ""},
            content_type="application/json",
        )
        assert response.status_code == 201, response.content

    @rule(n=PEOPLE)
    def unblacklist_by_api(self, n: int) -> None:
        response = self.api.delete(f"/api/v1/servers/{self.server.server_id}/blacklist/{user_id(n)}")
        assert response.status_code in (204, 404), response.content

    # ---- forget-me, deletion, tools, retention ----

    @rule(n=PEOPLE, by_api=st.booleans())
    def forget_me(self, n: int, by_api: bool) -> None:
        if by_api:
            self.user(n)
            response = self.api.post(self.api_path(n, "forget"), {}, content_type="application/json")
            assert response.status_code in (200, 404), response.content
        else:
            forget_user(user_id(n), actor=TEST_ACTOR)

    @rule(n=PEOPLE)
    def delete_user_by_admin(self, n: int) -> None:
        response = self.admin.post(f"/admin/personas/discorduser/{self.user(n).pk}/delete/", {"post": "yes"})
        assert response.status_code == 302
        self.assemble(None)  # the next turn registers them again, before either side reads

    @rule(n=PEOPLE)
    def add_user_by_superuser(self, n: int) -> None:
        """The admin's add form saves through this action (its multi-fieldset form is not posted here)."""
        if not m.DiscordUser.objects.filter(user_disc_id=user_id(n)).exists():
            actions.add_user(m.DiscordUser(user_disc_id=user_id(n), username=f"added{n}"), actor=TEST_ACTOR)

    @rule(n=PEOPLE)
    def tool_call_remembers(self, n: int) -> None:
        # A refusal (a FULL or blacklisted subject) writes nothing, which is the point of the rule.
        with contextlib.suppress(tool_actions.ToolWriteRefused):
            tool_actions.learn_about_user(self.persona, user_id(n), "likes tea", username=f"user{n}", actor=TEST_ACTOR)

    @rule()
    def retention(self) -> None:
        prune_prompt_records()

    # ---- the property ----

    @invariant()
    def cached_turn_equals_fresh_turn(self) -> None:
        if not hasattr(self, "cache"):
            return
        cached = self.assemble(self.cache)
        assert cached == self.assemble(None)


def test_cached_turns_match_fresh_ones_under_every_write_path(monkeypatch: Any) -> None:
    monkeypatch.setattr(repository, "reads_are_committed", lambda: True)
    run_state_machine_as_test(
        CachedTurnsMatchFreshOnes,
        settings=settings(
            max_examples=20,
            stateful_step_count=10,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
        ),
    )


FULL, PARTIAL = int(m.PrivacyLevel.FULL), int(m.PrivacyLevel.PARTIAL)
# One write per path, each visible in the next prompt, after the writes that make it visible: a path
# that forgot its bump fails here whatever sequences the property above happened to draw.
CAPTAIN = ("profile_by_action", {"n": 2, "nickname": "Captain", "pronouns": "she/her"})
LISTED = ("blacklist_by_action", {"n": 2})
EVERY_WRITE_PATH: list[tuple[str, dict[str, Any], list[tuple[str, dict[str, Any]]]]] = [
    ("privacy_by_action", {"n": 2, "level": FULL}, []),
    ("privacy_by_admin", {"n": 2, "level": FULL}, []),
    ("privacy_by_api", {"n": 2, "level": FULL}, []),
    ("privacy_by_slash_command", {"n": 2, "level": PARTIAL}, []),
    (*CAPTAIN, []),
    ("rename_on_first_contact", {"n": 3, "name": "renamed"}, []),
    ("blacklist_by_action", {"n": 2}, []),
    ("blacklist_by_admin", {"n": 2}, []),
    ("blacklist_by_api", {"n": 2}, []),
    ("unblacklist_by_action", {"n": 2}, [LISTED]),
    ("unblacklist_by_admin", {"n": 2}, [LISTED]),
    ("unblacklist_by_api", {"n": 2}, [LISTED]),
    ("forget_me", {"n": 2, "by_api": False}, [CAPTAIN]),
    ("forget_me", {"n": 2, "by_api": True}, [CAPTAIN]),
    ("delete_user_by_admin", {"n": 3}, []),
    # Rows created for an id the cache holds as "no row" (user 3, gone from the server, deleted).
    ("rename_on_first_contact", {"n": 3, "name": "renamed"}, [("delete_user_by_admin", {"n": 3})]),
    ("add_user_by_superuser", {"n": 3}, [("delete_user_by_admin", {"n": 3})]),
    ("tool_call_remembers", {"n": 3}, [("delete_user_by_admin", {"n": 3})]),
]


@pytest.mark.parametrize(
    ("path", "args", "prelude"),
    EVERY_WRITE_PATH,
    ids=[f"{path}-{i}" for i, (path, _, _) in enumerate(EVERY_WRITE_PATH)],
)
def test_every_write_path_reaches_the_next_cached_turn(
    monkeypatch: Any, path: str, args: dict[str, Any], prelude: list[tuple[str, dict[str, Any]]]
) -> None:
    monkeypatch.setattr(repository, "reads_are_committed", lambda: True)
    machine = CachedTurnsMatchFreshOnes()
    try:
        machine.world()
        for step, step_args in prelude:
            getattr(machine, step)(**step_args)
        before = machine.assemble(machine.cache)
        getattr(machine, path)(**args)
        assert machine.assemble(None) != before  # the write shows in the prompt
        machine.cached_turn_equals_fresh_turn()
    finally:
        machine.teardown()
