"""Tool deferral (public face of :mod:`agentrig.tools._deferral`)."""

from agentrig.tools._deferral import (
    SEARCH_TOOL_ID,
    DeferralError,
    DeferralPolicy,
    OfferPlan,
    estimate_schema_tokens,
    plan_offer,
)

__all__ = [
    "SEARCH_TOOL_ID",
    "DeferralError",
    "DeferralPolicy",
    "OfferPlan",
    "estimate_schema_tokens",
    "plan_offer",
]
