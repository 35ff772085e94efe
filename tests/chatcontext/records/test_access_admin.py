"""Admin for API tokens and server moderators (issue 5): a token created in the admin is shown
once and stored hashed, revoking ends it, and both pages follow the per-server scoping."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from personas.access import principal_for_token
from personas.models import ApiToken, ServerModerator
from personas.models.access import hash_token
from tests.chatcontext.records.conftest import World

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

RAW_TOKEN = re.compile(r"<code>(tmr_[A-Za-z0-9_\-]+)</code>")
TOKENS = "admin:personas_apitoken_changelist"
MODERATORS = "admin:personas_servermoderator_changelist"


def add_token(client: Client, server_id: int, name: str = "Grafana", scope: str = "read"):  # type: ignore[no-untyped-def]
    return client.post(
        reverse("admin:personas_apitoken_add"), {"server": server_id, "name": name, "scope": scope}, follow=True
    )


def test_created_token_is_shown_once_and_stored_hashed(world: World) -> None:
    client = world.client("alice")
    response = add_token(client, world.server_a.pk)
    assert response.status_code == 200
    shown = RAW_TOKEN.findall(unescape(response.content.decode()))
    assert len(shown) == 1
    raw = shown[0]
    token = ApiToken.objects.get(name="Grafana")
    assert token.server == world.server_a
    assert token.created_by == world.alice
    assert token.token_hash == hash_token(raw) != raw
    assert raw.startswith(token.token_prefix)
    assert not ApiToken.objects.filter(token_hash=raw).exists()
    who = principal_for_token(raw)
    assert who is not None and who.server_ids == frozenset({world.server_a.pk}) and not who.can_write
    # Never again: neither the list nor the token's own page shows it.
    for url in (reverse(TOKENS), reverse("admin:personas_apitoken_change", args=[token.pk])):
        assert raw not in client.get(url).content.decode()


def test_moderator_cannot_issue_a_token_for_another_server(world: World) -> None:
    response = add_token(world.client("alice"), world.server_b.pk)
    assert "Select a valid choice" in response.content.decode()
    assert not ApiToken.objects.exists()
    form = world.client("alice").get(reverse("admin:personas_apitoken_add")).content.decode()
    assert "Tidepool Makerspace" in form and "Day Larks" not in form


def test_revoke_action_ends_the_token(world: World) -> None:
    token, raw = ApiToken.issue(world.server_a, "dash", ApiToken.Scope.READ_WRITE)
    other, other_raw = ApiToken.issue(world.server_b, "dash B")
    client = world.client("alice")
    # Posting B's token id too: the action only reaches tokens of alice's servers.
    client.post(reverse(TOKENS), {"action": "revoke_tokens", "_selected_action": [token.pk, other.pk]})
    token.refresh_from_db()
    other.refresh_from_db()
    assert token.revoked_at is not None
    assert other.revoked_at is None
    assert principal_for_token(raw) is None
    assert principal_for_token(other_raw) is not None


def test_token_secret_fields_are_read_only(world: World) -> None:
    token, _ = ApiToken.issue(world.server_a, "dash")
    url = reverse("admin:personas_apitoken_change", args=[token.pk])
    client = world.client("alice")
    client.post(url, {"name": "renamed", "token_hash": "0" * 64, "token_prefix": "tmr_forged", "scope": "read_write"})
    token.refresh_from_db()
    assert token.name == "renamed"
    assert token.token_hash != "0" * 64
    assert not token.token_prefix.startswith("tmr_forged")
    assert token.scope == ApiToken.Scope.READ


def test_token_pages_are_per_server(world: World) -> None:
    token_a, _ = ApiToken.issue(world.server_a, "dash A")
    token_b, _ = ApiToken.issue(world.server_b, "dash B")
    bob = world.client("bob")
    assert bob.get(reverse("admin:personas_apitoken_change", args=[token_a.pk])).status_code == 404
    listed = {t.pk for t in bob.get(reverse(TOKENS)).context["cl"].result_list}
    assert listed == {token_b.pk}
    charlie = world.client("charlie").get(reverse(TOKENS))
    assert charlie.status_code == 302 and charlie["Location"].startswith(reverse("admin:login"))
    # Deleting is for superusers: a moderator revokes.
    assert world.client("alice").get(reverse("admin:personas_apitoken_delete", args=[token_a.pk])).status_code == 403
    assert world.client("root").get(reverse("admin:personas_apitoken_delete", args=[token_a.pk])).status_code == 200


def test_moderators_see_their_servers_rows_and_only_superusers_grant(world: World) -> None:
    alice = world.client("alice")
    rows = {m.server_id for m in alice.get(reverse(MODERATORS)).context["cl"].result_list}
    assert rows == {world.server_a.pk}
    b_row = ServerModerator.objects.get(server=world.server_b)
    assert alice.get(reverse("admin:personas_servermoderator_change", args=[b_row.pk])).status_code == 404
    assert alice.get(reverse("admin:personas_servermoderator_add")).status_code == 403
    alice.post(reverse("admin:personas_servermoderator_add"), {"server": world.server_b.pk, "username": "alice"})
    assert not ServerModerator.objects.filter(server=world.server_b, user=world.alice).exists()

    root = world.client("root")
    root.post(reverse("admin:personas_servermoderator_add"), {"server": world.server_b.pk, "username": "alice"})
    assert ServerModerator.objects.filter(server=world.server_b, user=world.alice).exists()
    detail = reverse("admin:chatcontext_promptrecord_change", args=[world.record_b.pk])
    assert alice.get(detail).status_code == 200


def test_scoping_mixin_follows_server_paths() -> None:
    from personas.admin.scoping import object_server_id
    from personas.models import Persona, PersonaAttribute, Server

    server = Server(pk=7, server_disc_id="1", name="S")
    persona = Persona(pk=3, server=server, persona_nickname="P")
    assert object_server_id(server, "pk") == 7
    assert object_server_id(persona, "server") == 7
    assert object_server_id(PersonaAttribute(persona=persona), "persona__server") == 7
    assert object_server_id(PersonaAttribute(), "persona__server") is None
