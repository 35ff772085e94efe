from django.apps import AppConfig


class BotConfig(AppConfig):
    name = "bot"
    default_auto_field = "django.db.models.BigAutoField"
