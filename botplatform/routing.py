"""Websocket routes."""

from django.urls import path

from chatcontext.consumers import ServerTurnsConsumer

websocket_urlpatterns = [
    path("ws/servers/<int:server_id>/turns/", ServerTurnsConsumer.as_asgi()),
]
