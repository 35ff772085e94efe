"""Forms a person can fill (issue 16 items 6–8): typed lists instead of JSON textareas, help text on
every server and persona setting, labels a moderator reads, one-line inputs for one-line fields.

alice moderates Zephyr Hall (persona Zephyra, member Mina); root is the superuser.
"""

from __future__ import annotations

from html import unescape
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, IntervalSchedule, SolarSchedule
from hypothesis import given
from hypothesis import strategies as st

from personas.admin.fields import SampleDialogueField, StyleMapField, TextListField
from personas.models import (
    ApiToken,
    DiscordUser,
    MatrixChannelLink,
    Persona,
    PersonaAttribute,
    PersonalMemory,
    Server,
    ServerMember,
    ServerModerator,
    ServerSettings,
    UserPersonaNamingPreference,
)
from tests.botplatform.admin_forms import form_fields, root_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def zephyr() -> dict[str, Any]:
    server = Server.objects.create(server_disc_id="7100", name="Zephyr Hall")
    persona = Persona.objects.create(server=server, persona_nickname="Zephyra", trigger_words=["zephyra"])
    mina = DiscordUser.objects.create(user_disc_id="7101", username="mina")
    ServerMember.objects.create(server=server, user_disc_id=mina.user_disc_id, display_name="Mina")
    alice = get_user_model().objects.create_user("alice", is_staff=True)
    ServerModerator.objects.create(server=server, user=alice)
    get_user_model().objects.create_superuser("root")
    client = Client()
    client.force_login(alice)
    return {"server": server, "persona": persona, "mina": mina, "alice": client}


def as_root() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="root"))
    return client


# --- item 6: typed lists --------------------------------------------------------------------------


def test_a_moderator_saves_a_memory_with_comma_separated_tags(zephyr: dict[str, Any]) -> None:
    url = reverse("admin:personas_personalmemory_add")
    data = {
        "user": zephyr["mina"].pk,
        "persona_lineage_id": zephyr["persona"].persona_lineage_id,
        "content": "{user} plays jazz piano",
        "tags": "music, jazz,",
    }
    response = zephyr["alice"].post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    memory = PersonalMemory.objects.get(user=zephyr["mina"])
    assert memory.tags == ["music", "jazz"]
    page = zephyr["alice"].get(reverse("admin:personas_personalmemory_change", args=[memory.pk])).content.decode()
    assert 'value="music, jazz"' in page
    assert "Enter a valid JSON" not in page
    # The memory's help text explains the placeholders and the tags.
    assert "{user} stands for their name" in unescape(page) and "Separate tags with commas" in page


def test_persona_lists_dialogue_and_naming_are_typed_as_text(zephyr: dict[str, Any]) -> None:
    persona = zephyr["persona"]
    url = reverse("admin:personas_persona_change", args=[persona.pk])
    data = {
        "server": zephyr["server"].pk,
        "persona_nickname": "Zephyra",
        "trigger_words": "zephyra, zeph\nbreeze",
        "physical_appearance_tags": "silver hair, green eyes",
        "sample_dialogue": "user: hi {bot}!\npersona: Hello, {user}.\nHow was your day?",
        "naming_prefixes": "feminine: Lady\nneutral:",
        "naming_suffixes": "",
        "naming_address_terms": "masculine: sir",
        "attributes-TOTAL_FORMS": 0,
        "attributes-INITIAL_FORMS": 0,
    }
    response = zephyr["alice"].post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    persona.refresh_from_db()
    assert persona.trigger_words == ["zephyra", "zeph", "breeze"]
    assert persona.physical_appearance_tags == ["silver hair", "green eyes"]
    assert persona.sample_dialogue == [
        {"role": "user", "text": "hi {bot}!"},
        {"role": "model", "text": "Hello, {user}.\nHow was your day?"},
    ]
    assert persona.naming_prefixes == {"feminine": "Lady", "neutral": ""}
    assert persona.naming_suffixes == {} and persona.naming_address_terms == {"masculine": "sir"}
    page = unescape(zephyr["alice"].get(url).content.decode())
    assert "user: hi {bot}!\npersona: Hello, {user}.\nHow was your day?</textarea>" in page
    assert 'value="zephyra, zeph, breeze"' in page


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("sample_dialogue", "bot: hello", "Line 1 does not start with “user:”, “persona:”"),
        ("naming_prefixes", "femenine: Lady", "Line 1 does not start with “masculine:”, “feminine:”, “neutral:”"),
        ("naming_prefixes", "neutral: Sir\nneutral: Madam", "Each style once: neutral is written more than once."),
    ],
)
def test_a_mistyped_line_says_which_and_how_to_write_it(
    zephyr: dict[str, Any], field: str, value: str, message: str
) -> None:
    persona = zephyr["persona"]
    data = {"server": zephyr["server"].pk, "persona_nickname": "Zephyra", field: value}
    data |= {"attributes-TOTAL_FORMS": 0, "attributes-INITIAL_FORMS": 0}
    response = zephyr["alice"].post(reverse("admin:personas_persona_change", args=[persona.pk]), data)
    assert response.status_code == 200
    assert message in unescape(response.content.decode())
    assert Persona.objects.get(pk=persona.pk).trigger_words == ["zephyra"]


