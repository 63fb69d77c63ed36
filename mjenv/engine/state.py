"""The engine's state: every table's arrays, their dtypes and shapes, in one place.

Struct of arrays with a leading batch axis ``B`` (tables) and a seat axis ``n``.  Everything the
rules need lives here; derived conveniences (``melded``) are kept in step with the primary
arrays and checked by :func:`mjenv.engine.validate.validate`.

The engine keeps the arrays *packed*: every int8/bool field of a table lies in one row of an int8
buffer ``[B, ROW8]``, every int16 field in one row of an int16 buffer ``[B, ROW16]`` and the money in a
float64 ``[B, 4]``, at the fixed column offsets ``O8_*`` / ``O16_*`` below (room for 4 seats and the
largest wall whatever the variant).  :func:`allocate_packed` returns the three buffers and a
:class:`State` whose fields are numpy *views* into them, so Python code reads and writes the usual
named arrays while the compiled kernels (:mod:`mjenv.engine.entry`) receive just three arrays — a
compiled call pays per argument, and 36 arrays would cost ~6 µs a call.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

# Phases of the state machine (docs/rules/common.md §1.7).  DRAW is never a resting phase: draws happen
# inside a step, so an agent only ever sees a seat that must decide something.
TURN = 0  # AFTER_DRAW: the acting seat holds 14 - 3m tiles; may win, kong or discard
CLAIMED = 1  # AFTER_CLAIM: after a pong/chi the claimer must discard
CLAIM = 2  # claim window on a discard
ROB = 3  # rob window on an added kong
DONE = 4  # hand over
PICK = 5  # Gejiu: the konger chooses one of the face-up kong tiles as its replacement
PHASE_NAMES = ("turn", "claimed", "claim", "rob", "done", "pick")

# Meld kinds stored in ``meld_kind`` (0 = empty slot); letters as in the hand notation.
PONG_MELD, CHI_MELD, DIRECT_KONG, ADDED_KONG, CONCEALED_KONG = 1, 2, 3, 4, 5
MELD_LETTERS = " PCKAX"

MAX_MELDS = 4
MAX_RIVER = 48  # a seat cannot discard more often than there are live-wall tiles plus one


@dataclass
class State:
    """All tables' state.  Shapes: B tables, n seats, W wall tiles."""

    hand: np.ndarray  # int8 [B, n, 34] concealed counts
    melded: np.ndarray  # int8 [B, n, 34] tiles in declared melds (a kong counts 4)
    meld_kind: np.ndarray  # int8 [B, n, 4] one of the *_MELD / *_KONG codes, 0 = empty
    meld_tile: np.ndarray  # int8 [B, n, 4] lowest tile of the meld
    meld_src: np.ndarray  # int8 [B, n, 4] seat claimed from, -1 for none
    n_melds: np.ndarray  # int8 [B, n]
    river: np.ndarray  # int8 [B, n, MAX_RIVER] unclaimed discards in order
    river_time: np.ndarray  # int16 [B, n, MAX_RIVER] global discard counter when made (recency)
    river_len: np.ndarray  # int16 [B, n]
    wall: np.ndarray  # int8 [B, W] tiles in the order they leave the wall (deal first)
    front: np.ndarray  # int16 [B] next normal draw index
    back: np.ndarray  # int16 [B] one past the next replacement tile
    dealer: np.ndarray  # int8 [B]
    cur: np.ndarray  # int8 [B] seat whose turn it is (drawer / discarder)
    actor: np.ndarray  # int8 [B] seat that must act now
    phase: np.ndarray  # int8 [B]
    drawn: np.ndarray  # int8 [B] tile drawn this turn (-1 after a claim)
    turns: np.ndarray  # int8 [B, n] discards made this hand per seat (0 = still in its first turn; angang_timing)
    revealed: np.ndarray  # bool [B, n] declared 亮倒
    reveal_seq: np.ndarray  # int8 [B, n] order of 亮倒 declarations, -1 if not revealed
    hidden: np.ndarray  # bool [B, n, 34] concealed triplets kept face down after 亮倒
    after_kong: np.ndarray  # int8 [B] chain position of the kong whose replacement ``cur`` just drew, 0 if none
    claim_kong_pos: np.ndarray  # int8 [B] after_kong of the discarder when the tile under claim was discarded
    kong_count: np.ndarray  # int8 [B, n] kongs completed this hand
    lock: np.ndarray  # int16 [B, n] missed-win lock value M (0 = not locked; Yangzhou family: 1 = locked)
    dadiaoche: np.ndarray  # int8 [B, n] Yangzhou family 大吊车 exception: the tile a locked player may still win on, -1 none
    claim_tile: np.ndarray  # int8 [B] tile under claim (discard or added-kong tile), -1 if none
    claim_from: np.ndarray  # int8 [B] discarder / konger
    claim_opts: np.ndarray  # int8 [B, n] eligibility in the window: bit 1 win, 2 pong, 4 direct kong, 8/16/32 chi low/mid/high
    claim_value: np.ndarray  # int16 [B, n] V_D of an eligible win (for the missed-win lock)
    claim_reply: np.ndarray  # int8 [B, n] chosen action id, -1 pending / not asked
    kong_tiles: np.ndarray  # int8 [B, 2] Gejiu face-up kong tiles (-1 = none); other variants keep -1
    rob_replacement: np.ndarray  # bool [B] the open ROB window is on a kong's replacement tile (Gejiu), not an added kong
    money: np.ndarray  # float64 [B, n] this hand's money so far (kong money, then settlement)
    n_discards: np.ndarray  # int16 [B] discards made this hand (clock for river_time)

    def copy(self) -> "State":
        """Deep copy (used to make ``step`` all-or-nothing and for tests)."""
        return State(**{f.name: getattr(self, f.name).copy() for f in fields(self)})

    def take(self, idx) -> "State":
        """The sub-batch of tables ``idx`` as a new State."""
        return State(**{f.name: getattr(self, f.name)[idx].copy() for f in fields(self)})


