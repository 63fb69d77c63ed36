"""The action layout shared by every variant: 111 ids, their names, and parse/format helpers.

| ids      | name            | meaning                                                             |
|----------|-----------------|---------------------------------------------------------------------|
| 0–33     | ``discard:T``   | discard tile T                                                      |
| 34–67    | ``liang:T``     | discard tile T and declare 亮倒 (the engine keeps face down the      |
|          |                 | largest set of triplets docs/rules/kawuxing.md §3.6 D2 allows, when               |
|          |                 | ``liang_hide_triplets: on``)                                        |
| 68–101   | ``kong:T``      | kong of tile T on one's own turn (concealed or added, whichever     |
|          |                 | applies)                                                            |
| 102      | ``pong``        | pong the discard                                                    |
| 103      | ``kong``        | direct kong of the discard                                          |
| 104–106  | ``chi_low`` ... | chi with the claimed tile lowest / middle / highest (chi variants)  |
| 107      | ``win``         | win (self-draw, on a discard, or robbing a kong)                    |
| 108      | ``pass``        | pass                                                                |
| 109, 110 | ``kongtile:0/1``| take the first / second face-up kong tile (Gejiu)                   |

Ids a variant never uses are always masked.  Tile names use the notation of
:mod:`mjenv.tiles` (``discard:5p``).

The layout is the engine's own move list, so it lives in the engine; :mod:`mjenv.encoding.actions` re-exports it
for agents and older imports.
"""

from __future__ import annotations

from mjenv.tiles import NotationError, tile_id, tile_name

N_ACTIONS = 111
DISCARD = 0
LIANG = 34
KONG_SELF = 68
PONG = 102
KONG_CLAIM = 103
CHI_LOW, CHI_MID, CHI_HIGH = 104, 105, 106
WIN = 107
PASS = 108
KONGTILE_0, KONGTILE_1 = 109, 110

_FIXED = {
    PONG: "pong",
    KONG_CLAIM: "kong",
    CHI_LOW: "chi_low",
    CHI_MID: "chi_mid",
    CHI_HIGH: "chi_high",
    WIN: "win",
    PASS: "pass",
    KONGTILE_0: "kongtile:0",
    KONGTILE_1: "kongtile:1",
}
_BY_NAME = {v: k for k, v in _FIXED.items()}
_TILE_FAMILIES = {"discard": DISCARD, "liang": LIANG, "kong": KONG_SELF}


def action_name(action: int) -> str:
    """Readable name of an action id, e.g. ``13 -> "discard:5p"``, ``107 -> "win"``."""
    a = int(action)
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"action id {a} out of range 0..{N_ACTIONS - 1}")
    if a < PONG:
        family = "discard" if a < LIANG else "liang" if a < KONG_SELF else "kong"
        return f"{family}:{tile_name(a - _TILE_FAMILIES[family])}"
    return _FIXED[a]


def action_id(name: str) -> int:
    """Action id of a name produced by :func:`action_name` (``"liang:3s"``, ``"pass"``)."""
    text = name.strip().lower()
    if text in _BY_NAME:
        return _BY_NAME[text]
    family, sep, tile = text.partition(":")
    if sep and family in _TILE_FAMILIES:
        try:
            return _TILE_FAMILIES[family] + tile_id(tile)
        except NotationError as exc:
            raise ValueError(f"bad tile in action {name!r}: {exc}") from None
    known = ", ".join(["discard:T", "liang:T", "kong:T", *_BY_NAME])
    raise ValueError(f"unknown action {name!r}; actions are {known}")
