"""Where a console page sends the moderator after a change: back to the page they came from.

A page that links to a form or posts an action adds ``next=<its own URL>``; the action or form, when
done, redirects there instead of to a generic list, as Django's login does. ``next`` comes from the
browser, so it is followed only when ``url_has_allowed_host_and_scheme`` says it stays on this site
(no open redirect to another host, scheme or a ``//host`` path).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme, urlencode

NEXT = "next"
# A message names up to this many users; beyond, it counts them.
NAMED_USERS = 3
Default = TypeVar("Default", bound=HttpResponse | None)


def return_url(request: HttpRequest) -> str | None:
    """The page to go back to, when the request names one on this site."""
    url = request.POST.get(NEXT) or request.GET.get(NEXT)
    safe = url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()}, require_https=request.is_secure())
    return url if url and safe else None


def with_next(url: str, back: str) -> str:
    """``url`` with ``next=back``, for a link from a page that wants the moderator back."""
    return f"{url}{'&' if '?' in url else '?'}{urlencode({NEXT: back})}"


def users_named(users: Iterable[Any]) -> str:
    """The users a message is about, by name: "Mina", "Mina and Rei", or "5 users"."""
    names = [str(u) for u in users]
    if len(names) > NAMED_USERS:
        return f"{len(names)} users"
    return f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "".join(names)


def back_or(request: HttpRequest, default: Default) -> HttpResponseRedirect | Default:
    """Redirect to ``next`` when the request names a safe one, else answer ``default`` (an action's
    None lets Django's changelist redirect to itself)."""
    back = return_url(request)
    return HttpResponseRedirect(back) if back else default


class ReturnToNextMixin:
    """A model admin whose change, add and delete pages, reached with ``?next=``, return there once
    done (each form posts to its own URL, query string included). "Save and continue editing" and
    "Save and add another" keep their own meaning."""

    STAY = frozenset({"_continue", "_addanother", "_saveasnew"})

    def _back(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        if self.STAY & set(request.POST) or not isinstance(response, HttpResponseRedirect):
            return response
        return back_or(request, response)

    def response_change(self, request: HttpRequest, obj: Any) -> HttpResponse:
        return self._back(request, super().response_change(request, obj))  # type: ignore[misc]

    def render_change_form(self, request: HttpRequest, context: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        # For the submit row (templates/admin/personas/<model>/submit_line.html): Delete keeps ``next``.
        back = return_url(request)
        if back is not None:
            context.update(return_to=back, return_query=urlencode({NEXT: back}))
        return super().render_change_form(request, context, *args, **kwargs)  # type: ignore[misc]

    def response_add(self, request: HttpRequest, obj: Any, post_url_continue: str | None = None) -> HttpResponse:
        return self._back(request, super().response_add(request, obj, post_url_continue))  # type: ignore[misc]

    def response_delete(self, request: HttpRequest, obj_display: str, obj_id: Any) -> HttpResponse:
        return self._back(request, super().response_delete(request, obj_display, obj_id))  # type: ignore[misc]
