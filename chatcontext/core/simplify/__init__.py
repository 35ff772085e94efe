"""Per-message simplification of the Build Context stage (build-context.md §3, §6)."""

from chatcontext.core.simplify.base import SimplifyContext, Visibility
from chatcontext.core.simplify.core import SimplifyOutcome, simplify_message

__all__ = ["SimplifyContext", "SimplifyOutcome", "Visibility", "simplify_message"]
