"""Every personas admin page is per-server (issue 5 acceptance): bob, moderator of server B, sees none
of server A's rows, memories or users and gets a 404 for each of their object pages; alice, moderator
of A, sees A's; charlie (no staff account) is sent to the login page; the superuser sees both.

Server A's rows all carry the word "zephyr" and server B's the word "quokka", so a page of the other
moderator that mentions it has leaked something. The page tests run over every personas model in
``admin.site._registry``: a new admin fails here until it is scoped and given rows below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django import forms
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Model
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from personas.admin.scoping import ServerScopedAdminMixin
from personas.models import (
    GLOBAL_LINEAGE_ID,
    ApiToken,
    ConversationSummary,
    DeletedPersonalMemory,
    DeletedServerMemory,
    DiscordUser,
    Lorebook,
    MatrixChannelLink,
    Persona,
    PersonaAttribute,
    PersonaLineage,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaPreset,
    PersonaSampling,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    Server,
    ServerEmoji,
    ServerMember,
    ServerMemory,
    ServerModerator,
    ServerSettings,
    ServerSticker,
    ShortTermMemory,
    StatCounter,
    UserPersonaNamingPreference,
)
from tests.botplatform.changelists import CHANGELIST_MAX_QUERIES, CHANGELISTS
from tests.botplatform.conftest import settings_form

pytestmark = pytest.mark.django_db

A_MARK, B_MARK = "zephyr", "quokka"
# Principal (moderated servers) and the lineages of their personas: the fixed price of scoping a page.
SCOPING_QUERIES = 2


@dataclass
class Side:
    """One server and everything the admin shows of it."""

    server: Server
    persona: Persona
    user: DiscordUser  # a member of this server only, remembered by its persona
    rows: dict[str, Model]


@dataclass
class World:
    a: Side
    b: Side
    sam: DiscordUser  # a member of both servers, remembered by both personas and globally
    global_memory: PersonalMemory
    alice: Any
    bob: Any
    charlie: Any
    root: Any

    def client(self, who: str) -> Client:
        client = Client()
        client.force_login(getattr(self, who))
        return client


def deleted(proxy: type[Model], memory: Model) -> Model:
    """The audit trail's row of ``memory`` once deleted (what the deleted-memories pages list)."""
    pk = memory.pk
    memory.delete()
    return proxy._default_manager.get(**{memory._meta.pk.attname: pk, "history_type": "-"})


