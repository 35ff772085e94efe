"""Websocket routes; consumers are added by the apps that own them."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
