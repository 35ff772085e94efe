from django.apps import AppConfig


class BotConfig(AppConfig):
    name = "bot"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from bot.playground import signals  # noqa: F401  (connects the forget-me receiver)