MAX_SEATS = 4
MAX_WALL = 136

# (name, buffer, per-table shape with "n" for the seat axis and "W" for the wall, fill value)
_PACKED_FIELDS = (
    ("hand", 8, ("n", 34), 0),
    ("melded", 8, ("n", 34), 0),
    ("meld_kind", 8, ("n", MAX_MELDS), 0),
    ("meld_tile", 8, ("n", MAX_MELDS), -1),
    ("meld_src", 8, ("n", MAX_MELDS), -1),
    ("n_melds", 8, ("n",), 0),
    ("river", 8, ("n", MAX_RIVER), -1),
    ("wall", 8, ("W",), 0),
    ("dealer", 8, (), 0),
    ("cur", 8, (), 0),
    ("actor", 8, (), 0),
    ("phase", 8, (), DONE),
    ("drawn", 8, (), -1),
    ("turns", 8, ("n",), 0),
    ("revealed", 8, ("n",), 0),
    ("reveal_seq", 8, ("n",), -1),
    ("hidden", 8, ("n", 34), 0),
    ("after_kong", 8, (), 0),
    ("claim_kong_pos", 8, (), 0),
    ("kong_count", 8, ("n",), 0),
    ("dadiaoche", 8, ("n",), -1),
    ("claim_tile", 8, (), -1),
    ("claim_from", 8, (), -1),
    ("claim_opts", 8, ("n",), 0),
    ("claim_reply", 8, ("n",), -1),
    ("kong_tiles", 8, (2,), -1),
    ("rob_replacement", 8, (), 0),
    ("river_time", 16, ("n", MAX_RIVER), 0),
    ("river_len", 16, ("n",), 0),
    ("front", 16, (), 0),
    ("back", 16, (), 0),
    ("lock", 16, ("n",), 0),
    ("claim_value", 16, ("n",), 0),
    ("n_discards", 16, (), 0),
    ("money", 64, ("n",), 0.0),
)
_BOOL_FIELDS = ("revealed", "hidden", "rob_replacement")


def _layout():
    """Column offset of every packed field (seats and wall at their maximum) and the row widths."""
    offsets, width = {}, {8: 0, 16: 0, 64: 0}
    for name, buf, shape, _ in _PACKED_FIELDS:
        size = 1
        for d in shape:
            size *= {"n": MAX_SEATS, "W": MAX_WALL}.get(d, d)
        offsets[name] = width[buf]
        width[buf] += size
    return offsets, width


OFFSETS, _WIDTH = _layout()
ROW8, ROW16 = _WIDTH[8], _WIDTH[16]
# Offsets as plain module constants: the compiled kernels fold them into their code.
O8_HAND, O8_MELDED, O8_MELD_KIND, O8_MELD_TILE, O8_MELD_SRC = (OFFSETS[k] for k in ("hand", "melded", "meld_kind", "meld_tile", "meld_src"))
O8_N_MELDS, O8_RIVER, O8_WALL, O8_DEALER, O8_CUR = (OFFSETS[k] for k in ("n_melds", "river", "wall", "dealer", "cur"))
O8_ACTOR, O8_PHASE, O8_DRAWN, O8_TURNS, O8_REVEALED = (OFFSETS[k] for k in ("actor", "phase", "drawn", "turns", "revealed"))
O8_REVEAL_SEQ, O8_HIDDEN, O8_AFTER_KONG, O8_CLAIM_KONG_POS = (OFFSETS[k] for k in ("reveal_seq", "hidden", "after_kong", "claim_kong_pos"))
O8_KONG_COUNT, O8_DADIAOCHE, O8_CLAIM_TILE, O8_CLAIM_FROM = (OFFSETS[k] for k in ("kong_count", "dadiaoche", "claim_tile", "claim_from"))
O8_CLAIM_OPTS, O8_CLAIM_REPLY, O8_KONG_TILES, O8_ROB_REPLACEMENT = (OFFSETS[k] for k in ("claim_opts", "claim_reply", "kong_tiles", "rob_replacement"))
O16_RIVER_TIME, O16_RIVER_LEN, O16_FRONT, O16_BACK = (OFFSETS[k] for k in ("river_time", "river_len", "front", "back"))
O16_LOCK, O16_CLAIM_VALUE, O16_N_DISCARDS = (OFFSETS[k] for k in ("lock", "claim_value", "n_discards"))


