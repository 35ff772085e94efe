from django.apps import AppConfig
from django.conf import settings


class BotConfig(AppConfig):
    name = "bot"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from bot.conversation.image_bytes import configure_pillow
        from bot.playground import signals  # noqa: F401  (connects the forget-me receiver)

        configure_pillow(settings.MAX_IMAGE_PIXELS)
