from django.apps import AppConfig


class PersonasConfig(AppConfig):
    name = "personas"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from personas import signals  # noqa: F401  (connects the live feeds' access announcements)
