"""Tools that explain what thunder did: what a call saved for backward, which executor took each operation and why
another did not, and more."""

from thunder.examine.cache_report import CacheReport, cache_report  # noqa: F401
from thunder.examine.claims import Claim, claims
from thunder.examine.saved import SavedForBackward, saved_for_backward

__all__ = ["saved_for_backward", "SavedForBackward", "claims", "Claim"]
