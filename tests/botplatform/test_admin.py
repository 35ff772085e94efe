"""Moderator admin: constant query cost per changelist page, lineage filter, and actions wired to personas.actions."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from chatcontext.models import VoiceTranscript
from personas.models import (
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PrivacyLevel,
    Reminder,
    Server,
    ServerMemory,
    ServerSettings,
)
from tests.botplatform.changelists import CHANGELIST_MAX_QUERIES, CHANGELISTS, _personal_memories, _reminders
from tests.botplatform.conftest import settings_form

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("rows", [1, 200])
@pytest.mark.parametrize("model", sorted(CHANGELISTS))
def test_changelist_costs_constant_queries_at_1_and_200_rows(
    admin_client: Client, django_assert_max_num_queries, main_persona: Persona, model: str, rows: int
) -> None:
    CHANGELISTS[model](rows, main_persona.server, main_persona)
    url = reverse(f"admin:personas_{model}_changelist")
    with django_assert_max_num_queries(CHANGELIST_MAX_QUERIES):
        response = admin_client.get(url)
    assert response.status_code == 200
    assert response.context["cl"].result_count >= rows


@pytest.mark.parametrize("rows", [1, 200])
def test_filtered_and_searched_memory_changelist_stays_bounded(
    admin_client: Client, django_assert_max_num_queries, main_persona: Persona, rows: int
) -> None:
    _personal_memories(rows, main_persona.server, main_persona)
    url = reverse("admin:personas_personalmemory_changelist")
    params = {"lineage": main_persona.persona_lineage_id, "q": "memory", "user__privacy_level__exact": 0}
    with django_assert_max_num_queries(CHANGELIST_MAX_QUERIES):
        response = admin_client.get(url, params)
    assert response.status_code == 200
    shown = {m.persona_lineage_id for m in response.context["cl"].result_list}
    assert shown == {main_persona.persona_lineage_id}


def test_lineage_filter_offers_the_lineages_present_with_persona_names(
    admin_client: Client, main_persona: Persona, user: DiscordUser
) -> None:
    alter = Persona.objects.create(server=main_persona.server, persona_nickname="Pip", is_alter=True)
    PersonalMemory.objects.create(user=user, persona_lineage_id=GLOBAL_LINEAGE_ID, content="tea")
    PersonalMemory.objects.create(user=user, persona_lineage_id=main_persona.persona_lineage_id, content="exam")
    response = admin_client.get(reverse("admin:personas_personalmemory_changelist"))
    lineage_filter = next(f for f in response.context["cl"].filter_specs if f.parameter_name == "lineage")
    choices = dict(lineage_filter.lookup_choices)
    assert choices == {
        "0": "global (every persona) · 0",
        str(main_persona.persona_lineage_id): f"Tomori · {main_persona.persona_lineage_id}",
    }
    assert str(alter.persona_lineage_id) not in choices


def test_memory_add_form_refuses_past_the_limit(
    admin_client: Client, settings, main_persona: Persona, user: DiscordUser
) -> None:
    settings.TOMORI = {**settings.TOMORI, "MAX_PERSONAL_MEMORIES": 1}
    PersonalMemory.objects.create(user=user, persona_lineage_id=GLOBAL_LINEAGE_ID, content="tea")
    response = admin_client.post(
        reverse("admin:personas_personalmemory_add"),
        {"user": user.pk, "persona_lineage_id": main_persona.persona_lineage_id, "content": "one more", "tags": ""},
    )
    assert response.status_code == 200
    assert "already has 1 memories" in response.content.decode()
    assert PersonalMemory.objects.filter(user=user).count() == 1


def test_memory_add_form_goes_through_the_action(admin_client: Client, user: DiscordUser) -> None:
    response = admin_client.post(
        reverse("admin:personas_personalmemory_add"),
        {"user": user.pk, "persona_lineage_id": 0, "content": "  likes tea  ", "tags": "drinks,  drinks "},
    )
    assert response.status_code == 302
    memory = PersonalMemory.objects.get(user=user)
    assert (memory.content, memory.tags) == ("likes tea", ["drinks"])


def test_memory_add_form_refuses_unassigned_lineage(admin_client: Client, user: DiscordUser) -> None:
    response = admin_client.post(
        reverse("admin:personas_personalmemory_add"),
        {"user": user.pk, "persona_lineage_id": 42, "content": "x", "tags": ""},
    )
    assert response.status_code == 200
    assert not PersonalMemory.objects.exists()


@pytest.mark.parametrize("lineage", [42, 99999])
def test_memory_add_form_shows_an_unknown_lineage_next_to_the_field(
    admin_client: Client, main_persona: Persona, user: DiscordUser, lineage: int
) -> None:
    """Issue 13 item 10: a superuser's integer field took 99999, which no persona holds."""
    response = admin_client.post(
        reverse("admin:personas_personalmemory_add"),
        {"user": user.pk, "persona_lineage_id": lineage, "content": "x", "tags": ""},
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert list(errors) == ["persona_lineage_id"] and str(lineage) in errors["persona_lineage_id"][0]
    assert not PersonalMemory.objects.exists()


def test_server_memory_add_form_refuses_a_lineage_of_no_persona_of_the_server(
    admin_client: Client, main_persona: Persona, make_server, user: DiscordUser
) -> None:
    other = Persona.objects.create(server=make_server(), persona_nickname="Pip")
    url = reverse("admin:personas_servermemory_add")
    form = {"server": main_persona.server.pk, "content": " the cafe opens at 9 ", "tags": "", "user": user.pk}
    for lineage in (99999, other.persona_lineage_id):
        response = admin_client.post(url, {**form, "persona_lineage_id": lineage})
        assert response.status_code == 200
        assert list(response.context["adminform"].form.errors) == ["persona_lineage_id"]
    assert not ServerMemory.objects.exists()
    assert admin_client.post(url, {**form, "persona_lineage_id": main_persona.persona_lineage_id}).status_code == 302
    memory = ServerMemory.objects.get()
    assert (memory.content, memory.user, memory.persona_lineage_id) == (
        "the cafe opens at 9",
        user,
        main_persona.persona_lineage_id,
    )


def test_forget_action_asks_for_confirmation_then_forgets(
    admin_client: Client, main_persona: Persona, user: DiscordUser
) -> None:
    PersonalMemory.objects.create(user=user, persona_lineage_id=GLOBAL_LINEAGE_ID, content="tea")
    url = reverse("admin:personas_discorduser_changelist")
    data = {"action": "forget_users", "_selected_action": [user.pk]}
    confirm = admin_client.post(url, data)
    assert confirm.status_code == 200
    assert f"Forget {user}?" in confirm.content.decode()
    assert PersonalMemory.objects.filter(user=user).exists()
    done = admin_client.post(url, {**data, "confirm": "yes"}, follow=True)
    assert f"Forgot {user}: 1 personal memories" in done.content.decode()
    assert not PersonalMemory.objects.filter(user=user).exists()


def test_privacy_level_actions(admin_client: Client, make_user) -> None:
    a, b = make_user(), make_user(privacy_level=PrivacyLevel.PARTIAL)
    admin_client.post(
        reverse("admin:personas_discorduser_changelist"),
        {"action": "set_privacy_full", "_selected_action": [a.pk, b.pk]},
    )
    assert set(DiscordUser.objects.filter(pk__in=[a.pk, b.pk]).values_list("privacy_level", flat=True)) == {
        PrivacyLevel.FULL
    }


def test_cancel_reminders_action_leaves_fired_ones(admin_client: Client, make_reminder) -> None:
    pending = make_reminder()
    fired = make_reminder(status=Reminder.Status.FIRED)
    admin_client.post(
        reverse("admin:personas_reminder_changelist"),
        {"action": "cancel_reminders", "_selected_action": [pending.pk, fired.pk]},
    )
    pending.refresh_from_db()
    fired.refresh_from_db()
    assert (pending.status, fired.status) == (Reminder.Status.CANCELLED, Reminder.Status.FIRED)


def test_a_reminder_no_bot_confirmed_shows_failed_with_its_reason(admin_client: Client, make_reminder) -> None:
    """Issue 13 item 6: the moderator sees why (list column and filter, change page) and can retry it."""
    reason = "no bot process took it within 1 minute (is the bot running?)"
    failed = make_reminder(status=Reminder.Status.FAILED, delivery_retry_count=4, last_error=reason)
    make_reminder(reminder_purpose="on its way", status=Reminder.Status.CLAIMED)
    changelist = reverse("admin:personas_reminder_changelist")

    listed = admin_client.get(changelist, {"status__exact": "failed"})
    assert [r.pk for r in listed.context["cl"].result_list] == [failed.pk]
    assert f"failed after 4 attempts: {reason}" in listed.content.decode()
    page = admin_client.get(reverse("admin:personas_reminder_change", args=[failed.pk])).content.decode()
    assert reason in page
    assert 'name="status"' not in page and 'name="last_error"' not in page  # shown, not edited by hand

    admin_client.post(changelist, {"action": "retry_reminders", "_selected_action": [failed.pk]})
    failed.refresh_from_db()
    assert (failed.status, failed.delivery_retry_count, failed.last_error, failed.next_attempt_at) == (
        Reminder.Status.PENDING,
        0,
        "",
        None,
    )


def test_the_admin_refuses_a_reminder_purpose_over_the_limit(admin_client: Client, make_reminder, settings) -> None:
    """Issue 26 item 7: the admin form shows the same limit the tool refuses with."""
    settings.TOMORI = {**settings.TOMORI, "MAX_REMINDER_PURPOSE_LENGTH": 20}
    reminder = make_reminder()
    url = reverse("admin:personas_reminder_change", args=[reminder.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None}
    data["reminder_time_0"], data["reminder_time_1"] = reminder.reminder_time.strftime("%Y-%m-%d %H:%M:%S").split()
    data["reminder_purpose"] = "x" * 21

    response = admin_client.post(url, data)

    assert response.status_code == 200
    assert "at most 20 characters (this one has 21)" in response.content.decode()
    reminder.refresh_from_db()
    assert reminder.reminder_purpose == "water the plants"
    data["reminder_purpose"] = "x" * 20
    assert admin_client.post(url, data).status_code == 302
    reminder.refresh_from_db()
    assert reminder.reminder_purpose == "x" * 20


@pytest.mark.parametrize(("kind", "expected"), [("human", {"task 1"}), ("self", {"task 0", "task 2"})])
def test_reminder_kind_filter_separates_self_tasks(
    admin_client: Client, main_persona: Persona, kind: str, expected: set[str]
) -> None:
    _reminders(3, main_persona.server, main_persona)
    response = admin_client.get(reverse("admin:personas_reminder_changelist"), {"kind": kind})
    assert {r.reminder_purpose for r in response.context["cl"].result_list} == expected


def test_change_pages_render(admin_client: Client, main_persona: Persona, user: DiscordUser) -> None:
    PersonalMemory.objects.create(user=user, persona_lineage_id=main_persona.persona_lineage_id, content="exam")
    for name, pk in [
        ("discorduser", user.pk),
        ("server", main_persona.server.pk),
        ("persona", main_persona.pk),
    ]:
        assert admin_client.get(reverse(f"admin:personas_{name}_change", args=[pk])).status_code == 200
    for name in ["discorduser", "server", "persona", "personalmemory", "reminder", "personauserblock"]:
        assert admin_client.get(reverse(f"admin:personas_{name}_add")).status_code == 200


def test_user_change_form_saves_privacy_through_the_action(admin_client: Client, user: DiscordUser) -> None:
    url = reverse("admin:personas_discorduser_change", args=[user.pk])
    form = admin_client.get(url).context["adminform"].form
    data = {k: v for k, v in form.initial.items() if v is not None and k != "physical_appearance_tags"}
    data.update(
        {
            "privacy_level": PrivacyLevel.FULL,
            "physical_appearance_tags": "",
            "personal_memories-TOTAL_FORMS": 0,
            "personal_memories-INITIAL_FORMS": 0,
            "naming_preferences-TOTAL_FORMS": 0,
            "naming_preferences-INITIAL_FORMS": 0,
        }
    )
    response = admin_client.post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    user.refresh_from_db()
    assert user.privacy_level == PrivacyLevel.FULL


def test_llm_api_key_is_never_rendered_and_kept_when_left_empty(admin_client: Client, server: Server) -> None:
    server.settings.llm_base_url, server.settings.llm_api_key = "http://own.example/v1", "sk-secret-value"
    server.settings.save()
    url = reverse("admin:personas_server_change", args=[server.pk])
    page = admin_client.get(url).content.decode()
    assert "sk-secret-value" not in page
    assert 'type="password" name="settings-0-llm_api_key"' in page  # the superuser may replace it
    assert "demos and tests only" in page

    kept = settings_form(server, llm_base_url="http://own.example/v1", llm_api_key="", llm_model="m")
    assert admin_client.post(url, kept).status_code == 302
    server.settings.refresh_from_db()
    assert (server.settings.llm_api_key, server.settings.llm_model) == ("sk-secret-value", "m")
    assert "sk-secret-value" not in admin_client.get(url).content.decode()


def test_a_new_base_url_without_a_new_key_drops_the_stored_key(admin_client: Client, server: Server) -> None:
    ServerSettings.objects.filter(server=server).update(llm_base_url="http://own.example/v1", llm_api_key="sk-own")
    url = reverse("admin:personas_server_change", args=[server.pk])
    moved = settings_form(server, llm_base_url="http://elsewhere.example/v1", llm_api_key="", llm_model="m")
    assert admin_client.post(url, moved).status_code == 302
    server.settings.refresh_from_db()
    assert (server.settings.llm_base_url, server.settings.llm_api_key) == ("http://elsewhere.example/v1", "")

    rekeyed = settings_form(server, llm_base_url="http://next.example/v1", llm_api_key="sk-next", llm_model="m")
    assert admin_client.post(url, rekeyed).status_code == 302
    cleared = settings_form(server, llm_base_url="http://next.example/v1", llm_model="m", clear_llm_api_key="on")
    assert admin_client.post(url, cleared).status_code == 302
    server.settings.refresh_from_db()
    assert (server.settings.llm_base_url, server.settings.llm_api_key) == ("http://next.example/v1", "")


def test_a_model_without_an_endpoint_of_the_servers_own_is_refused(admin_client: Client, server: Server) -> None:
    url = reverse("admin:personas_server_change", args=[server.pk])
    response = admin_client.post(url, settings_form(server, llm_model="gpt-x"))
    assert response.status_code == 200
    server.settings.refresh_from_db()
    assert server.settings.llm_model == ""


def test_voice_transcript_changelist_is_read_only(admin_client: Client) -> None:
    VoiceTranscript.objects.create(message_disc_id="6009", transcript="is the library open", cached_at=timezone.now())
    response = admin_client.get(reverse("admin:chatcontext_voicetranscript_changelist"))
    assert response.status_code == 200
    assert "is the library open" in response.content.decode()
    add = admin_client.get(reverse("admin:chatcontext_voicetranscript_add"))
    assert add.status_code == 403


def _inline_management(prefix: str, total: int = 0, initial: int = 0) -> dict[str, int]:
    return {f"{prefix}-TOTAL_FORMS": total, f"{prefix}-INITIAL_FORMS": initial}


def test_adding_a_server_saves_its_settings_inline_once(admin_client: Client) -> None:
    settings_form = {
        "settings-0-message_fetch_limit": 60,
        "settings-0-timezone_offset": "5.5",
        "settings-0-retention_days": 7,
        "settings-0-max_images_per_turn": 4,
        "settings-0-max_image_bytes": 4 * 1024 * 1024,
        "settings-0-rp_channel_ids": "",
        "settings-0-llm_provider": "echo",
        "settings-0-llm_api_key": "sk-new",
    }
    data = {
        "server_disc_id": "777",
        "name": "New guild",
        **_inline_management("settings", total=1),
        **settings_form,
        **_inline_management("personas"),
    }
    response = admin_client.post(reverse("admin:personas_server_add"), data)
    assert response.status_code == 302, response.context["errors"]
    server = Server.objects.get(server_disc_id="777")
    assert (server.settings.retention_days, str(server.settings.timezone_offset)) == (7, "5.50")
    assert (server.settings.llm_provider, server.settings.llm_api_key) == ("echo", "sk-new")


def test_adding_a_persona_draws_a_lineage(admin_client: Client, main_persona: Persona) -> None:
    data = {
        "server": main_persona.server.pk,
        "persona_nickname": "Pip",
        "is_alter": "on",
        "trigger_words": '["pip"]',
        "sample_dialogue": "",
        "physical_appearance_tags": "",
        "naming_prefixes": "",
        "naming_suffixes": "",
        "naming_address_terms": "",
        **_inline_management("attributes", total=1),
        "attributes-0-attribute_order": 1,
        "attributes-0-attribute_text": "loud",
        "attributes-0-is_public": "on",
    }
    response = admin_client.post(reverse("admin:personas_persona_add"), data)
    assert response.status_code == 302, response.context["errors"]
    pip = Persona.objects.get(persona_nickname="Pip")
    assert pip.persona_lineage_id > main_persona.persona_lineage_id
    assert list(pip.attributes.values_list("attribute_text", flat=True)) == ["loud"]


def test_admin_refuses_a_second_main_persona(admin_client: Client, main_persona: Persona) -> None:
    data = {
        "server": main_persona.server.pk,
        "persona_nickname": "Other",
        "trigger_words": "",
        "sample_dialogue": "",
        "physical_appearance_tags": "",
        "naming_prefixes": "",
        "naming_suffixes": "",
        "naming_address_terms": "",
        **_inline_management("attributes"),
    }
    response = admin_client.post(reverse("admin:personas_persona_add"), data)
    assert response.status_code == 200
    assert Persona.objects.filter(server=main_persona.server).count() == 1


@pytest.mark.parametrize("user_id", ["١٢", "１２", "12a", "1" * 21])
def test_the_admin_refuses_a_blacklist_id_that_is_not_ascii_digits(
    admin_client: Client, server: Server, user_id: str
) -> None:
    response = admin_client.post(
        reverse("admin:personas_personalizationblacklist_add"),
        {"server": server.pk, "user_disc_id": user_id, "reason": ""},
    )
    assert response.status_code == 200
    assert "user_disc_id" in response.context["adminform"].form.errors
    assert not PersonalizationBlacklist.objects.filter(user_disc_id=user_id).exists()
    accepted = admin_client.post(
        reverse("admin:personas_personalizationblacklist_add"),
        {"server": server.pk, "user_disc_id": "12", "reason": ""},
    )
    assert accepted.status_code == 302
    assert PersonalizationBlacklist.objects.filter(server=server, user_disc_id="12").exists()


def test_the_admin_refuses_channel_ids_that_are_not_ascii_digits(admin_client: Client, server: Server) -> None:
    url = reverse("admin:personas_server_change", args=[server.pk])
    assert admin_client.post(url, settings_form(server, rp_channel_ids="١٢")).status_code == 200
    server.settings.refresh_from_db()
    assert server.settings.rp_channel_ids == []
    assert admin_client.post(url, settings_form(server, rp_channel_ids="12")).status_code == 302
    server.settings.refresh_from_db()
    assert server.settings.rp_channel_ids == ["12"]
