"""Websocket routes."""

from django.urls import path, re_path

from bot.playground.consumers import PlaygroundChannelConsumer
from chatcontext.records.consumers import NoSuchSocket, ServerTurnsConsumer

websocket_urlpatterns = [
    path("ws/servers/<int:server_id>/turns/", ServerTurnsConsumer.as_asgi()),
    path("ws/playground/channels/<int:channel_id>/", PlaygroundChannelConsumer.as_asgi()),
    re_path("", NoSuchSocket.as_asgi()),
]
