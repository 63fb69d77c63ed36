"""The engine's state: every table's arrays, their dtypes and shapes, in one place.

Struct of arrays with a leading batch axis ``B`` (tables) and a seat axis ``n``.  Everything the
rules need lives here; derived conveniences (``melded``) are kept in step with the primary
arrays and checked by :func:`mjenv.engine.validate.validate`.
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
