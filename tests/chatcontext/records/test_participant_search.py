"""The inspector's list finds records by participant (issue 16: ``?q=mina``): a name or alias in the
record's participant index, or the Discord id of a user it is about, within the reader's servers,
in the list's one query."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.chatcontext.records.conftest import World

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

URL = reverse("admin:chatcontext_promptrecord_changelist")
PRIYA = "364084050526343170"  # a user the example conversation is about


def found(world: World, who: str, term: str) -> set[int]:
    response = world.client(who).get(URL, {"q": term})
    return {record.pk for record in response.context["cl"].result_list}


def test_a_name_or_alias_of_a_participant_finds_the_record_on_the_readers_servers(world: World) -> None:
    server_a = {world.first_a.pk, world.record_a.pk}
    assert found(world, "alice", "priya") == server_a  # an alias, any case
    assert found(world, "alice", "Priya K") == server_a
    assert found(world, "bob", "TOBIAS") == {world.record_b.pk}
    assert found(world, "root", "dario_m") == server_a | {world.record_b.pk}


def test_a_discord_id_finds_the_records_about_that_user(world: World) -> None:
    assert found(world, "alice", PRIYA) == {world.first_a.pk, world.record_a.pk}
    assert found(world, "alice", PRIYA[:-1]) == set()  # whole ids only


def test_only_names_match_not_the_index_s_keys_or_like_wildcards(world: World) -> None:
    for term in ("display_label", "targets", "Pri_a", "%", "nobody-here"):
        assert found(world, "root", term) == set(), term


def test_a_participant_search_costs_the_list_no_extra_query(world: World) -> None:
    client = world.client("alice")
    client.get(URL)
    with CaptureQueriesContext(connection) as plain:
        client.get(URL)
    with CaptureQueriesContext(connection) as searched:
        client.get(URL, {"q": "priya"})
    assert len(searched.captured_queries) == len(plain.captured_queries)
