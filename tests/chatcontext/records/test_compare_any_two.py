"""Any two turns compared (issue 32 item 4), through Django's test client: the list's "Compare the two
selected" action opens the later turn's inspector page diffed against the earlier one; the page's
``?against=`` names a record the reader may see, else it is a 404 like every other inspector page."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from chatcontext.models import PromptRecord
from tests.chatcontext.records.conftest import A_NEW_SERVER_MEMORY, World

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

CHANGELIST = reverse("admin:chatcontext_promptrecord_changelist")


def change_url(record: PromptRecord) -> str:
    return reverse("admin:chatcontext_promptrecord_change", args=[record.pk])


def compare(client: Client, *records: PromptRecord) -> object:
    data = {"action": "compare_selected", "_selected_action": [str(r.pk) for r in records], "index": "0"}
    return client.post(CHANGELIST, data)


def test_the_action_opens_the_later_turn_diffed_against_the_earlier(world: World) -> None:
    response = compare(world.client("alice"), world.record_a, world.first_a)
    assert response.status_code == 302  # type: ignore[attr-defined]
    assert response["Location"] == f"{change_url(world.record_a)}?against={world.first_a.pk}#diff"  # type: ignore[index]
    page = world.client("alice").get(response["Location"]).content.decode()  # type: ignore[index]
    assert f"Changes from prompt record {world.first_a.pk}" in page and "chosen in the list" in page
    # The server memory added between the two turns is an added line of the diff.
    assert re.search(r'<div class="add">\+[^<]*' + re.escape(A_NEW_SERVER_MEMORY), page)


def test_the_action_asks_for_exactly_two(world: World) -> None:
    client = world.client("alice")
    response = compare(client, world.record_a)
    assert response.status_code == 302 and response["Location"] == CHANGELIST  # type: ignore[attr-defined,index]
    listed = client.get(CHANGELIST).content.decode()
    assert "Select exactly two turns to compare." in listed


def test_against_a_record_the_reader_may_not_see_or_no_record_is_a_404(world: World) -> None:
    client = world.client("alice")
    for against in (str(world.record_b.pk), "not-a-number", "999999"):
        assert client.get(f"{change_url(world.record_a)}?against={against}").status_code == 404, against
    assert world.client("root").get(f"{change_url(world.record_a)}?against={world.record_b.pk}").status_code == 200
