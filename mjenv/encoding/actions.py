"""The action layout, re-exported from where it lives, :mod:`mjenv.engine.actions` (the engine's own move list):
``from mjenv.encoding import actions as A`` keeps working for agents and older code."""

from mjenv.engine.actions import (  # noqa: F401
    CHI_HIGH,
    CHI_LOW,
    CHI_MID,
    DISCARD,
    KONG_CLAIM,
    KONG_SELF,
    KONGTILE_0,
    KONGTILE_1,
    LIANG,
    N_ACTIONS,
    PASS,
    PONG,
    WIN,
    action_id,
    action_name,
)

__all__ = ["N_ACTIONS", "DISCARD", "LIANG", "KONG_SELF", "PONG", "KONG_CLAIM", "CHI_LOW", "CHI_MID", "CHI_HIGH",
           "WIN", "PASS", "KONGTILE_0", "KONGTILE_1", "action_name", "action_id"]
