"""Websocket routes."""

from django.urls import path, re_path

from bot.playground.consumers import PlaygroundChannelConsumer
from chatcontext.records.consumers import ServerTurnsConsumer, refuse_unknown_socket

websocket_urlpatterns = [
    path("ws/servers/<int:server_id>/turns/", ServerTurnsConsumer.as_asgi()),
    path("ws/playground/channels/<int:channel_id>/", PlaygroundChannelConsumer.as_asgi()),
    # Channels routes ASGI applications with Django's path functions, whose stubs take only views.
    re_path("", refuse_unknown_socket),  # type: ignore[arg-type]
]