def settings_post(server: Server, **changes: str) -> dict[str, Any]:
    return {
        "server_disc_id": server.server_disc_id,
        "name": server.name,
        "settings-TOTAL_FORMS": 1,
        "settings-INITIAL_FORMS": 1,
        "settings-0-server": server.pk,
        "settings-0-message_fetch_limit": 60,
        "settings-0-timezone_offset": "0",
        "settings-0-retention_days": 30,
        "settings-0-max_images_per_turn": 4,
        "settings-0-max_image_bytes": 4 * 1024 * 1024,
        "settings-0-llm_provider": "",
        "personas-TOTAL_FORMS": 0,
        "personas-INITIAL_FORMS": 0,
        **{f"settings-0-{k}": v for k, v in changes.items()},
    }


def test_channel_ids_are_typed_with_commas_and_checked(zephyr: dict[str, Any]) -> None:
    server, alice = zephyr["server"], zephyr["alice"]
    url = reverse("admin:personas_server_change", args=[server.pk])
    refused = alice.post(url, settings_post(server, rp_channel_ids="1234567890123456789, #general"))
    assert refused.status_code == 200
    assert "“#general” is not a channel ID" in unescape(refused.content.decode())
    assert ServerSettings.objects.get(server=server).rp_channel_ids == []
    saved = alice.post(url, settings_post(server, rp_channel_ids="1234567890123456789,\n42"))
    assert saved.status_code == 302
    assert ServerSettings.objects.get(server=server).rp_channel_ids == ["1234567890123456789", "42"]


ITEM = st.text(st.characters(blacklist_characters=",\n\r", blacklist_categories=("Cs", "Zl", "Zp")), min_size=1).map(
    str.strip
)


@given(st.lists(ITEM.filter(bool), unique=True, max_size=8))
def test_a_typed_list_reads_back_as_the_list_it_shows(items: list[str]) -> None:
    field = TextListField(required=False)
    assert field.clean(field.prepare_value(items)) == items
    assert field.clean("\n".join(items)) == items  # one per line reads the same
    assert not field.has_changed(items, field.prepare_value(items))


LINE_TEXT = st.text(st.characters(blacklist_characters="\r", blacklist_categories=("Cs", "Zl", "Zp", "Cc")), min_size=1)


@given(st.lists(st.tuples(st.sampled_from(["user", "model"]), LINE_TEXT.map(str.strip).filter(bool)), max_size=6))
def test_sample_dialogue_reads_back_as_the_dialogue_it_shows(pairs: list[tuple[str, str]]) -> None:
    field = SampleDialogueField(required=False)
    dialogue = [{"role": role, "text": text} for role, text in pairs]
    assert field.clean(field.prepare_value(dialogue)) == dialogue


@given(st.dictionaries(st.sampled_from(["masculine", "feminine", "neutral"]), LINE_TEXT.map(str.strip)))
def test_naming_by_style_reads_back_as_the_object_it_shows(naming: dict[str, str]) -> None:
    field = StyleMapField(required=False)
    assert field.clean(field.prepare_value(naming)) == naming


# --- item 7: help text and labels ---------------------------------------------------------------------


def test_every_server_and_persona_setting_has_help_text(zephyr: dict[str, Any]) -> None:
    server, persona = zephyr["server"], zephyr["persona"]
    server_admin = admin.site._registry[Server]
    persona_admin = admin.site._registry[Persona]
    settings_inline = next(type(i) for i in server_admin.get_inline_instances(root_request(), server))
    attribute_inline = next(type(i) for i in persona_admin.get_inline_instances(root_request(), persona))
    assert settings_inline.model is ServerSettings and attribute_inline.model is PersonaAttribute
    pages = {
        "server": form_fields(Server, server),
        "server settings": form_fields(Server, server, settings_inline),
        "persona": form_fields(Persona, persona),
        "persona attributes": form_fields(Persona, persona, attribute_inline),
    }
    # An inline's link to its parent (hidden) is no setting.
    links = {"server settings": {"server"}, "persona attributes": {"persona", "id"}}
    bare = [
        f"{page}: {name}"
        for page, fields in pages.items()
        for name, field in fields.items()
        if name not in links.get(page, set()) and not str(field.help_text or "").strip()
    ]
    assert bare == []
    assert len(pages["server settings"]) >= 25  # every setting was walked, not an empty form