def fresh_rows(n: int, wall_size: int) -> tuple[np.ndarray, np.ndarray]:
    """One table's packed int8 and int16 rows in the state of :func:`allocate` (used to clear tables)."""
    row8 = np.zeros(ROW8, np.int8)
    row16 = np.zeros(ROW16, np.int16)
    for name, buf, shape, fill in _PACKED_FIELDS:
        if buf == 64 or fill == 0:
            continue
        size = 1
        for d in shape:
            size *= {"n": MAX_SEATS, "W": MAX_WALL}.get(d, d)
        (row8 if buf == 8 else row16)[OFFSETS[name] : OFFSETS[name] + size] = fill
    return row8, row16


def allocate_packed(batch: int, n: int, wall_size: int) -> tuple[State, np.ndarray, np.ndarray, np.ndarray]:
    """Packed buffers ``(state, buf8, buf16, money)`` for ``batch`` tables; ``state``'s fields are views.

    The state equals :func:`allocate`'s (same shapes, dtypes and initial values).
    """
    if not 1 <= n <= MAX_SEATS or not 0 < wall_size <= MAX_WALL:
        raise ValueError(f"packed state holds 1..{MAX_SEATS} seats and walls up to {MAX_WALL} tiles")
    B = batch
    row8, row16 = fresh_rows(n, wall_size)
    buf8 = np.tile(row8, (B, 1))
    buf16 = np.tile(row16, (B, 1))
    money = np.zeros((B, MAX_SEATS), np.float64)
    views = {}
    for name, buf, shape, _ in _PACKED_FIELDS:
        dims = tuple({"n": n, "W": wall_size}.get(d, d) for d in shape)
        size = int(np.prod(dims)) if dims else 1
        if buf == 64:
            views[name] = money[:, :n]
            continue
        src = buf8 if buf == 8 else buf16
        off = OFFSETS[name]
        v = src[:, off] if not dims else src[:, off : off + size].reshape((B,) + dims)
        if name in _BOOL_FIELDS:
            v = v.view(bool)
        views[name] = v
    return State(**views), buf8, buf16, money


def allocate(batch: int, n: int, wall_size: int) -> State:
    """Zeroed state for ``batch`` tables of ``n`` seats with a wall of ``wall_size`` tiles."""
    B = batch
    z = np.zeros
    return State(
        hand=z((B, n, 34), np.int8),
        melded=z((B, n, 34), np.int8),
        meld_kind=z((B, n, MAX_MELDS), np.int8),
        meld_tile=np.full((B, n, MAX_MELDS), -1, np.int8),
        meld_src=np.full((B, n, MAX_MELDS), -1, np.int8),
        n_melds=z((B, n), np.int8),
        river=np.full((B, n, MAX_RIVER), -1, np.int8),
        river_time=z((B, n, MAX_RIVER), np.int16),
        river_len=z((B, n), np.int16),
        wall=z((B, wall_size), np.int8),
        front=z(B, np.int16),
        back=z(B, np.int16),
        dealer=z(B, np.int8),
        cur=z(B, np.int8),
        actor=z(B, np.int8),
        phase=np.full(B, DONE, np.int8),
        drawn=np.full(B, -1, np.int8),
        turns=z((B, n), np.int8),
        revealed=z((B, n), bool),
        reveal_seq=np.full((B, n), -1, np.int8),
        hidden=z((B, n, 34), bool),
        after_kong=z(B, np.int8),
        claim_kong_pos=z(B, np.int8),
        kong_count=z((B, n), np.int8),
        lock=z((B, n), np.int16),
        dadiaoche=np.full((B, n), -1, np.int8),
        claim_tile=np.full(B, -1, np.int8),
        claim_from=np.full(B, -1, np.int8),
        claim_opts=z((B, n), np.int8),
        claim_value=z((B, n), np.int16),
        claim_reply=np.full((B, n), -1, np.int8),
        kong_tiles=np.full((B, 2), -1, np.int8),
        rob_replacement=z(B, bool),
        money=z((B, n), np.float64),
        n_discards=z(B, np.int16),
    )
