"""The playground page and its endpoints (issue 8), for staff only.

Servers are scoped like the inspector's through ``personas.access.principal_for_user``: a
moderator sees the servers they moderate, a superuser all. Anything outside them — a server, a
channel, a message, a record, an attachment — is a 404, never a 403, so ids leak nothing. Accounts
that are not staff are sent to the admin login.
"""

from __future__ import annotations

import functools
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from bot.conversation.image_bytes import ImageRefused, inspect_image
from bot.conversation.planner import wall_clock_ms
from bot.conversation.providers import build_provider, provider_config
from bot.playground import live, store
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.regenerate import regenerate_reply
from bot.playground.service import (
    PlaygroundOutcome,
    playground_runner,
    post_playground_message,
    server_state,
)
from chatcontext.core.storable import storable_text
from chatcontext.core.types import Author
from chatcontext.models import PromptRecord
from chatcontext.records import inspector
from chatcontext.records.admin import record_links
from chatcontext.records.tool_calls import tool_calls_view
from chatcontext.repository import load_personas
from personas import models as m
from personas.access import Principal, principal_for_user

HISTORY_SHOWN = 200
RECENT_RECORDS = 20
# The echo provider answers at once; on the page its words arrive at a pace a person can watch.
ECHO_STREAM_PACE_S = 0.04
WEB_RUNNER = playground_runner(provider_factory=functools.partial(build_provider, echo_pace_s=ECHO_STREAM_PACE_S))


class BadRequest(Exception):
    pass


def _form(request: HttpRequest, name: str) -> str:
    """A form field as storable text: a NUL (`%00`) would fail PostgreSQL's write (chatcontext.core.storable)."""
    return storable_text(request.POST.get(name, ""))


def _principal(user: Any) -> Principal:
    who = principal_for_user(user)
    if who is None:  # staff_member_required let only active staff through
        raise Http404
    return who


def _server(who: Principal, server_id: Any) -> m.Server:
    if not str(server_id).isdigit() or not who.sees(int(server_id)):
        raise Http404("No such server.")
    return get_object_or_404(m.Server.objects.select_related("settings"), pk=int(server_id))


def _channel(who: Principal, channel_id: int) -> PlaygroundChannel:
    channel = get_object_or_404(PlaygroundChannel.objects.select_related("server", "server__settings"), pk=channel_id)
    if not who.sees(channel.server_id):
        raise Http404("No such channel.")
    return channel


def _identity(server: m.Server, disc_id: str) -> store.Identity:
    found = next((i for i in store.identities(server) if i.disc_id == disc_id), None)
    if found is None:
        raise BadRequest("Pick someone of this server to speak as.")
    return found


def _panel_context(request: HttpRequest, record: PromptRecord) -> dict[str, Any]:
    links = record_links(admin.site, request, record, record.exclusions)
    return {
        "record": record,
        "blocks": inspector.record_blocks(record),
        "exclusions": inspector.exclusion_entries(record.exclusions, links),
        "tool_calls": tool_calls_view(record.tool_calls),
        "command": inspector.command_rows(record.command),
        "inspector_url": reverse("admin:chatcontext_promptrecord_change", args=[record.pk]),
    }


def default_speaker(people: list[store.Identity]) -> str:
    """The first MINIMAL member, whose whole profile reaches the prompt: the first turn shows what a
    persona can know; else the first member."""
    minimal = [p for p in people if p.privacy_level == m.PrivacyLevel.MINIMAL]
    return (minimal or people)[0].disc_id if people else ""


def _record_summary(record: PromptRecord) -> dict[str, Any]:
    return {
        "id": record.pk,
        "persona": record.persona_nickname,
        "provider": record.provider,
        "error": record.error,
        "trigger_message_id": record.trigger_message_disc_id,
        "panel_url": reverse("playground:record_panel", args=[record.pk]),
    }