def build_side(mark: str, disc: int, moderator: Any) -> Side:
    server = Server.objects.create(server_disc_id=str(disc), name=f"{mark.title()} Hall")
    persona = Persona.objects.create(server=server, persona_nickname=f"{mark.title()}a", trigger_words=[mark])
    PersonaAttribute.objects.create(persona=persona, attribute_order=1, attribute_text=f"{mark} attribute")
    lineage = persona.persona_lineage_id
    user = DiscordUser.objects.create(user_disc_id=str(disc + 1), username=f"{mark}fan")
    soon = timezone.now() + timedelta(days=1)
    rows: dict[str, Model] = {
        "server": server,
        "persona": persona,
        "personalineage": PersonaLineage.objects.get(id=lineage),
        "discorduser": user,
        "personalmemory": PersonalMemory.objects.create(user=user, persona_lineage_id=lineage, content=f"{mark} tea"),
        "userpersonanamingpreference": UserPersonaNamingPreference.objects.create(
            user=user, persona_lineage_id=lineage, nickname_override=f"{mark} nick"
        ),
        "servermember": ServerMember.objects.create(
            server=server, user_disc_id=user.user_disc_id, display_name=f"{mark} member"
        ),
        "serveremoji": ServerEmoji.objects.create(
            server=server, emoji_disc_id=str(disc + 2), emoji_name=f"{mark}_wave"
        ),
        "serversticker": ServerSticker.objects.create(
            server=server, sticker_disc_id=str(disc + 3), sticker_name=f"{mark} sticker"
        ),
        "matrixchannellink": MatrixChannelLink.objects.create(
            server=server, channel_disc_id=str(disc + 4), matrix_room_id=f"!{mark}:example.org"
        ),
        "servermemory": ServerMemory.objects.create(
            server=server, persona=persona, persona_lineage_id=lineage, content=f"{mark} lounge rules"
        ),
        "statcounter": StatCounter.objects.create(
            server=server,
            user=user,
            persona_lineage_id=lineage,
            metric=f"{mark}_messages",
            bucket=timezone.now().date(),
        ),
        "reminder": Reminder.objects.create(
            server=server,
            persona=persona,
            channel_disc_id=str(disc + 5),
            user_discord_id=user.user_disc_id,
            reminder_purpose=f"{mark} plants",
            reminder_time=soon,
        ),
        "personalizationblacklist": PersonalizationBlacklist.objects.create(
            server=server, user_disc_id=str(disc + 6), reason=f"{mark} spam"
        ),
        "personauserblock": PersonaUserBlock.objects.create(
            server=server, persona=persona, user_disc_id=str(disc + 7), reason=f"{mark} flood", expires_at=soon
        ),
        "servermoderator": ServerModerator.objects.create(server=server, user=moderator),
        "lorebook": Lorebook.objects.create(server=server, persona=persona, name=f"{mark} lore"),
        "apitoken": ApiToken.issue(server, f"{mark} dashboard")[0],
        "shorttermmemory": ShortTermMemory.objects.create(
            server=server, persona=persona, channel_disc_id=str(disc + 8), content=f"{mark} note"
        ),
        "conversationsummary": ConversationSummary.objects.create(
            server=server, persona=persona, channel_disc_id=str(disc + 8), kind="summary", content=f"{mark} summary"
        ),
        "deletedpersonalmemory": deleted(
            DeletedPersonalMemory,
            PersonalMemory.objects.create(user=user, persona_lineage_id=lineage, content=f"{mark} forgotten tea"),
        ),
        "personasampling": PersonaSampling.objects.create(persona=persona, temperature=0.5),
        "personapreset": PersonaPreset.objects.create(persona=persona, name=f"{mark} preset.json"),
        "deletedservermemory": deleted(
            DeletedServerMemory,
            ServerMemory.objects.create(server=server, persona_lineage_id=lineage, content=f"{mark} old rule"),
        ),
    }
    return Side(server=server, persona=persona, user=user, rows=rows)


@pytest.fixture
def world() -> World:
    User = get_user_model()
    alice = User.objects.create_user("alice", password="pw-alice", is_staff=True)
    bob = User.objects.create_user("bob", password="pw-bob", is_staff=True)
    charlie = User.objects.create_user("charlie", password="pw-charlie")
    root = User.objects.create_superuser("root", password="pw-root")
    a, b = build_side(A_MARK, 7100, alice), build_side(B_MARK, 7200, bob)
    sam = DiscordUser.objects.create(user_disc_id="7300", username="sam")
    for side, mark in ((a, A_MARK), (b, B_MARK)):
        ServerMember.objects.create(server=side.server, user_disc_id=sam.user_disc_id)
        lineage = side.persona.persona_lineage_id
        PersonalMemory.objects.create(user=sam, persona_lineage_id=lineage, content=f"{mark} remembers sam")
        UserPersonaNamingPreference.objects.create(
            user=sam, persona_lineage_id=lineage, nickname_override=f"{mark}-sam"
        )
    global_memory = PersonalMemory.objects.create(
        user=sam, persona_lineage_id=GLOBAL_LINEAGE_ID, content="globally known: sam hums"
    )
    return World(a=a, b=b, sam=sam, global_memory=global_memory, alice=alice, bob=bob, charlie=charlie, root=root)


PERSONAS_ADMINS = sorted(m._meta.model_name for m in admin.site._registry if m._meta.app_label == "personas")


def changelist(name: str) -> str:
    return reverse(f"admin:personas_{name}_changelist")


def object_page(name: str, page: str, obj: Model) -> str:
    return reverse(f"admin:personas_{name}_{page}", args=[obj.pk])


def listed(client: Client, name: str) -> tuple[set[Any], str]:
    response = client.get(changelist(name))
    assert response.status_code == 200
    return {row.pk for row in response.context["cl"].result_list}, response.content.decode().lower()


