"""Prompt records for dashboards: list (filtered, paginated), detail, snapshot export."""

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db.models import Q
from django.http import HttpRequest, JsonResponse
from ninja import Field, FilterSchema, Query, Router, Schema
from ninja.pagination import paginate

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


class RecordSummaryOut(Schema):
    id: int
    server_id: int
    channel_disc_id: str
    channel_name: str
    persona_id: int | None
    persona_nickname: str
    trigger_message_disc_id: str
    source: str
    created_at: datetime
    provider: str
    model_name: str
    token_estimate: int = Field(description="The prompt's estimate, characters / 4 per block.")
    input_tokens: int = Field(description="Prompt tokens: the provider's count when measured, else the estimate.")
    output_tokens: int = Field(description="Reply tokens: the provider's count when measured, else an estimate.")
    tokens_measured: bool = Field(description="Whether the provider reported the prompt's token count.")
    cost: Decimal | None = Field(
        description="Cost of the turn at the server's prices per million tokens when it was written "
        "(a decimal string in the operator's billing currency); null when the server had no price."
    )
    latency_ms: int | None
    failed: bool

    @staticmethod
    def resolve_failed(obj: Any) -> bool:
        return bool(obj.error if hasattr(obj, "error") else obj["error"])


class RecordDetailOut(RecordSummaryOut):
    context_items: list[dict[str, Any]]
    simplified_messages: list[dict[str, Any]]
    message_id_map: dict[str, str]
    streaming_context: dict[str, Any]
    participant_target_index: dict[str, Any]
    diagnostics: dict[str, Any]
    exclusions: list[dict[str, Any]]
    reply_text: str
    error: str
    usage: dict[str, Any]
    tool_calls: dict[str, Any]  # the persona's tool calls of the turn; empty when it offered none


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
    # The snapshot is the largest column and the detail never returns it (it has its own export).
    return get_or_404(_records(request).defer("snapshot"), "prompt record", pk=record_id)


@router.get("/records/{record_id}/snapshot", response={200: dict[str, Any], **READ_ERRORS})
def export_snapshot(request: HttpRequest, record_id: RecordId) -> JsonResponse:
    """The turn snapshot the record was built from, as a downloadable `replay_turn` input."""
    return snapshot_download(get_or_404(_records(request).only("id", "snapshot"), "prompt record", pk=record_id))
