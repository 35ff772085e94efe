"""The user pages of the console as a moderator uses them (issue 32 items 1, 2, 5 and 6), through
Django's test client with the named fixture users: alice moderates server A, bob server B.

Forms preselect what is stored; privacy changes, memory edits, forget-me and blacklisting return to
the page they were started from (only a page of this site) with a message naming the user; the
blacklist is offered on the user's pages and the users list for the moderator's servers only; the
forget-me confirmation shows every kind the API's preview counts; the export and the page say the
same thing about who reads a global memory."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from chatcontext.models import PromptRecord
from community.export import EVERY_PERSONA
from personas import actions
from personas.admin import users as users_admin
from personas.models import (
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    PersonalizationBlacklist,
    PersonalMemory,
    PrivacyLevel,
)
from personas.models.moderation import BLACKLIST_REASON_CHARS

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:personas_discorduser_changelist"


def signed_in(account: Any) -> Client:
    client = Client()
    client.force_login(account)
    return client


def known_url(user: DiscordUser) -> str:
    return reverse("admin:personas_discorduser_known", args=[user.pk])


def said(response: Any) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


@pytest.mark.parametrize("level", list(PrivacyLevel))
def test_the_privacy_form_preselects_the_user_s_own_level(world: dict[str, Any], level: PrivacyLevel) -> None:
    member = world["a"]["user"]
    DiscordUser.objects.filter(pk=member.pk).update(privacy_level=level)

    page = signed_in(world["alice"]).get(known_url(member))

    chosen = [name for name, _, current in page.context["privacy_actions"] if current]
    assert chosen == [f"set_privacy_{level.name.lower()}"]
    assert f'<option value="set_privacy_{level.name.lower()}" selected>' in page.content.decode()


def test_a_privacy_change_returns_to_the_user_view_and_names_the_user(world: dict[str, Any]) -> None:
    member = world["a"]["user"]
    here = known_url(member)
    form = {"action": "set_privacy_partial", "_selected_action": [member.pk], "next": here}

    done = signed_in(world["alice"]).post(reverse(CHANGELIST), form)

    assert done.status_code == 302 and done["Location"] == here
    assert said(done) == [f"Privacy level set to {PrivacyLevel.PARTIAL.label} for {member}."]
    member.refresh_from_db()
    assert member.privacy_level == PrivacyLevel.PARTIAL


@pytest.mark.parametrize("elsewhere", ["https://evil.example/admin/", "//evil.example/", "javascript:alert(1)"])
def test_a_next_off_this_site_is_not_followed(world: dict[str, Any], elsewhere: str) -> None:
    member = world["a"]["user"]
    form = {"action": "set_privacy_full", "_selected_action": [member.pk], "next": elsewhere}

    done = signed_in(world["alice"]).post(reverse(CHANGELIST), form)

    assert done.status_code == 302 and done["Location"] == reverse(CHANGELIST)


def test_a_memory_edited_from_the_user_view_returns_there(world: dict[str, Any]) -> None:
    member, memory = world["a"]["user"], world["a"]["memory"]
    client = signed_in(world["alice"])
    page = client.get(known_url(member))
    [link] = [m["url"] for lineage in page.context["memories"] for m in lineage["rows"]]
    assert link.endswith(f"?next={known_url(member).replace('/', '%2F')}")

    saved = client.post(link, {"content": "{user} now prefers oolong", "tags": "tea"})

    assert saved.status_code == 302 and saved["Location"] == known_url(member)
    memory.refresh_from_db()
    assert memory.content == "{user} now prefers oolong"
    continued = client.post(link, {"content": "{user} now prefers oolong", "tags": "tea", "_continue": "1"})
    assert continued["Location"].startswith(reverse("admin:personas_personalmemory_change", args=[memory.pk]))


def test_forget_me_from_the_user_view_returns_there_and_names_the_user(world: dict[str, Any]) -> None:
    member = world["a"]["user"]
    here = known_url(member)
    form = {"action": "forget_users", "_selected_action": [member.pk], "next": here}
    client = signed_in(world["alice"])

    confirmation = client.post(reverse(CHANGELIST), form).content.decode()
    assert f'<input type="hidden" name="next" value="{here}">' in confirmation
    done = client.post(reverse(CHANGELIST), {**form, "confirm": "yes"})

    assert done.status_code == 302 and done["Location"] == here
    kinds = "1 personal memories, 1 reminders, 1 member snapshots, 1 profile cleared, 1 prompt records"
    assert said(done) == [f"Forgot {member}: {kinds}."]


def test_the_forget_confirmation_names_one_user_and_shows_every_kind_the_api_preview_counts(
    world: dict[str, Any],
) -> None:
    member = world["a"]["user"]
    PersonalMemory.objects.create(user=member, persona_lineage_id=GLOBAL_LINEAGE_ID, content="{user} likes tea")
    client = signed_in(world["alice"])
    api = client.get(f"/api/v1/servers/{world['a']['server'].pk}/users/{member.user_disc_id}/forget")
    preview = {k.replace("_", " "): int(v) for k, v in api.json()["would_delete"].items()}

    page = client.post(reverse(CHANGELIST), {"action": "forget_users", "_selected_action": [member.pk]})

    html = page.content.decode()
    assert page.context["title"] == f"Forget {member}?" and "Forget these users" not in html
    [(shown_user, counts)] = page.context["users"]
    assert shown_user == member and dict(counts) == preview
    assert preview["personal memories"] == 2 and preview["reminders"] == 1 and preview["member snapshots"] == 1
    for kind, n in preview.items():
        assert f"{kind.capitalize()}: {n}</li>" in html
    assert page.context["totals"] is None  # one user: their counts are the total
    assert PersonalMemory.objects.filter(user=member).count() == 2 and PromptRecord.objects.count() == 2


def test_the_forget_confirmation_for_several_users_counts_them_together(world: dict[str, Any]) -> None:
    root = world["root"]
    users = [world["a"]["user"], world["b"]["user"]]
    data = {"action": "forget_users", "_selected_action": [u.pk for u in users]}

    page = signed_in(root).post(reverse(CHANGELIST), data)

    assert page.context["title"] == f"Forget {users[0]} and {users[1]}?"
    totals = dict(page.context["totals"])
    assert totals["personal memories"] == 2 and totals["prompt records"] == 2 and totals["reminders"] == 2


def test_the_export_and_the_page_say_every_persona_reads_a_global_memory(world: dict[str, Any]) -> None:
    member = world["a"]["user"]
    PersonalMemory.objects.create(user=member, persona_lineage_id=GLOBAL_LINEAGE_ID, content="{user} likes tea")
    root = world["root"]

    for account in (root, world["alice"]):
        client = signed_in(account)
        export = json.loads(client.get(reverse("admin:personas_discorduser_export", args=[member.pk])).content)
        [global_lineage] = [lineage for lineage in export["memories"] if lineage["global"]]
        assert global_lineage["read_by"] == [] and global_lineage["read_by_every_persona"] is True
        labels = [lineage["label"] for lineage in client.get(known_url(member)).context["memories"]]
        assert f"Global (lineage 0): {EVERY_PERSONA} reads these" in labels


def test_alice_blacklists_from_the_user_s_page_on_her_server_only(world: dict[str, Any]) -> None:
    member, a, b = world["a"]["user"], world["a"]["server"], world["b"]["server"]
    url = reverse("admin:personas_discorduser_blacklist", args=[member.pk])
    client = signed_in(world["alice"])

    page = client.get(url)
    add = dict((op, form) for op, form, _ in page.context["forms"])["add"]
    assert list(add.fields["server"].queryset) == [a] and add["server"].value() == a.pk
    assert "opt-out, not a ban" in page.content.decode()
    forged = client.post(url, {"operation": "add", "apply": "yes", "server": b.pk, "reason": "x"})
    assert forged.status_code == 200 and "server" in dict((op, f) for op, f, _ in forged.context["forms"])["add"].errors
    assert not PersonalizationBlacklist.objects.filter(user_disc_id=member.user_disc_id).exists()

    done = client.post(url, {"operation": "add", "apply": "yes", "server": a.pk, "reason": "asked to"})

    assert done.status_code == 302 and done["Location"] == known_url(member)
    assert said(done) == [f"{member}: on the personalization blacklist of {a}."]
    entry = PersonalizationBlacklist.objects.get(user_disc_id=member.user_disc_id)
    assert (entry.server, entry.reason, entry.history.count()) == (a, "asked to", 1)
    remove = dict((op, form) for op, form, _ in client.get(url).context["forms"])["remove"]
    assert remove["server"].value() == a.pk
    taken_off = client.post(f"{url}?next={known_url(member)}", {"operation": "remove", "apply": "yes", "server": a.pk})
    assert taken_off["Location"] == known_url(member)
    assert not PersonalizationBlacklist.objects.filter(user_disc_id=member.user_disc_id).exists()


def test_bob_blacklists_several_users_from_the_list(world: dict[str, Any]) -> None:
    b = world["b"]["server"]
    other = DiscordUser.objects.create(user_disc_id="52007", username="member_b2")
    world["b"]["server"].members.create(user_disc_id=other.user_disc_id, username=other.username)
    users = [world["b"]["user"], other]
    data = {"action": "blacklist_users", "_selected_action": [u.pk for u in users]}
    client = signed_in(world["bob"])

    page = client.post(reverse(CHANGELIST), data)
    assert page.status_code == 200 and page.context["title"] == f"Personalization blacklist: {users[0]} and {other}"
    done = client.post(reverse(CHANGELIST), {**data, "operation": "add", "apply": "yes", "server": b.pk})

    assert done.status_code == 302 and done["Location"] == reverse(CHANGELIST)
    listed = PersonalizationBlacklist.objects.filter(server=b, user_disc_id__in=[u.user_disc_id for u in users])
    assert listed.count() == 2
    assert said(done) == [f"{users[0]} and {other}: on the personalization blacklist of {b}."]


def test_the_user_pages_link_to_the_blacklist_form(world: dict[str, Any]) -> None:
    member = world["a"]["user"]
    client = signed_in(world["alice"])
    url = reverse("admin:personas_discorduser_blacklist", args=[member.pk])

    change = client.get(reverse("admin:personas_discorduser_change", args=[member.pk])).content.decode()
    known = client.get(known_url(member)).content.decode()

    assert f'id="blacklist-link" href="{url}?next=' in change and f'id="blacklist-link" href="{url}?next=' in known
    assert client.get(reverse("admin:personas_discorduser_blacklist", args=[world["b"]["user"].pk])).status_code == 404


def test_a_reason_longer_than_the_api_allows_is_a_form_error_and_writes_nothing(world: dict[str, Any]) -> None:
    member, a = world["a"]["user"], world["a"]["server"]
    url = reverse("admin:personas_discorduser_blacklist", args=[member.pk])
    long = "x" * (BLACKLIST_REASON_CHARS + 1)

    page = signed_in(world["alice"]).post(url, {"operation": "add", "apply": "yes", "server": a.pk, "reason": long})

    add = dict((op, form) for op, form, _ in page.context["forms"])["add"]
    assert page.status_code == 200 and list(add.errors) == ["reason"]
    assert not PersonalizationBlacklist.objects.filter(user_disc_id=member.user_disc_id).exists()


def test_a_memory_deleted_from_the_user_view_returns_there(world: dict[str, Any]) -> None:
    member, memory = world["a"]["user"], world["a"]["memory"]
    client = signed_in(world["alice"])
    [link] = [m["delete_url"] for lineage in client.get(known_url(member)).context["memories"] for m in lineage["rows"]]

    done = client.post(link, {"post": "yes"})

    assert done.status_code == 302 and done["Location"] == known_url(member)
    assert not PersonalMemory.objects.filter(pk=memory.pk).exists()
    assert any("was deleted successfully" in m for m in said(done))


def test_a_memory_deleted_from_its_page_reached_from_the_user_view_returns_there(world: dict[str, Any]) -> None:
    member, memory = world["a"]["user"], world["a"]["memory"]
    client = signed_in(world["alice"])
    [link] = [m["url"] for lineage in client.get(known_url(member)).context["memories"] for m in lineage["rows"]]
    page = client.get(link).content.decode()
    [delete] = re.findall(r'<a href="([^"]+)" class="deletelink">', page)
    assert parse_qs(urlsplit(unescape(delete)).query)["next"] == [known_url(member)]
    deleted = client.post(unescape(delete), {"post": "yes"})
    assert deleted.status_code == 302 and deleted["Location"] == known_url(member)
    assert not PersonalMemory.objects.filter(pk=memory.pk).exists()


def test_the_user_view_shows_a_blocks_end_in_the_consoles_format(world: dict[str, Any]) -> None:
    member = world["a"]["user"]
    ends = datetime(2026, 12, 24, 18, 30, tzinfo=UTC)
    actions.block_user(
        world["a"]["persona"],
        member.user_disc_id,
        block_type="mute",
        reason="spam",
        expires_at=ends,
        actor=actions.Actor.system("test"),
    )
    page = signed_in(world["alice"]).get(known_url(member)).content.decode()
    blocks = re.search(r'<ul id="user-blocks">(.*?)</ul>', page, re.S).group(1)  # type: ignore[union-attr]
    assert "until 2026-12-24 18:30 UTC" in blocks and "2026-12-24T" not in blocks


@pytest.mark.parametrize("action", ["forget_users", "blacklist_users"])
def test_select_all_matching_users_is_refused_before_any_preview(world: dict[str, Any], action: str) -> None:
    """The confirmation re-posts the ticked ids only: "Select all N" would preview (and, for forget-me,
    lock) users the confirmed action then leaves alone."""
    member = world["a"]["user"]
    client = signed_in(world["alice"])
    refused = client.post(
        reverse(CHANGELIST), {"action": action, "_selected_action": [member.pk], "select_across": "1", "index": "0"}
    )
    assert refused.status_code == 302
    [message] = said(refused)
    assert "not on every user the list matches" in message
    assert PersonalMemory.objects.filter(user=member).exists()


@pytest.mark.parametrize("action", ["forget_users", "blacklist_users"])
def test_more_users_than_a_confirmation_holds_are_refused(
    world: dict[str, Any], action: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(users_admin, "MAX_CONFIRMED_USERS", 1)
    blacklisted = PersonalizationBlacklist.objects.count()
    users = [world["b"]["user"], DiscordUser.objects.create(user_disc_id="52009", username="member_b3")]
    world["b"]["server"].members.create(user_disc_id=users[1].user_disc_id, username=users[1].username)
    refused = signed_in(world["bob"]).post(
        reverse(CHANGELIST), {"action": action, "_selected_action": [u.pk for u in users]}
    )
    [message] = said(refused)
    assert refused.status_code == 302 and "takes at most 1 users at once" in message
    assert PersonalizationBlacklist.objects.count() == blacklisted