@staff_member_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    who = _principal(request.user)
    servers = list(who.scope(m.Server.objects.order_by("name", "server_id")))
    context: dict[str, Any] = {**admin.site.each_context(request), "servers": servers, "title": "Playground"}
    requested = request.GET.get("server")
    server = _server(who, requested) if requested else (servers[0] if servers else None)
    if server is None:
        return render(request, "playground/index.html", context)
    channels = list(PlaygroundChannel.objects.filter(server=server).order_by("name", "id"))
    requested_channel = request.GET.get("channel")
    if requested_channel:
        channel = next((c for c in channels if str(c.pk) == requested_channel), None)
        if channel is None:
            raise Http404("No such channel.")
    else:
        channel = channels[0] if channels else None
    # Read only: the first message registers a main persona if the server has none (bot.conversation.state).
    personas = load_personas(server.server_id)
    bot_user = store.bot_identity(server, next((p for p in personas if not p.is_alter), None))
    people = store.identities(server)
    context.update(
        server=server,
        channels=channels,
        channel=channel,
        identities=people,
        selected_identity=request.GET.get("identity") or default_speaker(people),
        personas=personas,
        bot_user=bot_user,
        echo_provider=provider_config(server.settings).kind == "echo",
        names={**{i.disc_id: i.name for i in people}, bot_user.id: bot_user.display_name},
    )
    if channel is not None:
        rows = list(
            PlaygroundMessage.objects.filter(channel=channel)
            .select_related("reply_to")
            .order_by("-created_at_ms", "-id")[:HISTORY_SHOWN]
        )
        rows.reverse()
        records = list(
            PromptRecord.objects.filter(
                server=server, channel_disc_id=channel.disc_id, source=PromptRecord.Source.PLAYGROUND
            )
            .only("id", "persona_nickname", "provider", "error", "trigger_message_disc_id", "created_at")
            .order_by("-created_at", "-id")[:RECENT_RECORDS]
        )
        latest = PromptRecord.objects.filter(pk=records[0].pk).first() if records else None
        context.update(
            # Not "messages": that name belongs to django.contrib.messages in the admin's base template.
            chat_messages=live.message_payloads(channel, rows, bot_user=bot_user),
            records=[_record_summary(r) for r in records],
            **(_panel_context(request, latest) if latest else {}),
        )
    return render(request, "playground/index.html", context)


@staff_member_required
@require_POST
def create_channel(request: HttpRequest, server_id: int) -> HttpResponse:
    server = _server(_principal(request.user), server_id)
    try:
        channel = store.create_channel(
            server,
            _form(request, "name"),
            topic=_form(request, "topic"),
            created_by=request.user,
            now_ms=wall_clock_ms(),
        )
    except store.PlaygroundError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    return HttpResponseRedirect(f"{reverse('playground:index')}?server={server.pk}&channel={channel.pk}")


def _message_arguments(
    request: HttpRequest, channel_id: int
) -> tuple[PlaygroundChannel, str, PlaygroundMessage | None]:
    who = _principal(request.user)
    channel = _channel(who, channel_id)
    identity = _identity(channel.server, _form(request, "identity"))
    reply_to = None
    if reply_id := _form(request, "reply_to").strip():
        reply_to = PlaygroundMessage.objects.filter(channel=channel, disc_id=reply_id).first()
        if reply_to is None:
            raise BadRequest("The message replied to is not in this channel.")
    return channel, identity.disc_id, reply_to


def _bot_user(channel: PlaygroundChannel) -> Author:
    return store.bot_identity(channel.server, server_state(channel.server).main_persona)


def _outcome_payload(channel: PlaygroundChannel, outcome: PlaygroundOutcome) -> dict[str, Any]:
    rows = [outcome.message, *(r.reply for r in outcome.results)]
    fresh = list(PlaygroundMessage.objects.filter(pk__in=[r.pk for r in rows if r]).select_related("reply_to"))
    return {
        # A slash command's private answer (its notices reach the page over the websocket).
        "command": {"text": outcome.command.text, "refused": outcome.command.refused} if outcome.command else None,
        "skip": outcome.skip,
        "messages": live.message_payloads(channel, fresh, bot_user=_bot_user(channel)),
        "records": [_record_summary(r) for r in outcome.records],
        "transcription": outcome.transcription.status if outcome.transcription else None,
    }