def test_every_personas_admin_and_inline_is_scoped() -> None:
    """A new admin (or inline) without scoping fails here, and the page tests below need its rows."""
    registered = {m: a for m, a in admin.site._registry.items() if m._meta.app_label == "personas"}
    for model, model_admin in registered.items():
        assert isinstance(model_admin, ServerScopedAdminMixin), model
        for inline in model_admin.inlines:
            assert issubclass(inline, ServerScopedAdminMixin), inline
    sample = build_side("probe", 7900, get_user_model().objects.create_user("probe", is_staff=True))
    assert set(sample.rows) == {m._meta.model_name for m in registered}


@pytest.mark.parametrize("name", PERSONAS_ADMINS)
def test_moderator_of_b_lists_none_of_a_rows(world: World, name: str) -> None:
    rows, page = listed(world.client("bob"), name)
    assert world.b.rows[name].pk in rows
    assert world.a.rows[name].pk not in rows
    assert A_MARK not in page


@pytest.mark.parametrize("name", PERSONAS_ADMINS)
def test_moderator_of_a_lists_and_opens_a_rows_only(world: World, name: str) -> None:
    alice = world.client("alice")
    rows, page = listed(alice, name)
    assert world.a.rows[name].pk in rows
    assert world.b.rows[name].pk not in rows
    assert B_MARK not in page
    # The object page with its inlines (settings and personas of a server, attributes of a persona).
    response = alice.get(object_page(name, "change", world.a.rows[name]))
    assert response.status_code == 200
    assert B_MARK not in response.content.decode().lower()


@pytest.mark.parametrize("page", ["change", "history", "delete"])
@pytest.mark.parametrize("name", PERSONAS_ADMINS)
def test_moderator_of_b_gets_404_for_every_page_of_an_a_row(world: World, name: str, page: str) -> None:
    bob, row = world.client("bob"), world.a.rows[name]
    assert bob.get(object_page(name, page, row)).status_code == 404
    assert bob.post(object_page(name, page, row), {"post": "yes"}).status_code == 404
    assert type(row)._default_manager.filter(pk=row.pk).exists()


@pytest.mark.parametrize("name", PERSONAS_ADMINS)
def test_non_staff_is_sent_to_login(world: World, name: str) -> None:
    charlie = world.client("charlie")
    for url in (changelist(name), object_page(name, "change", world.a.rows[name])):
        response = charlie.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("admin:login"))


@pytest.mark.parametrize("name", PERSONAS_ADMINS)
def test_superuser_sees_both_servers(world: World, name: str) -> None:
    root = world.client("root")
    rows, _ = listed(root, name)
    assert {world.a.rows[name].pk, world.b.rows[name].pk} <= rows
    for side in (world.a, world.b):
        assert root.get(object_page(name, "change", side.rows[name])).status_code == 200


def test_staff_without_moderation_sees_no_personas_admin(world: World) -> None:
    dora = get_user_model().objects.create_user("dora", is_staff=True)
    client = Client()
    client.force_login(dora)
    assert client.get(changelist("personalmemory")).status_code == 403
    assert client.get(object_page("server", "change", world.a.server)).status_code == 404


def test_global_memories_are_the_superusers_alone(world: World) -> None:
    """Lineage 0 reaches every server's prompts and may come from any of them: no moderator owns it."""
    for who in ("alice", "bob"):
        rows, page = listed(world.client(who), "personalmemory")
        assert world.global_memory.pk not in rows
        assert "sam hums" not in page
        response = world.client(who).get(object_page("personalmemory", "change", world.global_memory))
        assert response.status_code == 404
    rows, _ = listed(world.client("root"), "personalmemory")
    assert world.global_memory.pk in rows


def add_memory(client: Client, user: DiscordUser, lineage: int, content: str = "likes cocoa"):  # type: ignore[no-untyped-def]
    url = reverse("admin:personas_personalmemory_add")
    return client.post(url, {"user": user.pk, "persona_lineage_id": lineage, "content": content, "tags": ""})


def test_moderator_adds_memories_only_in_their_lineages_for_their_users(world: World) -> None:
    bob, lineage_a, lineage_b = (
        world.client("bob"),
        world.a.persona.persona_lineage_id,
        world.b.persona.persona_lineage_id,
    )
    form = bob.get(reverse("admin:personas_personalmemory_add")).context["adminform"].form
    assert [value for value, _ in form.fields["persona_lineage_id"].choices] == ["", lineage_b]
    for user, lineage in [(world.b.user, lineage_a), (world.b.user, GLOBAL_LINEAGE_ID), (world.a.user, lineage_b)]:
        response = add_memory(bob, user, lineage, content="forged")
        assert response.status_code == 200
        assert "Select a valid choice" in response.content.decode()
    assert not PersonalMemory.objects.filter(content="forged").exists()
    assert add_memory(bob, world.b.user, lineage_b).status_code == 302
    assert PersonalMemory.objects.filter(
        user=world.b.user, persona_lineage_id=lineage_b, content="likes cocoa"
    ).exists()


