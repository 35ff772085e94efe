from django.urls import path

from characters.views import card_avatar

app_name = "cards"
urlpatterns = [path("<int:persona_id>/avatar.png", card_avatar, name="avatar")]
