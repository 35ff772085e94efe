"""Admin for prompt records: the inspector's pages, scoped to the moderator's servers."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db.models import Model, OuterRef, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from chatcontext.records import inspector
from chatcontext.records.commands import versions_of
from chatcontext.records.models import PromptRecord
from chatcontext.records.search import participant_match
from chatcontext.records.tool_calls import tool_calls_view
from chatcontext.snapshot import SnapshotError
from personas.admin.common import ConsoleMedia
from personas.admin.scoping import ServerScopedAdminMixin, scoped_like_admin
from personas.models import DiscordUser


def message_url(record: PromptRecord, message_id: str) -> str | None:
    """Where a moderator opens a message of the record: Discord for the bot's records, the playground
    channel for playground ones; replays have no live message."""
    if not message_id:
        return None
    if record.source == PromptRecord.Source.BOT:
        guild = "@me" if record.server.is_dm_channel else record.server.server_disc_id
        return f"https://discord.com/channels/{guild}/{record.channel_disc_id}/{message_id}"
    if record.source == PromptRecord.Source.PLAYGROUND:
        return reverse("playground:message", args=[message_id])
    return None


def record_links(
    site: admin.AdminSite, request: HttpRequest, record: PromptRecord, exclusions: list[dict[str, Any]]
) -> inspector.RecordLinks:
    """Names and links for the people and messages ``exclusions`` (and the trigger) name by id, as the
    reader may see them: the Discord username of a user their servers know (linked to the user's page),
    else the name the record itself rendered, never a saved nickname (one query)."""
    user_ids = (inspector.exclusion_user_ids(exclusions) | {inspector.trigger_author_id(record)}) - {""}
    visible = scoped_like_admin(site, request, DiscordUser.objects.filter(user_disc_id__in=sorted(user_ids)))
    names = inspector.rendered_user_names(record.simplified_messages)
    urls: dict[str, str] = {}
    for pk, disc_id, username in visible.values_list("pk", "user_disc_id", "username"):
        names[disc_id] = username or names.get(disc_id, "")
        urls[disc_id] = reverse("admin:personas_discorduser_change", args=[pk], current_app=site.name)
    message_ids = {str(e.get("message_id") or "") for e in exclusions} | {record.trigger_message_disc_id}
    message_urls = {mid: url for mid in message_ids if (url := message_url(record, mid))}
    return inspector.RecordLinks(
        names={uid: names[uid] for uid in user_ids if names.get(uid)}, user_urls=urls, message_urls=message_urls
    )


# The inspector page's query parameter naming the record its prompt is diffed against.
COMPARE_PARAM = "against"

# Heavy JSON columns a changelist row never shows: left out of the page query. The simplified history
# and the reply stay: a row previews the trigger (from the history, as the inspector shows it) and the reply;
# deferred, each row would fetch its history in a query of its own.
RECORD_DETAIL_FIELDS = (
    "context_items",
    "message_id_map",
    "streaming_context",
    "participant_target_index",
    "diagnostics",
    "exclusions",
    "snapshot",
    "usage",
    "subject_user_ids",
)


class FailedListFilter(admin.SimpleListFilter):
    title = "outcome"
    parameter_name = "failed"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        return [("yes", "Failed turns"), ("no", "Answered turns")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.exclude(error="")
        if self.value() == "no":
            return queryset.filter(error="")
        return queryset


def channel_names(records: QuerySet[Any]) -> QuerySet[Any]:
    """(channel id, its latest non-empty name or None) of ``records``: one row per channel, one query."""
    named = records.filter(channel_disc_id=OuterRef("channel_disc_id")).exclude(channel_name="")
    latest = Subquery(named.order_by("-created_at", "-pk").values("channel_name")[:1])
    return records.order_by().annotate(latest_name=latest).values_list("channel_disc_id", "latest_name").distinct()


class ChannelListFilter(admin.SimpleListFilter):
    """The channels of the records the reader may see, by their latest name."""

    title = "channel"
    parameter_name = "channel"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
        names = {
            disc_id: f"#{name}" if name else disc_id
            for disc_id, name in channel_names(model_admin.get_queryset(request))
        }
        return sorted(names.items(), key=lambda pair: pair[1].lower())

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        return queryset.filter(channel_disc_id=self.value()) if self.value() else queryset


class PromptRecordChangeList(ChangeList):
    def get_queryset(self, request: HttpRequest, exclude_parameters: list[str | None] | None = None) -> QuerySet[Any]:
        return super().get_queryset(request, exclude_parameters).defer(*RECORD_DETAIL_FIELDS)


@admin.register(PromptRecord)
class PromptRecordAdmin(ServerScopedAdminMixin, admin.ModelAdmin):
    """The prompt inspector (issue 5): what a persona was told on one turn, and why.

    Records are immutable: nobody adds or edits them here; only superusers delete. Moderators see
    the records of the servers they moderate and get a 404 for any other (``ServerScopedAdminMixin``).
    A changelist page costs a constant number of queries: the server comes with the page query and
    the persona and channel are read from the record's own columns.
    """

    # Narrow columns first, the previews last: at 1280 px every number stays in view.
    list_display = [
        "created_at",
        "persona_name",
        "channel",
        "tokens",
        "cost",
        "latency",
        "failed",
        "turn",
    ]
    list_display_links = ["created_at"]
    list_select_related = ["server"]
    list_filter = [
        FailedListFilter,
        ("persona", admin.RelatedOnlyFieldListFilter),
        ChannelListFilter,
        "source",
        ("server", admin.RelatedOnlyFieldListFilter),
    ]
    actions = ["compare_selected"]
    Media = ConsoleMedia
    search_fields = ["channel_name", "persona_nickname", "=trigger_message_disc_id"]  # and participants
    date_hierarchy = "created_at"
    show_full_result_count = False
    list_per_page = 50

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[PromptRecord], search_term: str
    ) -> tuple[QuerySet[PromptRecord], bool]:
        """The columns above, or a participant of the record (a name in its participant index, or the
        Discord id of a user it is about): one query still."""
        found, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if term:
            found = found | queryset.filter(participant_match(term))
        return found, may_have_duplicates

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return PromptRecordChangeList

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_superuser) and super().has_delete_permission(request, obj)

    @admin.display(description="channel", ordering="channel_name")
    def channel(self, obj: PromptRecord) -> str:
        return f"#{obj.channel_name}" if obj.channel_name else obj.channel_disc_id

    @admin.display(description="persona", ordering="persona_nickname")
    def persona_name(self, obj: PromptRecord) -> str:
        return obj.persona_nickname or "–"

    @admin.display(description="trigger → reply")
    def turn(self, obj: PromptRecord) -> str:
        """Two lines the stylesheet cuts to the column's width (console.css); the title holds the rest."""
        trigger, reply = inspector.trigger_preview(obj) or "–", inspector.preview(obj.reply_text) or "–"
        return format_html(
            '<span class="turn-trigger" title="{}">{}</span><span class="turn-reply" title="{}">↳ {}</span>',
            trigger,
            trigger,
            reply,
            reply,
        )

    @admin.action(description="Compare the two selected", permissions=["view"])
    def compare_selected(self, request: HttpRequest, queryset: QuerySet[PromptRecord]) -> HttpResponse | None:
        """The inspector page of the later turn, its prompt diffed against the earlier one."""
        pair = list(queryset.order_by("created_at", "id").values_list("pk", flat=True)[:3])
        if len(pair) != 2:
            self.message_user(request, "Select exactly two turns to compare.", messages.WARNING)
            return None
        earlier, later = pair
        url = reverse("admin:chatcontext_promptrecord_change", args=[later], current_app=self.admin_site.name)
        return HttpResponseRedirect(f"{url}?{COMPARE_PARAM}={earlier}#diff")

    @admin.display(description="tokens in / out", ordering="input_tokens")
    def tokens(self, obj: PromptRecord) -> str:
        return f"{obj.input_tokens} / {obj.output_tokens}" + ("" if obj.tokens_measured else " (est.)")

    @admin.display(description="latency (ms)", ordering="latency_ms")
    def latency(self, obj: PromptRecord) -> int | None:
        return obj.latency_ms

    # Words, not Django's boolean icons: a red cross on every answered turn read as a failure.
    @admin.display(description="failed", ordering="error")
    def failed(self, obj: PromptRecord) -> str:
        return "failed" if obj.error else ""

    def get_urls(self) -> list[URLPattern]:
        info = self.opts.app_label, self.opts.model_name
        own = [
            path(
                "<path:object_id>/snapshot/",
                self.admin_site.admin_view(self.snapshot_view),
                name="{}_{}_snapshot".format(*info),
            ),
            path(
                "<path:object_id>/replay/",
                self.admin_site.admin_view(self.replay_view),
                name="{}_{}_replay".format(*info),
            ),
        ]
        return own + super().get_urls()

    def _record(self, request: HttpRequest, object_id: str) -> PromptRecord:
        record: PromptRecord = self.get_object(request, unquote(object_id))  # 404 outside the moderator's servers
        if not self.has_view_permission(request, record):
            raise PermissionDenied
        return record

    def _context(self, request: HttpRequest, record: PromptRecord, **extra: Any) -> dict[str, Any]:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "app_label": self.opts.app_label,
            "original": record,
            "record": record,
            "has_view_permission": True,
            "has_delete_permission": self.has_delete_permission(request, record),
            **extra,
        }

    def change_view(
        self, request: HttpRequest, object_id: str, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """The inspector page: prompt blocks, history, exclusion log, diagnostics, reply, diff."""
        record = self._record(request, object_id)
        against = request.GET.get(COMPARE_PARAM)
        # Another turn the reader may see (else a 404), or by default this persona's previous one here.
        previous = self._record(request, against) if against else inspector.previous_record(record)
        diff = (
            inspector.prompt_diff(
                previous.context_items,
                record.context_items,
                before_label=inspector.record_label(previous),
                after_label=inspector.record_label(record),
            )
            if previous is not None
            else []
        )
        blocks = inspector.record_blocks(record)
        links = record_links(self.admin_site, request, record, record.exclusions)
        trigger_author = inspector.trigger_author_id(record)
        context = self._context(
            request,
            record,
            title=f"Prompt record {record.pk}",
            subtitle=str(record),
            blocks=blocks,
            history=inspector.history_entries(record.simplified_messages, record.message_id_map),
            tool_calls=tool_calls_view(record.tool_calls),
            command=inspector.command_rows(record.command),
            exclusions=inspector.exclusion_entries(record.exclusions, links),
            trigger={
                "message_url": links.message_urls.get(record.trigger_message_disc_id),
                "author_id": trigger_author,
                "author_name": links.names.get(trigger_author, ""),
                "author_url": links.user_urls.get(trigger_author),
            },
            diagnostics=json.dumps(record.diagnostics, indent=2, ensure_ascii=False, sort_keys=True),
            usage=json.dumps(record.usage, indent=2, ensure_ascii=False, sort_keys=True) if record.usage else "",
            previous=previous,
            compared_by_choice=bool(against),
            diff=diff,
            has_snapshot=bool(record.snapshot),
            versions=versions_of(record),
            **(extra_context or {}),
        )
        return TemplateResponse(request, "admin/chatcontext/promptrecord/detail.html", context)

    def snapshot_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        record = self._record(request, object_id)
        if not record.snapshot:
            raise Http404("This record has no stored snapshot.")
        return inspector.snapshot_download(record)

    def replay_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """POST only (the admin wraps it in CSRF protection): assemble the snapshot again against
        today's data and show the diff. Nothing is written."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        record = self._record(request, object_id)
        change_url = reverse(
            "admin:chatcontext_promptrecord_change", args=[record.pk], current_app=self.admin_site.name
        )
        try:
            outcome = inspector.replay_now(record)
        except inspector.ReplayUnavailable as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return HttpResponseRedirect(change_url)
        except SnapshotError as exc:
            # Only the path: a schema message may quote the offending value, which can be user text.
            self.message_user(
                request, f"The stored snapshot cannot be replayed (invalid at {exc.path}).", messages.ERROR
            )
            return HttpResponseRedirect(change_url)
        context = self._context(
            request,
            record,
            title=f"Replay of prompt record {record.pk}",
            subtitle=str(record),
            outcome=outcome,
            exclusions=inspector.exclusion_entries(
                outcome.exclusions, record_links(self.admin_site, request, record, outcome.exclusions)
            ),
            change_url=change_url,
        )
        return TemplateResponse(request, "admin/chatcontext/promptrecord/replay.html", context)
