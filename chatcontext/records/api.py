"""Prompt records for dashboards: list (filtered, paginated), detail, snapshot export."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db.models import Q
from django.http import HttpRequest, JsonResponse
from ninja import Field, FilterSchema, Query, Router, Schema
from ninja.pagination import paginate
from pydantic import ConfigDict

from chatcontext.records.inspector import snapshot_download
from chatcontext.records.models import PromptRecord
from personas.api_common import (
    AUTH_ERRORS,
    READ_ERRORS,
    SERVER_KEY_HELP,
    BoundedPagination,
    DiscordId,
    IsoDatetime,
    RecordId,
    RowId,
    ServerKeyQuery,
    get_or_404,
    principal,
    server_lookup,
)

router = Router(tags=["prompt records"])

SUMMARY_FIELDS = (
    "id",
    "server_id",
    "channel_disc_id",
    "channel_name",
    "persona_id",
    "persona_nickname",
    "trigger_message_disc_id",
    "source",
    "created_at",
    "provider",
    "model_name",
    "token_estimate",
    "input_tokens",
    "output_tokens",
    "tokens_measured",
    "cost",
    "latency_ms",
    "error",
)


SUMMARY_EXAMPLE: dict[str, Any] = {
    "id": 1201,
    "server_id": 1,
    "channel_disc_id": "904494141407371278",
    "channel_name": "lounge",
    "persona_id": 3,
    "persona_nickname": "Tomori",
    "trigger_message_disc_id": "1180000000000000002",
    "source": "bot",
    "created_at": "2026-01-31T12:00:00Z",
    "provider": "openai",
    "model_name": "gpt-4o-mini",
    "token_estimate": 1180,
    "input_tokens": 1204,
    "output_tokens": 58,
    "tokens_measured": True,
    "cost": "0.000215",
    "latency_ms": 1840,
    "failed": False,
}


class RecordSummaryOut(Schema):
    model_config = ConfigDict(json_schema_extra={"examples": [SUMMARY_EXAMPLE]})
    id: int = Field(description="The record's id, for /records/{record_id}.")
    server_id: int = Field(description="The platform's id of the server (`server_id` of /servers).")
    channel_disc_id: str = Field(description="Discord id of the channel of the turn.")
    channel_name: str = Field(description="The channel's name at the time of the turn; may be empty.")
    persona_id: int | None = Field(
        description="The persona that answered (`persona_id` of /personas); null once deleted."
    )
    persona_nickname: str = Field(description="The persona's name at the time of the turn (kept after a deletion).")
    trigger_message_disc_id: str = Field(description="Discord id of the message that made the persona answer.")
    source: str = Field(description="Where the turn ran: bot, replay, playground or inspector.")
    created_at: datetime = Field(description="When the prompt was assembled (ISO 8601, UTC).")
    provider: str = Field(description="The LLM provider that answered, e.g. openai or echo.")
    model_name: str = Field(description="The model the provider was asked for.")
    token_estimate: int = Field(description="The prompt's estimate, characters / 4 per block.")
    input_tokens: int = Field(description="Prompt tokens: the provider's count when measured, else the estimate.")
    output_tokens: int = Field(description="Reply tokens: the provider's count when measured, else an estimate.")
    tokens_measured: bool = Field(description="Whether the provider reported the prompt's token count.")
    cost: Decimal | None = Field(
        description="Cost of the turn at the server's prices per million tokens when it was written "
        "(a decimal string in the operator's billing currency); null when the server had no price."
    )
    latency_ms: int | None = Field(description="Milliseconds from the request to the provider to its full reply.")
    failed: bool = Field(description="Whether the turn ended in an error instead of a reply (`error` in the detail).")

    @staticmethod
    def resolve_failed(obj: Any) -> bool:
        return bool(obj.error if hasattr(obj, "error") else obj["error"])


class RecordDetailOut(RecordSummaryOut):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **SUMMARY_EXAMPLE,
                    "context_items": [
                        {"role": "system", "tag": "persona", "text": "You are Tomori…", "token_estimate": 320}
                    ],
                    "simplified_messages": [
                        {"id": "1180000000000000002", "author_name": "Mina", "author_type": "user", "content": "Hi!"}
                    ],
                    "message_id_map": {"ref_1": "1180000000000000002"},
                    "streaming_context": {},
                    "participant_target_index": {"targets": []},
                    "diagnostics": {"history_messages": 1},
                    "exclusions": [{"reason": "privacy_full", "user_id": "493428865499398150", "scope": "profile"}],
                    "reply_text": "Hello, Mina!",
                    "error": "",
                    "usage": {"prompt_tokens": 1204, "completion_tokens": 58},
                    "tool_calls": {},
                    "generation": {
                        "sampling": {"temperature": 0.8, "max_reply_tokens": 300},
                        "endpoints": [
                            {
                                "endpoint": "platform",
                                "model": "big-model",
                                "answered": False,
                                "failure": "provider returned HTTP 429: Rate limit reached",
                            },
                            {"endpoint": "spare", "model": "small-model", "answered": True},
                        ],
                    },
                }
            ]
        }
    )
    context_items: list[dict[str, Any]] = Field(
        description="The prompt in order, one block per item: role, tag, text, token_estimate, message_id."
    )
    simplified_messages: list[dict[str, Any]] = Field(
        description="The conversation history the prompt was built from, after privacy rules and simplification."
    )
    message_id_map: dict[str, str] = Field(description="The prompt's `ref_N` / `media_N` ids → Discord message ids.")
    streaming_context: dict[str, Any] = Field(description="What the streaming reply needs to resolve mentions.")
    participant_target_index: dict[str, Any] = Field(
        description="The people the persona could address or mention, with their aliases."
    )
    diagnostics: dict[str, Any] = Field(description="Counts of the assembly (no ids, names or text).")
    exclusions: list[dict[str, Any]] = Field(
        description="Who and what was left out and why (reason, user_id, message_id, scope), never the text."
    )
    reply_text: str = Field(description="The persona's reply as sent; empty when none was generated.")
    error: str = Field(description="Why the turn failed; empty when it did not.")
    usage: dict[str, Any] = Field(description="The provider's usage report as it sent it; empty when it sent none.")
    tool_calls: dict[str, Any] = Field(
        description="The persona's tool calls of the turn (tools offered, rounds, each call); empty when none."
    )
    generation: dict[str, Any] = Field(
        description="How the reply was asked for: the sampling settings sent and each endpoint tried in order "
        "(endpoint name, model, whether it answered, why not); empty for the offline echo."
    )


class RecordFilter(FilterSchema):
    server_id: ServerKeyQuery | None = Field(None, description=SERVER_KEY_HELP)
    channel_disc_id: DiscordId | None = Field(None, description="Only records of this channel (its Discord id).")
    persona_id: RowId | None = Field(None, description="Only records of this persona (`persona_id` of /personas).")
    source: PromptRecord.Source | None = Field(
        None, description="Only records from this surface: bot, replay, playground or inspector."
    )
    since: IsoDatetime | None = Field(None, description="Only records created at or after this ISO 8601 time.")
    until: IsoDatetime | None = Field(None, description="Only records created before this ISO 8601 time.")

    def filter_server_id(self, value: str | None) -> Q:
        return Q(**server_lookup(value, prefix="server__")) if value else Q()

    # Bounds are compared in UTC: PostgreSQL refuses some offsets Python accepts (e.g. +21:00).
    def filter_since(self, value: datetime | None) -> Q:
        return Q(created_at__gte=_utc(value)) if value else Q()

    def filter_until(self, value: datetime | None) -> Q:
        return Q(created_at__lt=_utc(value)) if value else Q()


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # shifted past year 1 or 9999: as far as time goes
        return (datetime.min if value.year < 5000 else datetime.max).replace(tzinfo=UTC)


def _records(request: HttpRequest) -> Any:
    return principal(request).scope(PromptRecord.objects.all(), "server_id")


@router.get("/records", response={200: list[RecordSummaryOut], **AUTH_ERRORS})
@paginate(BoundedPagination)
def list_records(request: HttpRequest, filters: Query[RecordFilter]):  # type: ignore[no-untyped-def]
    """Newest first. The page costs two queries (count and page) whatever its size."""
    return filters.filter(_records(request)).only(*SUMMARY_FIELDS).order_by("-created_at", "-id")


@router.get("/records/{record_id}", response={200: RecordDetailOut, **READ_ERRORS})
def get_record(request: HttpRequest, record_id: RecordId) -> PromptRecord:
    """One turn exactly as the persona was told it: the prompt block by block, the history, what was
    left out and why, the reply or error, tokens and cost. The snapshot is its own export."""
    # The snapshot is the largest column and the detail never returns it (it has its own export).
    return get_or_404(_records(request).defer("snapshot"), "prompt record", pk=record_id)


SNAPSHOT_EXAMPLE = {
    "format": "tomori-turn-snapshot/4",
    "now_ms": 1893456000000,
    "bot_user": {"id": "1100000000000000001", "username": "tomori"},
    "server": {"disc_id": "904493457735819273", "name": "Night Owls"},
    "channel": {"id": "1170000000000000001", "name": "lounge"},
    "personas": [{"key": "p1", "persona_nickname": "Tomori", "is_alter": False, "persona_lineage_id": 10000}],
    "messages": [
        {
            "id": "1180000000000000002",
            "channel_id": "1170000000000000001",
            "author": {"id": "554947007479939075", "username": "mina"},
            "content": "Hi!",
            "created_timestamp": 1893455990000,
        }
    ],
    "turn": {"persona_key": "p1", "trigger_message_id": "1180000000000000002"},
}


@router.get(
    "/records/{record_id}/snapshot",
    response={200: dict[str, Any], **READ_ERRORS},
    openapi_extra={"responses": {200: {"content": {"application/json": {"example": SNAPSHOT_EXAMPLE}}}}},
)
def export_snapshot(request: HttpRequest, record_id: RecordId) -> JsonResponse:
    """The turn snapshot the record was built from, as a downloadable `replay_turn` input."""
    return snapshot_download(get_or_404(_records(request).only("id", "snapshot"), "prompt record", pk=record_id))