@staff_member_required
@require_POST
async def send_message(request: HttpRequest, channel_id: int) -> HttpResponse:
    """Post as the chosen identity; answers when this message's turns are done (the reply streams
    to the page over the websocket meanwhile)."""
    try:
        channel, author, reply_to = await sync_to_async(_message_arguments)(request, channel_id)
        outcome = await post_playground_message(
            channel,
            author,
            _form(request, "content"),
            reply_to=reply_to,
            attachments=request.FILES.getlist("files"),
            runner=WEB_RUNNER,
            posted_by=request.user.pk,
        )
    except (BadRequest, store.PlaygroundError) as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    return JsonResponse(await sync_to_async(_outcome_payload)(channel, outcome))


@staff_member_required
@require_POST
def react(request: HttpRequest, channel_id: int, message_id: str) -> HttpResponse:
    try:
        channel, author, _ = _message_arguments(request, channel_id)
        message = get_object_or_404(PlaygroundMessage, channel=channel, disc_id=message_id)
        message = store.toggle_reaction(message, _form(request, "emoji"), author)
    except (BadRequest, store.PlaygroundError) as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    bot_user = _bot_user(channel)
    async_to_sync(live.publish_message)(channel, message, bot_user)
    fresh = PlaygroundMessage.objects.select_related("reply_to").get(pk=message.pk)
    return JsonResponse({"message": live.message_payloads(channel, [fresh], bot_user=bot_user)[0]})


@staff_member_required
@require_POST
async def regenerate(request: HttpRequest, channel_id: int, message_id: str) -> HttpResponse:
    """The Regenerate button of a persona's reply (``bot.playground.regenerate``): answers with the
    rewritten reply and the new record once the turn is done."""
    try:
        channel, author, _ = await sync_to_async(_message_arguments)(request, channel_id)
        reply = (
            await PlaygroundMessage.objects.select_related("reply_to")
            .filter(channel=channel, disc_id=message_id)
            .afirst()
        )
        if reply is None:
            raise Http404("No such message in this channel.")
        results = await regenerate_reply(
            channel, reply, asker_disc_id=author, runner=WEB_RUNNER, posted_by=request.user.pk
        )
    except (BadRequest, store.PlaygroundError) as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    outcome = PlaygroundOutcome(message=reply, results=results)
    return JsonResponse(await sync_to_async(_outcome_payload)(channel, outcome))


@staff_member_required
@require_GET
def record_panel(request: HttpRequest, record_id: int) -> HttpResponse:
    """The prompt of one turn block by block, with its exclusion log (an HTML fragment)."""
    who = _principal(request.user)
    record = get_object_or_404(who.scope(PromptRecord.objects.all()), pk=record_id)
    return render(request, "playground/_prompt_panel.html", _panel_context(request, record))


@staff_member_required
@require_GET
def message(request: HttpRequest, message_id: str) -> HttpResponse:
    """A playground message by its id (the inspector links here): its channel, scrolled to it."""
    who = _principal(request.user)
    found = get_object_or_404(PlaygroundMessage.objects.select_related("channel"), disc_id=message_id)
    if not who.sees(found.channel.server_id):
        raise Http404
    query = urlencode({"server": found.channel.server_id, "channel": found.channel_id})
    return HttpResponseRedirect(f"{reverse('playground:index')}?{query}#msg-{found.disc_id}")


@staff_member_required
@require_GET
def attachment(request: HttpRequest, message_id: str, attachment_id: str) -> HttpResponseBase:
    who = _principal(request.user)
    message = get_object_or_404(PlaygroundMessage.objects.select_related("channel"), disc_id=message_id)
    if not who.sees(message.channel.server_id):
        raise Http404
    stored = next((a for a in message.attachments or [] if a.get("id") == attachment_id), None)
    if stored is None:
        raise Http404
    path = store.attachment_path(stored)
    if not path.is_file():
        raise Http404
    # Shown inline only as what its bytes are, an allowed raster image; anything else (an HTML page, an
    # SVG, whatever the uploader declared) is a download the browser never renders on this origin.
    try:
        content_type, inline = inspect_image(path).content_type, True
    except ImageRefused:
        content_type, inline = "application/octet-stream", False
    return FileResponse(path.open("rb"), filename=stored["name"], content_type=content_type, as_attachment=not inline)