def test_a_form_that_slips_past_the_choices_is_refused_on_save(world: World) -> None:
    """The save itself checks the scope, not only the choices offered."""
    request = RequestFactory().post("/")
    request.user = world.bob
    memory_admin = admin.site._registry[PersonalMemory]

    class Unchecked(forms.ModelForm):
        class Meta:
            model = PersonalMemory
            fields = ["user", "persona_lineage_id", "content", "tags"]

    data = {
        "user": world.sam.pk,
        "persona_lineage_id": world.a.persona.persona_lineage_id,
        "content": "x",
        "tags": "",
    }
    form = Unchecked(data)
    assert form.is_valid(), form.errors
    with pytest.raises(PermissionDenied):
        memory_admin.save_form(request, form, change=False)


def test_user_page_shows_only_the_moderators_lineages(world: World) -> None:
    bob = world.client("bob")
    response = bob.get(object_page("discorduser", "change", world.sam))
    page = response.content.decode()
    assert "quokka remembers sam" in page and "quokka-sam" in page
    assert A_MARK not in page.lower() and "sam hums" not in page
    # The per-lineage memory links neither: no link to A's lineage or to the global one.
    assert f"lineage={world.b.persona.persona_lineage_id}" in page
    assert f"lineage={world.a.persona.persona_lineage_id}" not in page and "lineage=0" not in page
    memories = next(f for f in response.context["inline_admin_formsets"] if f.formset.model is PersonalMemory)
    assert [m.content for m in memories.formset.queryset] == ["quokka remembers sam"]
    counts = {row.pk: row.memory_total for row in bob.get(changelist("discorduser")).context["cl"].result_list}
    assert counts[world.sam.pk] == 1
    lineage_filter = bob.get(changelist("personalmemory")).context["cl"].filter_specs
    choices = dict(next(f for f in lineage_filter if f.parameter_name == "lineage").lookup_choices)
    assert choices == {str(world.b.persona.persona_lineage_id): f"Quokkaa · {world.b.persona.persona_lineage_id}"}


def post_memory_inline(client: Client, user: DiscordUser, memory: PersonalMemory, content: str):  # type: ignore[no-untyped-def]
    url = object_page("discorduser", "change", user)
    form = client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "physical_appearance_tags"}
    data.update(
        {
            "physical_appearance_tags": "",
            "personal_memories-TOTAL_FORMS": 1,
            "personal_memories-INITIAL_FORMS": 1,
            "personal_memories-0-personal_memory_id": memory.pk,
            "personal_memories-0-user": user.pk,
            "personal_memories-0-content": content,
            "personal_memories-0-tags": "",
            "naming_preferences-TOTAL_FORMS": 0,
            "naming_preferences-INITIAL_FORMS": 0,
        }
    )
    return client.post(url, data)


def test_user_page_inline_edits_only_the_moderators_lineages(world: World) -> None:
    bob = world.client("bob")
    own = PersonalMemory.objects.get(content="quokka remembers sam")
    assert post_memory_inline(bob, world.sam, own, "quokka remembers sam hums").status_code == 302
    own.refresh_from_db()
    assert own.content == "quokka remembers sam hums"

    theirs = PersonalMemory.objects.get(content="zephyr remembers sam")
    # Not a row of the inline's (scoped) queryset: Django treats it as a new row, which this inline never adds.
    refused = post_memory_inline(bob, world.sam, theirs, "overwritten")
    assert refused.status_code == 200
    theirs.refresh_from_db()
    assert theirs.content == "zephyr remembers sam"
    assert not PersonalMemory.objects.filter(content="overwritten").exists()