def test_labels_a_moderator_reads(zephyr: dict[str, Any]) -> None:
    assert str(PersonalMemory._meta.verbose_name_plural) == "personal memories"
    assert str(ApiToken._meta.verbose_name_plural) == "API tokens"
    assert str(ServerSettings._meta.get_field("llm_provider").verbose_name) == "LLM provider"
    assert str(Server._meta.get_field("server_disc_id").verbose_name) == "server Discord ID"
    index = as_root().get(reverse("admin:index")).content.decode()
    # The home page groups models by task; the app's own name is in the records' breadcrumbs.
    records = as_root().get(reverse("admin:chatcontext_promptrecord_changelist")).content.decode()
    assert "Prompt inspector" in records and "Chatcontext" not in index + records
    for wrong in ("Personal memorys", "Llm provider", "Server disc id", "Api tokens", "discord user"):
        assert wrong not in index
    server_page = as_root().get(reverse("admin:personas_server_change", args=[zephyr["server"].pk])).content.decode()
    assert "LLM provider" in server_page and "Server Discord ID" in server_page
    assert "Llm provider" not in server_page and "Server disc id" not in server_page and "Llm api" not in server_page


def test_beats_solar_and_clocked_schedules_are_not_in_the_admin() -> None:
    assert not admin.site.is_registered(SolarSchedule) and not admin.site.is_registered(ClockedSchedule)
    assert admin.site.is_registered(IntervalSchedule) and admin.site.is_registered(CrontabSchedule)


def test_matrix_links_are_listed_only_where_a_bridge_made_some(zephyr: dict[str, Any]) -> None:
    index = reverse("admin:index")
    assert "Matrix channel links" not in zephyr["alice"].get(index).content.decode()
    assert "Matrix channel links" not in as_root().get(index).content.decode()
    MatrixChannelLink.objects.create(server=zephyr["server"], channel_disc_id="7150", matrix_room_id="!z:example.org")
    assert "Matrix channel links" in zephyr["alice"].get(index).content.decode()
    assert "Matrix channel links" in as_root().get(index).content.decode()


# --- item 8: one-line fields, NULL kept ---------------------------------------------------------------


def user_post(client: Client, user: DiscordUser, **changes: str) -> Any:
    url = reverse("admin:personas_discorduser_change", args=[user.pk])
    form = client.get(url).context["adminform"].form
    data = {name: form[name].value() for name in form.fields if form[name].value() is not None}
    data |= {name: form.fields[name].prepare_value(form[name].value()) for name in ("physical_appearance_tags",)}
    data |= {"personal_memories-TOTAL_FORMS": 0, "personal_memories-INITIAL_FORMS": 0}
    data |= {"naming_preferences-TOTAL_FORMS": 0, "naming_preferences-INITIAL_FORMS": 0}
    return client.post(url, {**data, **changes})


def test_one_line_fields_are_one_line_inputs(zephyr: dict[str, Any]) -> None:
    page = zephyr["alice"].get(reverse("admin:personas_discorduser_change", args=[zephyr["mina"].pk])).content
    html = page.decode()
    for name in ("user_nickname", "prefix_override", "suffix_override", "pronouns", "gender_identity"):
        assert f'<input type="text" name="{name}"' in html, name
        assert f'<textarea name="{name}"' not in html, name
    assert '<textarea name="impersonation_prompt"' in html  # a prompt keeps its room


def test_saving_the_user_page_keeps_unset_fields_unset(zephyr: dict[str, Any]) -> None:
    """An untouched empty prefix was saved as '' (a deliberate "no prefix", H-09) instead of staying
    NULL (follow the persona's prefix): saving a page silently changed how personas address the user."""
    mina = zephyr["mina"]
    DiscordUser.objects.filter(pk=mina.pk).update(suffix_override="")
    response = user_post(zephyr["alice"], mina, pronouns="she/her")
    assert response.status_code == 302, response.context["adminform"].form.errors
    mina.refresh_from_db()
    assert mina.pronouns == "she/her"
    assert mina.prefix_override is None and mina.user_nickname is None and mina.gender_identity is None
    assert mina.suffix_override == ""  # a deliberate empty suffix, set elsewhere, is kept as well
    assert user_post(zephyr["alice"], mina, pronouns="").status_code == 302
    mina.refresh_from_db()
    assert mina.pronouns is None  # emptied: NULL, not ''


def test_naming_preferences_keep_unset_overrides_unset(zephyr: dict[str, Any]) -> None:
    preference = UserPersonaNamingPreference.objects.create(
        user=zephyr["mina"], persona_lineage_id=zephyr["persona"].persona_lineage_id, nickname_override="Minnie"
    )
    url = reverse("admin:personas_userpersonanamingpreference_change", args=[preference.pk])
    lineage = zephyr["persona"].persona_lineage_id
    data = {"persona_lineage_id": lineage, "nickname_override": "Min", "prefix_override": "", "suffix_override": ""}
    response = zephyr["alice"].post(url, data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    preference.refresh_from_db()
    assert (preference.nickname_override, preference.prefix_override, preference.suffix_override) == ("Min", None, None)
