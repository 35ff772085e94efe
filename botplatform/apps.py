from django.apps import AppConfig


class BotplatformConfig(AppConfig):
    name = "botplatform"

    def ready(self) -> None:
        from botplatform import checks  # noqa: F401  (registers the deployment checks)