def test_actions_reach_only_the_users_the_moderator_sees(world: World) -> None:
    bob, url = world.client("bob"), changelist("discorduser")
    both = [world.a.user.pk, world.b.user.pk]
    bob.post(url, {"action": "set_privacy_full", "_selected_action": both})
    levels = dict(DiscordUser.objects.filter(pk__in=both).values_list("pk", "privacy_level"))
    assert levels == {world.a.user.pk: PrivacyLevel.MINIMAL, world.b.user.pk: PrivacyLevel.FULL}

    bob.post(url, {"action": "forget_users", "_selected_action": both, "confirm": "yes"})
    assert PersonalMemory.objects.filter(user=world.a.user).exists()
    assert not PersonalMemory.objects.filter(user=world.b.user).exists()


def test_moderator_cannot_delete_a_user_of_every_server(world: World) -> None:
    """Deleting a Discord user would take other servers' memories along: moderators forget instead."""
    bob = world.client("bob")
    assert bob.get(object_page("discorduser", "delete", world.b.user)).status_code == 403
    assert bob.get(reverse("admin:personas_discorduser_add")).status_code == 403
    assert world.client("root").get(object_page("discorduser", "delete", world.b.user)).status_code == 200


def persona_form(server: Server, nickname: str, lineage: int | str) -> dict[str, Any]:
    return {
        "server": server.pk,
        "persona_nickname": nickname,
        "is_alter": "on",
        "persona_lineage_id": lineage,
        "trigger_words": "",
        "sample_dialogue": "",
        "physical_appearance_tags": "",
        "naming_prefixes": "",
        "naming_suffixes": "",
        "naming_address_terms": "",
        "attributes-TOTAL_FORMS": 0,
        "attributes-INITIAL_FORMS": 0,
    }


def test_new_persona_cannot_take_another_servers_lineage(world: World) -> None:
    """Sharing A's lineage would hand B's moderator (and B's prompts) A's memories."""
    bob, url = world.client("bob"), reverse("admin:personas_persona_add")
    response = bob.post(url, persona_form(world.b.server, "Copycat", world.a.persona.persona_lineage_id))
    assert response.status_code == 200
    assert not Persona.objects.filter(persona_nickname="Copycat").exists()
    assert bob.post(url, persona_form(world.b.server, "Fresh", "")).status_code == 302
    fresh = Persona.objects.get(persona_nickname="Fresh")
    assert fresh.persona_lineage_id not in {world.a.persona.persona_lineage_id, world.b.persona.persona_lineage_id}


def test_related_choices_are_the_moderators_own(world: World) -> None:
    bob = world.client("bob")
    memory = {"server": world.b.server.pk, "persona": world.a.persona.pk, "persona_lineage_id": 0, "content": "x"}
    assert bob.post(reverse("admin:personas_servermemory_add"), {**memory, "tags": ""}).status_code == 200
    block = {
        "server": world.a.server.pk,
        "persona": world.a.persona.pk,
        "user_disc_id": "1",
        "block_type": "mute",
        "reason": "x",
        "expires_at_0": "2030-01-01",
        "expires_at_1": "00:00:00",
    }
    assert bob.post(reverse("admin:personas_personauserblock_add"), block).status_code == 200
    assert not ServerMemory.objects.filter(content="x").exists()
    assert not PersonaUserBlock.objects.filter(user_disc_id="1").exists()
    autocomplete = bob.get(
        reverse("admin:autocomplete"),
        {"app_label": "personas", "model_name": "personalmemory", "field_name": "user", "term": ""},
    )
    assert {int(r["id"]) for r in autocomplete.json()["results"]} == {world.b.user.pk, world.sam.pk}


def test_a_user_id_typed_into_the_add_url_names_nobody_outside(world: World) -> None:
    bob, url = world.client("bob"), reverse("admin:personas_personalmemory_add")
    assert "zephyrfan" not in bob.get(url, {"user": world.a.user.pk}).content.decode()
    assert "quokkafan" in bob.get(url, {"user": world.b.user.pk}).content.decode()


def test_server_add_and_delete_are_for_superusers(world: World) -> None:
    bob = world.client("bob")
    assert bob.get(reverse("admin:personas_server_add")).status_code == 403
    assert bob.get(object_page("server", "delete", world.b.server)).status_code == 403
    assert bob.get(object_page("server", "change", world.b.server)).status_code == 200


