from django.apps import AppConfig


class ChatcontextConfig(AppConfig):
    name = "chatcontext"
    default_auto_field = "django.db.models.BigAutoField"
