"""Tokens and cost (issue 16, item 4): a provider's reported prompt count makes the per-block
figures measured (scaled to it), otherwise they stay estimated; the server's prices per million
tokens give each record its cost; the server list shows turns, tokens and cost over the last day
and week in one query whatever the number of servers."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.usage import TurnTokens, scale_to, turn_cost, turn_tokens
from chatcontext.models import PromptRecord
from chatcontext.records.inspector import assemble_live, record_blocks
from chatcontext.records.store import Generation, TurnRecord, record_turn
from personas.models import ApiToken, Server, ServerModerator, ServerSettings
from tests.chatcontext.records.conftest import World

pytestmark = pytest.mark.django_db(databases=["default", "replay"])


@given(st.lists(st.integers(min_value=0, max_value=5000), max_size=40), st.integers(min_value=0, max_value=200_000))
def test_scaled_blocks_add_up_to_the_measured_total_in_proportion(estimates: list[int], total: int) -> None:
    shares = scale_to(estimates, total)
    assert len(shares) == len(estimates)
    if estimates:
        assert sum(shares) == total
    weights = estimates if sum(estimates) else [1] * len(estimates)
    for share, weight in zip(shares, weights, strict=True):
        assert abs(share - total * weight / sum(weights)) < 1


def test_tokens_are_measured_only_when_the_provider_reports_the_prompt_count() -> None:
    assert turn_tokens({"prompt_tokens": 812, "completion_tokens": 40}, prompt_estimate=700, reply_estimate=30) == (
        TurnTokens(812, 40, measured=True)
    )
    assert turn_tokens({"prompt_tokens": 812}, prompt_estimate=700, reply_estimate=30) == TurnTokens(812, 30, True)
    for usage in ({}, {"prompt_items": 9}, {"prompt_tokens": True}, {"prompt_tokens": "812"}, {"prompt_tokens": -1}):
        assert turn_tokens(usage, prompt_estimate=700, reply_estimate=30) == TurnTokens(700, 30, measured=False)


def test_cost_is_the_price_per_million_tokens_and_unknown_without_a_price() -> None:
    tokens = TurnTokens(1_000_000, 500_000, measured=True)
    assert turn_cost(tokens, input_price=Decimal("0.15"), output_price=Decimal("0.60")) == Decimal("0.45")
    assert turn_cost(tokens, input_price=Decimal("2"), output_price=None) == Decimal("2")
    assert turn_cost(tokens, input_price=None, output_price=None) is None


def _price(server: Server, input_price: str, output_price: str) -> None:
    ServerSettings.objects.filter(server=server).update(
        llm_input_price=Decimal(input_price), llm_output_price=Decimal(output_price)
    )


def _measured_record(world: World) -> PromptRecord:
    _price(world.server_a, "2.50", "10")
    return record_turn(
        TurnRecord(
            assemble_live(world.doc_a, world.server_a),
            snapshot=world.doc_a,
            source=PromptRecord.Source.BOT,
            generation=Generation(
                reply_text="hello", usage={"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}
            ),
        )
    )


def test_a_measured_record_scales_its_blocks_to_the_provider_count_and_shows_its_cost(world: World) -> None:
    record = _measured_record(world)
    assert (record.input_tokens, record.output_tokens, record.tokens_measured) == (1234, 56, True)
    assert record.cost == Decimal("0.003645")  # 1234 × 2.50 / 1e6 + 56 × 10 / 1e6
    blocks = record_blocks(record)
    assert sum(b.tokens for b in blocks) == 1234
    assert [b.tokens for b in blocks] == scale_to([i["token_estimate"] for i in record.context_items], 1234)

    page = world.client("alice").get(reverse("admin:chatcontext_promptrecord_change", args=[record.pk]))
    html = unescape(page.content.decode())
    assert "1234 in + 56 out tokens, measured by the provider · cost 0.003645" in html
    for block in blocks:
        assert f'<td class="tag">{block.tag}</td>\n    <td>{block.tokens}</td>' in html


def test_an_unmeasured_unpriced_record_says_estimated(world: World) -> None:
    record = world.record_a
    assert (record.input_tokens, record.tokens_measured, record.cost) == (record.token_estimate, False, None)
    assert [b.tokens for b in record_blocks(record)] == [i["token_estimate"] for i in record.context_items]
    page = world.client("alice").get(reverse("admin:chatcontext_promptrecord_change", args=[record.pk]))
    html = unescape(page.content.decode())
    assert f"{record.token_estimate} in + {record.output_tokens} out tokens, estimated (characters ÷ 4)" in html
    assert "cost not priced" in html


def test_the_api_record_detail_and_list_carry_tokens_and_cost(world: World) -> None:
    record = _measured_record(world)
    _, token = ApiToken.issue(world.server_a, "dash", ApiToken.Scope.READ)
    headers = {"Authorization": f"Bearer {token}"}
    detail = world.client("charlie").get(f"/api/v1/records/{record.pk}", headers=headers).json()
    assert (detail["input_tokens"], detail["output_tokens"], detail["tokens_measured"]) == (1234, 56, True)
    assert Decimal(detail["cost"]) == Decimal("0.003645")
    listed = world.client("charlie").get("/api/v1/records", headers=headers).json()["items"]
    assert {r["id"]: r["cost"] for r in listed}[world.record_a.pk] is None


def _changelist(world: World, who: str) -> str:
    response = world.client(who).get(reverse("admin:personas_server_changelist"))
    assert response.status_code == 200
    return unescape(response.content.decode())


def test_the_server_list_shows_turns_tokens_and_cost_of_the_last_day_and_week(world: World) -> None:
    record = _measured_record(world)
    old = world.first_a
    PromptRecord.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    PromptRecord.objects.filter(server=world.server_b).update(created_at=timezone.now() - timedelta(days=9))
    day = PromptRecord.objects.filter(server=world.server_a).exclude(pk=old.pk)
    day_tokens = sum(r.input_tokens + r.output_tokens for r in day)
    week_tokens = day_tokens + old.input_tokens + old.output_tokens
    html = _changelist(world, "alice")
    assert ">Last day<" in html and ">Last week<" in html
    cost = f"cost {record.cost.normalize():f}"
    assert f'<td class="field-usage_day">{day.count()} turns<br>{day_tokens:,} tokens<br>{cost}</td>' in html
    assert f'<td class="field-usage_week">{day.count() + 1} turns<br>{week_tokens:,} tokens<br>{cost}</td>' in html
    assert "Day Larks" not in html  # alice's list has only her server
    assert "no turns" in _changelist(world, "bob")  # server B's only record is nine days old


def test_a_turn_that_got_no_answer_costs_nothing_and_is_no_turn_of_the_server(world: World) -> None:
    answered = _measured_record(world)
    PromptRecord.objects.filter(server=world.server_a).exclude(pk=answered.pk).delete()
    failed = record_turn(
        TurnRecord(
            assemble_live(world.doc_a, world.server_a),
            snapshot=world.doc_a,
            source=PromptRecord.Source.BOT,
            generation=Generation(error="provider returned HTTP 404: The model `x` does not exist"),
        )
    )
    assert (failed.input_tokens, failed.output_tokens, failed.cost) == (0, 0, Decimal(0))
    assert failed.token_estimate > 0  # what the prompt weighs is still shown, block by block
    # The moderator reads what the provider said in the inspector.
    inspected = world.client("alice").get(reverse("admin:chatcontext_promptrecord_change", args=[failed.pk]))
    assert "provider returned HTTP 404: The model `x` does not exist" in unescape(inspected.content.decode())

    html = _changelist(world, "alice")
    tokens = answered.input_tokens + answered.output_tokens
    assert f'<td class="field-usage_day">1 turn<br>{tokens:,} tokens<br>cost {answered.cost.normalize():f}</td>' in html


def test_the_server_list_costs_one_query_for_its_figures_whatever_the_number_of_servers(world: World) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            _changelist(world, "root")
        return len(captured)

    before = queries()
    for n in range(3):
        server = Server.objects.create(server_disc_id=f"{77000 + n}", name=f"extra {n}")
        ServerModerator.objects.create(server=server, user=world.alice)
    assert queries() == before
