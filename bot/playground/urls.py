"""``/playground/`` (mounted in botplatform/urls.py)."""

from django.urls import path

from bot.playground import views

app_name = "playground"

urlpatterns = [
    path("", views.index, name="index"),
    path("servers/<int:server_id>/channels/", views.create_channel, name="create_channel"),
    path("channels/<int:channel_id>/messages/", views.send_message, name="send_message"),
    path("channels/<int:channel_id>/messages/<str:message_id>/reactions/", views.react, name="react"),
    path("channels/<int:channel_id>/messages/<str:message_id>/regenerate/", views.regenerate, name="regenerate"),
    path("records/<int:record_id>/panel/", views.record_panel, name="record_panel"),
    path("messages/<str:message_id>/", views.message, name="message"),
    path("attachments/<str:message_id>/<str:attachment_id>/", views.attachment, name="attachment"),
]
