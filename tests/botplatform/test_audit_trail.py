"""The audit trail (issue 16 item 3): every write records old and new values with who made it (the
admin, an API token, a member's slash command), a moderator sees the history of their own servers'
objects only, a deleted memory is restored from the admin through its action, and forget-me leaves
no version of the user's text behind."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from bot.discord.exts.members import Member, change_privacy, forget_memory
from chatcontext.core.types import PersonaInfo
from community import retention
from community.forget import forget_user
from personas import actions
from personas.models import (
    ActorKind,
    ApiToken,
    DeletedPersonalMemory,
    DiscordUser,
    Persona,
    PersonalMemory,
    PrivacyLevel,
    Server,
    ServerMember,
    ServerMemory,
    ServerModerator,
    ServerSettings,
)
from tests.actors import TEST_ACTOR

pytestmark = pytest.mark.django_db


def _side(disc: int, moderator: Any) -> tuple[Server, Persona, DiscordUser]:
    server = Server.objects.create(server_disc_id=str(disc), name=f"Hall {disc}")
    persona = Persona.objects.create(server=server, persona_nickname=f"P{disc}", trigger_words=[f"p{disc}"])
    user = DiscordUser.objects.create(user_disc_id=str(disc + 1), username=f"fan{disc}")
    ServerMember.objects.create(server=server, user_disc_id=user.user_disc_id)
    ServerModerator.objects.create(server=server, user=moderator)
    return server, persona, user


@pytest.fixture
def world() -> dict[str, Any]:
    User = get_user_model()
    alice = User.objects.create_user("alice", password="pw", is_staff=True)
    bob = User.objects.create_user("bob", password="pw", is_staff=True)
    a, b = _side(8100, alice), _side(8200, bob)
    return {"alice": alice, "bob": bob, "a": a, "b": b}


def _client(account: Any) -> Client:
    client = Client()
    client.force_login(account)
    return client


def _last(model: Any, **lookup: Any) -> Any:
    return model.history.filter(**lookup).order_by("-history_date", "-history_id").first()


def test_admin_edit_records_the_account_and_old_and_new_text(world: dict[str, Any]) -> None:
    _, persona, user = world["a"]
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "likes tea", actor=TEST_ACTOR)
    url = reverse("admin:personas_personalmemory_change", args=[memory.pk])
    response = _client(world["alice"]).post(url, {"content": "likes green tea", "tags": ""})
    assert response.status_code == 302
    versions = list(PersonalMemory.history.filter(personal_memory_id=memory.pk).order_by("history_date"))
    assert [v.content for v in versions] == ["likes tea", "likes green tea"]
    assert (versions[0].actor_kind, versions[0].actor) == (ActorKind.SYSTEM, "system: test")
    assert (versions[1].actor_kind, versions[1].history_user) == (ActorKind.ADMIN, world["alice"])


def test_api_token_write_records_the_token(world: dict[str, Any]) -> None:
    server, persona, user = world["a"]
    token, raw = ApiToken.issue(server, "dash", ApiToken.Scope.READ_WRITE)
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "plays chess", actor=TEST_ACTOR)
    response = Client().patch(
        f"/api/v1/servers/{server.pk}/memories/{memory.pk}",
        {"content": "plays go"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 200
    version = _last(PersonalMemory, personal_memory_id=memory.pk)
    assert (version.content, version.actor_kind, version.actor) == ("plays go", ActorKind.API, f"API token #{token.pk}")
    assert version.history_user is None


def test_slash_commands_record_the_member(world: dict[str, Any]) -> None:
    _, persona, user = world["a"]
    member = Member(user.user_disc_id, user.username, None)
    change_privacy(member, PrivacyLevel.PARTIAL)
    version = _last(DiscordUser, user_id=user.pk)
    assert (version.privacy_level, version.actor_kind) == (PrivacyLevel.PARTIAL, ActorKind.SLASH_COMMAND)
    assert version.actor == f"slash command by Discord user {user.user_disc_id}"
    assert list(DiscordUser.history.filter(user_id=user.pk).values_list("privacy_level", flat=True)) == [
        PrivacyLevel.PARTIAL,
        PrivacyLevel.MINIMAL,
    ]
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "draws", actor=TEST_ACTOR)
    info = PersonaInfo(
        persona_id=persona.pk, persona_nickname=persona.persona_nickname, persona_lineage_id=persona.persona_lineage_id
    )
    forget_memory(member, info, memory.pk)
    deleted = _last(PersonalMemory, personal_memory_id=memory.pk)
    assert (deleted.history_type, deleted.actor_kind, deleted.content) == ("-", ActorKind.SLASH_COMMAND, "draws")


def _restore(client: Client, version: Any) -> Any:
    url = reverse("admin:personas_deletedpersonalmemory_changelist")
    return client.post(url, {"action": "restore_memories", ACTION_CHECKBOX_NAME: [version.pk]}, follow=True)


def test_a_deleted_memory_is_restored_from_the_admin(world: dict[str, Any]) -> None:
    _, persona, user = world["a"]
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "owns a cat", ["pets"], actor=TEST_ACTOR)
    alice = _client(world["alice"])
    assert alice.post(reverse("admin:personas_personalmemory_delete", args=[memory.pk]), {"post": "yes"}).status_code
    assert not PersonalMemory.objects.filter(pk=memory.pk).exists()
    listed = alice.get(reverse("admin:personas_deletedpersonalmemory_changelist"))
    [version] = listed.context["cl"].result_list
    assert version.content == "owns a cat"

    response = _restore(alice, version)
    assert "Restored 1 memory." in response.content.decode()
    restored = PersonalMemory.objects.get(pk=memory.pk)
    assert (restored.content, restored.tags, restored.user) == ("owns a cat", ["pets"], user)
    assert _last(PersonalMemory, personal_memory_id=memory.pk).history_user == world["alice"]
    # Restored, it is no longer listed as deleted.
    listed = alice.get(reverse("admin:personas_deletedpersonalmemory_changelist"))
    assert list(listed.context["cl"].result_list) == []


def test_deleted_memory_versions_cannot_be_added_edited_or_deleted_by_a_moderator(world: dict[str, Any]) -> None:
    """The lists of deleted memories are read-only for everyone, moderators included (their scoping
    mixin lets them change live rows of their server, not versions in the audit trail)."""
    _, persona, user = world["a"]
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "owns a cat", actor=TEST_ACTOR)
    actions.delete_personal_memory(memory, actor=TEST_ACTOR)
    alice = _client(world["alice"])
    for name in ("deletedpersonalmemory", "deletedservermemory"):
        listed = alice.get(reverse(f"admin:personas_{name}_changelist"))
        assert listed.status_code == 200 and not listed.context["has_add_permission"]
        assert alice.get(reverse(f"admin:personas_{name}_add")).status_code == 403
    [version] = alice.get(reverse("admin:personas_deletedpersonalmemory_changelist")).context["cl"].result_list
    change = alice.get(reverse("admin:personas_deletedpersonalmemory_change", args=[version.pk]))
    assert change.status_code == 200 and not change.context["has_change_permission"]
    assert (
        alice.post(
            reverse("admin:personas_deletedpersonalmemory_delete", args=[version.pk]), {"post": "yes"}
        ).status_code
        == 403
    )


def test_restoring_rechecks_the_limit(world: dict[str, Any], settings: Any) -> None:
    settings.TOMORI = {**settings.TOMORI, "MAX_PERSONAL_MEMORIES": 1}
    _, persona, user = world["a"]
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "first", actor=TEST_ACTOR)
    actions.delete_personal_memory(memory, actor=TEST_ACTOR)
    actions.add_personal_memory(user, persona.persona_lineage_id, "second", actor=TEST_ACTOR)
    version = DeletedPersonalMemory.objects.get(personal_memory_id=memory.pk, history_type="-")
    response = _restore(_client(world["alice"]), version)
    assert "Not restored: This user already has 1 memories" in response.content.decode()
    assert not PersonalMemory.objects.filter(pk=memory.pk).exists()


def test_history_pages_are_scoped_like_their_objects(world: dict[str, Any]) -> None:
    _, persona, user = world["a"]
    live = actions.add_personal_memory(user, persona.persona_lineage_id, "zephyr live", actor=TEST_ACTOR)
    gone = actions.add_personal_memory(user, persona.persona_lineage_id, "zephyr gone", actor=TEST_ACTOR)
    actions.delete_personal_memory(gone, actor=TEST_ACTOR)
    alice, bob = _client(world["alice"]), _client(world["bob"])
    for memory in (live, gone):
        url = reverse("admin:personas_personalmemory_history", args=[memory.pk])
        assert alice.get(url).status_code == 200
        assert bob.get(url).status_code == 404
        version = _last(PersonalMemory, personal_memory_id=memory.pk)
        form = reverse("admin:personas_personalmemory_simple_history", args=[memory.pk, version.history_id])
        assert bob.get(form).status_code == 404
        assert bob.post(form, {"content": "quokka"}).status_code == 404
    # A deleted memory is not reverted from its history page (its restore re-checks the rules).
    version = _last(PersonalMemory, personal_memory_id=gone.pk)
    form = reverse("admin:personas_personalmemory_simple_history", args=[gone.pk, version.history_id])
    assert alice.post(form, {"content": "zephyr gone"}).status_code == 403
    deleted = bob.get(reverse("admin:personas_deletedpersonalmemory_changelist"))
    assert "zephyr" not in deleted.content.decode()


def test_forget_me_deletes_the_users_history_rows(world: dict[str, Any]) -> None:
    server, persona, user = world["a"]
    _, _, other = world["b"]
    memory = actions.add_personal_memory(user, persona.persona_lineage_id, "secret hobby", actor=TEST_ACTOR)
    actions.update_personal_memory(memory, content="secret hobby, again", actor=TEST_ACTOR)
    actions.add_server_memory(server, persona.persona_lineage_id, "taught by fan", user=user, actor=TEST_ACTOR)
    actions.update_profile(user, {"user_nickname": "Secret Name", "pronouns": "they"}, actor=TEST_ACTOR)
    kept = actions.add_personal_memory(other, 0, "someone else", actor=TEST_ACTOR)
    assert PersonalMemory.history.filter(user_id=user.pk).exists()

    forget_user(user.user_disc_id, actor=TEST_ACTOR)

    assert not PersonalMemory.history.filter(user_id=user.pk).exists()
    assert not ServerMemory.history.filter(user_id=user.pk).exists()
    assert not DiscordUser.history.filter(user_id=user.pk).exists()
    assert PersonalMemory.history.filter(personal_memory_id=kept.pk).exists()
    texts = [*PersonalMemory.history.values_list("content", flat=True)]
    texts += [*DiscordUser.history.values_list("user_nickname", flat=True)]
    assert not any("secret" in (t or "").lower() for t in texts)


def test_retention_prunes_history_only_when_configured(world: dict[str, Any], settings: Any) -> None:
    _, persona, user = world["a"]
    actions.add_personal_memory(user, persona.persona_lineage_id, "old news", actor=TEST_ACTOR)
    later = timezone.now() + timedelta(days=40)
    assert retention.prune_history(now=later) == 0
    settings.TOMORI = {**settings.TOMORI, "AUDIT_HISTORY_DAYS": 30}
    assert retention.prune_history(now=timezone.now()) == 0
    assert retention.prune_history(now=later) >= 1
    assert not PersonalMemory.history.exists()


def test_a_servers_settings_history_shows_each_change_and_is_scoped(world: dict[str, Any]) -> None:
    """Server settings are an inline with no history page of their own: the server page links one,
    listing every version with the old and new value, and a moderator of another server gets 404."""
    server, _, _ = world["a"]
    with actions.recording(TEST_ACTOR):
        row, _ = ServerSettings.objects.get_or_create(server=server)
        row.message_fetch_limit = 37
        row.save()
    alice, bob = _client(world["alice"]), _client(world["bob"])
    url = reverse("admin:personas_server_settings_history", args=[server.pk])
    assert url in alice.get(reverse("admin:personas_server_change", args=[server.pk])).content.decode()
    page = alice.get(url)
    assert page.status_code == 200
    [latest, *_] = page.context["rows"]
    assert ("message_fetch_limit", row.history.earliest().message_fetch_limit, 37) in latest["changes"]
    assert "llm_api_key" not in page.content.decode()
    assert bob.get(url).status_code == 404