@pytest.mark.parametrize("rows", [1, 200])
@pytest.mark.parametrize("model", sorted(CHANGELISTS))
def test_moderator_changelist_costs_constant_queries(
    django_assert_max_num_queries: Callable[..., Any], main_persona: Persona, model: str, rows: int
) -> None:
    alice = get_user_model().objects.create_user("alice", is_staff=True)
    ServerModerator.objects.create(server=main_persona.server, user=alice)
    CHANGELISTS[model](rows, main_persona.server, main_persona)
    client = Client()
    client.force_login(alice)
    with django_assert_max_num_queries(CHANGELIST_MAX_QUERIES + SCOPING_QUERIES):
        response = client.get(changelist(model))
    assert response.status_code == 200
    # alice moderates one of the servers built, and half the built memories are global (lineage 0).
    visible = {"server": 1, "personalmemory": (rows + 1) // 2}.get(model, rows)
    assert response.context["cl"].result_count == visible


def test_a_shared_lineage_is_labelled_with_the_readers_personas_only(world: World) -> None:
    """A copy of B's character in A shares B's memories, so both moderators see them (the memories reach
    both prompts); each moderator's labels name only their own servers' personas."""
    lineage = world.b.persona.persona_lineage_id
    Persona.objects.create(server=world.a.server, persona_nickname="Copy", is_alter=True, persona_lineage_id=lineage)
    for who, own, other in (
        ("bob", "Quokkaa", "Zephyr Hall"),
        ("alice", "Copy", "Quokka Hall"),
    ):
        client = world.client(who)
        response = client.get(changelist("personalmemory"))
        assert world.b.rows["personalmemory"].pk in {row.pk for row in response.context["cl"].result_list}
        lineage_filter = next(f for f in response.context["cl"].filter_specs if f.parameter_name == "lineage")
        assert dict(lineage_filter.lookup_choices)[str(lineage)] == f"{own} · {lineage}"
        user_page = client.get(object_page("discorduser", "change", world.sam)).content.decode()
        assert f"{own} · {lineage}" in user_page and other not in user_page


APPROVED = {"local": {"base_url": "http://10.0.0.5:8080/v1", "api_key": "sk-approved-local", "model": "llama"}}


def test_a_moderators_settings_form_has_no_endpoint_or_key_fields(world: World, settings: Any) -> None:
    settings.LLM_APPROVED_ENDPOINTS = APPROVED
    server = world.a.server
    ServerSettings.objects.filter(server=server).update(llm_base_url="http://own.example/v1", llm_api_key="sk-own-a")
    page = world.client("alice").get(object_page("server", "change", server)).content.decode()
    for field in ("llm_base_url", "llm_api_key", "clear_llm_api_key", "llm_model"):
        assert f'name="settings-0-{field}"' not in page
    assert '<select name="settings-0-llm_endpoint"' in page and '<option value="local">local</option>' in page
    assert "set by a platform administrator" in page  # that the server has one, not what it is
    for secret in ("sk-own-a", "http://own.example/v1", "sk-approved-local", "10.0.0.5"):
        assert secret not in page


def test_a_moderator_cannot_point_the_server_at_an_endpoint_or_set_a_key(world: World, settings: Any) -> None:
    settings.LLM_APPROVED_ENDPOINTS = APPROVED
    server = world.a.server
    client = world.client("alice")
    forged = settings_form(
        server, llm_endpoint="local", llm_base_url="http://evil.example/v1", llm_api_key="sk-evil", llm_model="x"
    )
    response = client.post(object_page("server", "change", server), forged)
    assert response.status_code == 302, response.context["errors"]
    stored = ServerSettings.objects.get(server=server)
    assert (stored.llm_endpoint, stored.llm_base_url, stored.llm_api_key, stored.llm_model) == ("local", "", "", "")

    unknown = client.post(object_page("server", "change", server), settings_form(server, llm_endpoint="elsewhere"))
    assert unknown.status_code == 200
    assert ServerSettings.objects.get(server=server).llm_endpoint == "local"


def test_moderator_configures_their_server_through_the_settings_inline(world: World) -> None:
    server = world.a.server
    data = settings_form(server)
    response = world.client("alice").post(object_page("server", "change", server), data)
    assert response.status_code == 302, response.context["errors"]
    server.settings.refresh_from_db()
    assert server.settings.retention_days == 9
    assert world.client("bob").post(object_page("server", "change", server), data).status_code == 404
