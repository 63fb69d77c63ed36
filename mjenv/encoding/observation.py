"""Observation encodings: named blocks of ``[rows, 34]`` planes, batched over tables.

This module owns what an agent sees: the ``mjenv-obs-v1`` encoding (only what the observing seat may
know, docs/rules/common.md §1.12) and the ``mjenv-oracle-v1`` encoding (v1 plus every hand and the wall order, for
perfect-information research).  Each encoder lists its blocks in order; :meth:`ObservationEncoder.encode`
writes them into one ``float32 [K, C, 34]`` array with numpy over all K rows at once (no Python loop over
tables) and asserts the final row count.  Column ``t`` of a tile plane is tile id ``t`` (:mod:`mjenv.tiles`);
"scalar" rows hold one value in every column.  Seat blocks are in **relative order**: seat block ``k``
describes the seat ``k`` places after the observer (``0`` = the observer itself, ``1`` = its next player).

``n`` is the number of seats; ``opt`` is the number of rows of the options block (3 for ``kawuxing3``,
2 for ``kawuxing4``, 1 for the other variants); ``L`` the length of the live wall after the deal (44 for
``kawuxing3``, 67 for ``kawuxing4``, 83 for the 136-tile variants).  ``C`` = 28 + 23n + ``opt`` rows: 100 for
``kawuxing3``, 122 for ``kawuxing4``, 121 for ``gejiu``, ``diedaohu``, ``yangzhou``, ``yangzhou_new`` and
``liuwei``.  Every variant has every block; a block whose feature the variant lacks (Gejiu's kong tiles,
session winds, a bankroll, 亮倒) stays zero.

Encoding ``mjenv-obs-v1``:

| block | rows | meaning |
|---|---|---|
| hand | 4 | own concealed tiles, thermometer: row i is 1 where the count is > i (face-down triplets included) |
| drawn | 1 | one-hot of the tile the observer drew this turn (only while it holds it in the ``turn`` phase) |
| kinds | 1 | 1 for every tile kind the variant plays with (Kawuxing: two or three suits and 5z6z7z; others: all 34) |
| melds | 5n | per seat: pong, chi, direct kong, added kong, concealed kong rows; 1 at the meld's tile (chi: count of chis whose lowest tile it is); concealed-kong kinds are public in Kawuxing |
| discards | 5n | per seat: its unclaimed discards as a thermometer (4 rows), then a recency row: the sum over its discards of that kind of 0.8^a, a = discards made at the table since (1 for the latest discard; at most 2.95) |
| reveal | 7n | per seat: declared 亮倒 (scalar), first to declare 亮倒 (scalar), face-up tiles thermometer (4 rows; a tile just drawn is not shown to others until played), face-down tile count / 12 (scalar) |
| claim | 3 + n | claim window: one-hot of the tile under claim, is-discard (scalar), is-rob (scalar: an added-kong tile, or Gejiu's chosen kong tile under ``gejiu_qianggang: replacement_tile``), then n scalar rows one-hot of the relative seat that discarded / is konging |
| kong_chain | 2 | scalars: chain position of the kong whose replacement the seat on turn just drew / 4 (``turn`` phase); chain position of the kong before the discard under claim / 4 (``claim`` phase) |
| wall | 2 | scalars: tiles left in the live wall / L; 1 when the live wall is empty (last discard: win only) |
| kong_tiles | 2 | Gejiu's face-up kong tiles (public, docs/rules/gejiu.md §6.3): row i one-hot of the tile in slot i (action ``kongtile:i``), zero when the slot is empty or the variant has none |
| seats | 2n + 1 | scalar one-hot rows: relative seat of the dealer (n), relative seat on turn (n: drawer / discarder / konger), 1 when the observer must act now |
| winds | 2 | variants with sessions (Diedaohu, Yangzhou, Liuwei): one-hot at the wind's tile column (1z–4z) of the observer's seat wind (the dealer is East), then of the round wind; zero rows otherwise |
| phase | 7 | scalar one-hot of the phase (turn, claimed, claim, rob, done, pick), then 1 while the observer has not discarded yet this hand (its first turn) |
| lock | 2 | scalars: own missed-win lock set (0/1); its value M / 16 (the Yangzhou family's lock is a flag, M = 1) |
| dadiaoche | 1 | one-hot of the observer's own 大吊车 exception tile (docs/rules/diedaohu.md §7.6: the tile a locked player may still win on), private |
| money | n | scalars: each seat's money this hand so far / (8 × base) |
| bankroll | 2n | under a 园子 bankroll: each seat's current balance / its starting bankroll (n scalars, 0–n), then each seat's busted flag (balance 0; n scalars); zero rows when money is unlimited |
| options | opt | rule options that change play, packed into rows in declaration order: one column per allowed value (1 = in force; ``none`` of an optional number is its own column), a number takes one column holding its value / its scale (:data:`NUMBER_SCALES`); see :func:`option_slots` |

Encoding ``mjenv-oracle-v1`` = all v1 blocks, then:

| block | rows | meaning |
|---|---|---|
| oracle_hands | 4n | every seat's concealed tiles, thermometer (4 rows per seat, relative order; face-down triplets included) |
| oracle_locks | n | scalars: every seat's missed-win lock value M / 16 |
| oracle_dadiaoche | n | every seat's 大吊车 exception tile, one-hot (relative order) |
| oracle_wall | L | row j: one-hot of the (j+1)-th tile of the live wall from its front (next normal draw) to its back (next replacement tile); zero past the back |

Seat winds, round wind and balances live outside the engine's :class:`~mjenv.engine.state.State` (in
``Engine.sessions`` / ``Engine.balance``): :meth:`ObservationEncoder.encode` reads them from ``engine=``;
without it the hand is taken to be the first of a fresh session (East round, every balance starting at the
bankroll), which is what every env of this package deals.

What v1 leaves out on purpose (docs/rules/common.md §1.12): opponents' concealed tiles and the kinds of their
face-down triplets, the wall order, a tile an opponent has just drawn, opponents' locks and 大吊车 tiles,
and who else is being asked in a claim window and how they replied (claims are simultaneous at a real
table).

Version history:

* ``mjenv-obs-v1`` / ``mjenv-oracle-v1`` — first versions.  Before the first release (so still v1) they were
  extended to every variant: blocks ``kong_tiles``, ``winds``, ``dadiaoche``, ``bankroll`` (and
  ``oracle_dadiaoche``), the ``pick`` phase row, encodings of optional numbers (``bankroll``) and integers
  (``min_fan``) in the options block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import numpy as np

from mjenv.engine import state as S
from mjenv.engine.family import family_for
from mjenv.rules.options import (
    Choice,
    NonNegativeInteger,
    OptionalPositiveNumber,
    PositiveNumber,
    get_variant,
    load_rules,
    option_info,
    options_to_dict,
    tile_kinds,
)
from mjenv.tiles import WINDS

OBS_VERSION = "mjenv-obs-v1"
ORACLE_VERSION = "mjenv-oracle-v1"

MATCH_LEVEL_OPTIONS = frozenset({"seat_rotation", "escape_penalty"})
"""Options a single hand ignores (docs/rules/kawuxing.md §3.12): left out of the options block."""

NUMBER_SCALES = {"base": 1.0, "bankroll": 100.0, "min_fan": 20.0}
"""Divisor of each number-valued option in the options block, so that usual values land near 0.5–1
(``base`` 1; ``bankroll`` 50–200 b; ``min_fan`` 10–20).  A new number option needs an entry here."""

LOCK_SCALE = 16.0
MONEY_SCALE = 8.0  # times the base stake
FACE_DOWN_SCALE = 12.0  # at most four triplets face down
KONG_SCALE = 4.0
BUST_EPS = 1e-9  # a balance at or below this is 0: busted (as the engine's Diedaohu family judges it)

RECENCY_DECAY = 0.8  # per discard made at the table since
_THERMO = np.arange(4, dtype=np.int8)[None, :, None]
_DECAY = (RECENCY_DECAY ** np.arange(512)).astype(np.float32)  # age beyond the table is clipped
_INF = float("inf")
_EAST = WINDS[0]


@dataclass(frozen=True)
class Block:
    """One named block: ``rows`` planes of 34 columns, their meaning and value bounds."""

    name: str
    rows: int
    meaning: str
    low: float = 0.0
    high: float = 1.0


@dataclass(frozen=True)
class OptionSlot:
    """One column of the options block.

    A flag column is 1 when option ``name`` has ``value``; a ``numeric`` column holds the option's value
    divided by ``scale`` (0 while an optional number is ``none``).
    """

    name: str
    value: Any
    numeric: bool = False
    scale: float = 1.0


def _number_scale(name: str) -> float:
    if name not in NUMBER_SCALES:  # a new number option must be given a scale, not an arbitrary magnitude
        raise TypeError(f"option {name!r}: no observation scale for a number option; add it to NUMBER_SCALES")
    return NUMBER_SCALES[name]


def option_slots(variant: str, opts) -> tuple[OptionSlot, ...]:
    """The options block layout of ``variant``: its columns, options in declaration order.

    A choice takes one flag column per allowed value; a number (``base``, ``min_fan``) one numeric column;
    an optional number (``bankroll``) a flag column for ``none`` and a numeric column.  Options the variant
    lacks and match-level options (:data:`MATCH_LEVEL_OPTIONS`) are left out.
    """
    present = options_to_dict(opts, variant)
    slots: list[OptionSlot] = []
    for info in option_info(type(opts)):
        if info.name not in present or info.name in MATCH_LEVEL_OPTIONS:
            continue
        dom = info.domain
        if isinstance(dom, Choice):
            slots.extend(OptionSlot(info.name, v) for v in dom.values)
        elif isinstance(dom, (PositiveNumber, NonNegativeInteger)):
            slots.append(OptionSlot(info.name, None, numeric=True, scale=_number_scale(info.name)))
        elif isinstance(dom, OptionalPositiveNumber):
            slots.append(OptionSlot(info.name, None))
            slots.append(OptionSlot(info.name, None, numeric=True, scale=_number_scale(info.name)))
        else:  # a new domain kind must be given an encoding here, not silently dropped
            raise TypeError(f"option {info.name!r}: no observation encoding for domain {dom!r}")
    return tuple(slots)


def option_values(slots: tuple[OptionSlot, ...], opts) -> np.ndarray:
    """``float32 [len(slots)]``: the options block's columns for the options value ``opts``."""
    vec = np.zeros(len(slots), np.float32)
    for i, sl in enumerate(slots):
        v = getattr(opts, sl.name)
        if sl.numeric:
            vec[i] = 0.0 if v is None else float(v) / sl.scale
        else:  # type check: ``8 == 8.0`` and ``True == 1`` must not switch on another value's column
            vec[i] = float(v == sl.value and type(v) is type(sl.value))
    return vec


class ObservationEncoder:
    """The ``mjenv-obs-v1`` encoder of one variant and option set (see the module docstring).

    ``blocks`` lists the blocks in order, ``slices[name]`` their row ranges, ``shape`` = ``(C, 34)``;
    ``low`` / ``high`` are the ``[C, 34]`` value bounds (for a Gymnasium ``Box``).  ``has_session`` says
    whether the variant plays sessions (so has winds); ``bankroll`` is each player's starting balance in
    money units (0 when money is unlimited).
    """

    version = OBS_VERSION

    def __init__(self, variant: str, opts=None):
        self.variant = variant
        self.opts = opts if opts is not None else load_rules(variant)
        self.n = get_variant(variant).n_players
        self.kinds = tile_kinds(variant, self.opts)
        self.wall_size = int(self.kinds.sum()) * 4
        self.live_wall = self.wall_size - 13 * self.n - 1
        # The family answers "are there sessions / a bankroll" without an engine; it only reads opts and n.
        family = family_for(SimpleNamespace(variant=variant, opts=self.opts, n=self.n))
        self.has_session = family.new_session(0) is not None
        self.bankroll = float(family.starting_balance())
        self.option_slots = option_slots(variant, self.opts)
        self._option_vec = option_values(self.option_slots, self.opts)
        self.option_rows = math.ceil(len(self.option_slots) / 34)
        self.blocks = tuple(self._blocks())
        self.slices: dict[str, slice] = {}
        r = 0
        for blk in self.blocks:
            self.slices[blk.name] = slice(r, r + blk.rows)
            r += blk.rows
        self.n_channels = r
        self.shape = (r, 34)
        self.low = np.zeros(self.shape, np.float32)
        self.high = np.zeros(self.shape, np.float32)
        for blk in self.blocks:
            self.low[self.slices[blk.name]] = blk.low
            self.high[self.slices[blk.name]] = blk.high
        self._static = np.zeros(self.shape, np.float32)
        self._static[self.slices["kinds"]] = self.kinds
        opt_rows = np.zeros(self.option_rows * 34, np.float32)
        opt_rows[: len(self._option_vec)] = self._option_vec
        self._static[self.slices["options"]] = opt_rows.reshape(self.option_rows, 34)

    @classmethod
    def for_engine(cls, engine) -> "ObservationEncoder":
        """The encoder matching an :class:`~mjenv.engine.core.Engine` (shared, cached per variant and options)."""
        return _cached(cls, engine.variant, engine.opts)

    def _blocks(self) -> list[Block]:
        n = self.n
        return [
            Block("hand", 4, "own concealed tiles, thermometer"),
            Block("drawn", 1, "tile drawn this turn by the observer"),
            Block("kinds", 1, "tile kinds in play"),
            Block("melds", 5 * n, "per seat: pong, chi, direct kong, added kong, concealed kong", 0.0, 4.0),
            Block("discards", 5 * n, "per seat: unclaimed discards thermometer (4) and decayed recency", 0.0, 3.0),
            Block("reveal", 7 * n, "per seat: revealed, first revealed, face-up thermometer (4), face-down count"),
            Block("claim", 3 + n, "tile under claim, is-discard, is-rob, relative seat it comes from"),
            Block(
                "kong_chain",
                2,
                "kong chain position of the turn / of the discard under claim",
                0.0,
                4.0 * n / KONG_SCALE,
            ),
            Block("wall", 2, "live wall left, live wall empty"),
            Block("kong_tiles", 2, "Gejiu face-up kong tiles, one row per slot"),
            Block("seats", 2 * n + 1, "dealer, seat on turn, observer acts now"),
            Block("winds", 2, "own seat wind, round wind (variants with sessions)"),
            Block("phase", 7, "phase one-hot (turn, claimed, claim, rob, done, pick), observer's first turn"),
            Block("lock", 2, "own missed-win lock flag and value", 0.0, _INF),
            Block("dadiaoche", 1, "own 大吊车 exception tile"),
            Block("money", n, "money so far per seat", -_INF, _INF),
            Block("bankroll", 2 * n, "per seat balance / starting bankroll, then busted flags", 0.0, float(n)),
            Block("options", self.option_rows, "rule options", 0.0, _INF),
        ]

    # ------------------------------------------------------------------ encoding
    def encode(self, state: S.State, seats, tables=None, out: np.ndarray | None = None, *, engine=None) -> np.ndarray:
        """Encode tables ``tables`` (default ``0..K-1``) each from the point of view of ``seats``.

        ``seats`` and ``tables`` are int arrays of length K (one table may appear several times with
        different seats).  ``engine``: the :class:`~mjenv.engine.core.Engine` that ``state`` belongs to,
        for the round wind and the balances it keeps outside the state; without it every table is taken
        to be in the first hand of a session.  Returns ``float32 [K, C, 34]`` (written into ``out`` when
        given).
        """
        seats = np.asarray(seats, dtype=np.int64).reshape(-1)
        K = len(seats)
        idx = np.arange(K) if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
        if len(idx) != K:
            raise ValueError(f"{len(idx)} tables for {K} seats")
        if out is None:
            out = np.empty((K,) + self.shape, np.float32)
        elif out.shape != (K,) + self.shape or out.dtype != np.float32:
            raise ValueError(f"out must be float32 {(K,) + self.shape}, got {out.dtype} {out.shape}")
        out[:] = self._static
        self._write(state, idx, seats, out)
        self._write_session(state, idx, seats, out, engine)
        assert out.shape[1] == self.n_channels == sum(b.rows for b in self.blocks)
        return out

    def _write(self, st: S.State, idx: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        # ``out`` holds the static rows and zeros elsewhere: rare features (melds, 亮倒, claims,
        # locks, money) are written only where they are non-zero, which keeps large batches cheap.
        n = self.n
        K = len(idx)
        sl = self.slices
        rows = np.arange(K)
        rel = (seats[:, None] + np.arange(n)[None, :]) % n  # [K, n] absolute seat of relative seat k
        t2 = idx[:, None]
        phase = st.phase[idx]
        cur = st.cur[idx].astype(np.int64)
        turn = phase == S.TURN
        live = phase != S.DONE

        np.greater(st.hand[idx, seats][:, None, :], _THERMO, out=out[:, sl["hand"]])

        drawn = st.drawn[idx].astype(np.int64)
        has_drawn = turn & (cur == seats) & (drawn >= 0)
        out[rows[has_drawn], sl["drawn"].start, drawn[has_drawn]] = 1.0

        # Melds: one scatter over all declared melds; chi may repeat on a tile, hence add.at.
        kind = st.meld_kind[t2, rel]  # [K, n, 4]
        k_i, s_i, m_i = np.nonzero(kind)
        if len(k_i):
            r = sl["melds"].start + 5 * s_i + kind[k_i, s_i, m_i].astype(np.int64) - 1
            np.add.at(out, (k_i, r, st.meld_tile[idx[k_i], rel[k_i, s_i], m_i].astype(np.int64)), 1.0)

        self._write_discards(st, idx, rel, out)

        # 亮倒: face-up tiles = hand - face-down triplets - a just-drawn tile (private until played).
        k_i, s_i = np.nonzero(st.revealed[t2, rel])
        if len(k_i):
            b_i, a_i = idx[k_i], rel[k_i, s_i]
            hidden = st.hidden[b_i, a_i]  # [R, 34]
            shown = st.hand[b_i, a_i] - 3 * hidden.astype(np.int8)
            holding = turn[k_i] & (drawn[k_i] >= 0) & (cur[k_i] == a_i) & (s_i != 0)
            shown[np.flatnonzero(holding), drawn[k_i[holding]]] -= 1
            r0 = sl["reveal"].start + 7 * s_i
            out[k_i, r0] = 1.0
            first = st.reveal_seq[b_i, a_i] == 0
            out[k_i[first], r0[first] + 1] = 1.0
            out[k_i[:, None], r0[:, None] + np.arange(2, 6)] = shown[:, None, :] > _THERMO
            out[k_i, r0 + 6] = (hidden.sum(-1) * (3.0 / FACE_DOWN_SCALE))[:, None]

        # Claim window: the tile under claim is public; who else is asked and their replies are not.
        c0 = sl["claim"].start
        ci = np.flatnonzero((phase == S.CLAIM) | (phase == S.ROB))
        if len(ci):
            out[ci, c0, st.claim_tile[idx[ci]].astype(np.int64)] = 1.0
            out[ci, c0 + 1 + (phase[ci] == S.ROB)] = 1.0
            out[ci, c0 + 3 + (st.claim_from[idx[ci]].astype(np.int64) - seats[ci]) % n] = 1.0

        k0 = sl["kong_chain"].start
        ak = np.flatnonzero(turn & (st.after_kong[idx] > 0))
        out[ak, k0] = (st.after_kong[idx[ak]] / KONG_SCALE)[:, None]
        ck = np.flatnonzero((phase == S.CLAIM) & (st.claim_kong_pos[idx] > 0))
        out[ck, k0 + 1] = (st.claim_kong_pos[idx[ck]] / KONG_SCALE)[:, None]

        w0 = sl["wall"].start
        left = (st.back[idx] - st.front[idx]).astype(np.float32)
        out[:, w0] = (left / self.live_wall)[:, None]
        out[rows[(left <= 0) & live], w0 + 1] = 1.0

        # Gejiu's face-up kong tiles are public (docs/rules/common.md §1.12); -1 marks an empty slot (and every other variant).
        kt = st.kong_tiles[idx].astype(np.int64)  # [K, 2]
        k_i, j_i = np.nonzero(kt >= 0)
        out[k_i, sl["kong_tiles"].start + j_i, kt[k_i, j_i]] = 1.0

        s0 = sl["seats"].start
        out[rows, s0 + (st.dealer[idx].astype(np.int64) - seats) % n] = 1.0
        out[rows, s0 + n + (cur - seats) % n] = 1.0
        out[rows[(st.actor[idx] == seats) & live], s0 + 2 * n] = 1.0

        p0 = sl["phase"].start
        out[rows, p0 + phase.astype(np.int64)] = 1.0
        out[rows[st.turns[idx, seats] == 0], p0 + len(S.PHASE_NAMES)] = 1.0

        l0 = sl["lock"].start
        lk = np.flatnonzero(st.lock[idx, seats] > 0)
        out[lk, l0] = 1.0
        out[lk, l0 + 1] = (st.lock[idx[lk], seats[lk]] / LOCK_SCALE)[:, None]

        # 大吊车 is private to its player (derived from its own lock and hand), like the lock itself.
        dd = st.dadiaoche[idx, seats].astype(np.int64)
        has = np.flatnonzero(dd >= 0)
        out[has, sl["dadiaoche"].start, dd[has]] = 1.0

        k_i, s_i = np.nonzero(st.money[t2, rel])
        out[k_i, sl["money"].start + s_i] = (st.money[idx[k_i], rel[k_i, s_i]] / (MONEY_SCALE * float(self.opts.base)))[
            :, None
        ]

    def _write_session(self, st: S.State, idx: np.ndarray, seats: np.ndarray, out: np.ndarray, engine) -> None:
        """Seat and round winds and 园子 balances: session facts the engine keeps beside the state."""
        n = self.n
        K = len(idx)
        rows = np.arange(K)
        if self.has_session:
            w0 = self.slices["winds"].start
            seat_wind = _EAST + (seats - st.dealer[idx].astype(np.int64)) % n
            out[rows, w0, seat_wind] = 1.0
            out[rows, w0 + 1, _EAST + self._round_index(st, idx, engine) % 4] = 1.0
        if self.bankroll > 0:
            b0 = self.slices["bankroll"].start
            start = engine.balance[idx] if engine is not None else np.full((K, n), self.bankroll)
            bal = start + st.money[idx]  # [K, n] absolute seats
            rel = (seats[:, None] + np.arange(n)[None, :]) % n
            bal = np.take_along_axis(bal, rel, axis=1)
            out[:, b0 : b0 + n] = np.clip(bal / self.bankroll, 0.0, float(n))[:, :, None]
            out[:, b0 + n : b0 + 2 * n] = (bal <= BUST_EPS)[:, :, None]

    @staticmethod
    def _round_index(st: S.State, idx: np.ndarray, engine) -> np.ndarray:
        """int [K]: 0-based round (圈) of each table's current hand.

        The first hand of a session is in round 0, so only tables deeper into a session (rare in
        training, where every env hand starts a session) read the Python session object.
        """
        rnd = np.zeros(len(idx), np.int64)
        if engine is None:
            return rnd
        for j in np.flatnonzero(engine.hand_number[idx] > 0):
            b = int(idx[j])
            ses = engine.sessions[b]
            passes = ses.passes
            if st.phase[b] == S.DONE:
                # The engine advances the session when a hand ends; this hand's round is the one before.
                passes -= int(ses.dealer != int(st.dealer[b]))
            rnd[j] = min(passes // 4, ses.rounds - 1)
        return rnd

    def _write_discards(self, st: S.State, idx: np.ndarray, rel: np.ndarray, out: np.ndarray) -> None:
        n = self.n
        K = len(idx)
        R = int(st.river_len[idx].max()) if K else 0
        if R == 0:
            return
        t2 = idx[:, None]
        river = st.river[t2, rel, :R].astype(np.int64)  # [K, n, R], -1 padded
        # Empty slots go to a 35th sentinel column, so counting needs no nonzero() pass.
        cell = (np.arange(K * n, dtype=np.int64).reshape(K, n, 1) * 35 + np.where(river < 0, 34, river)).reshape(-1)
        counts = np.bincount(cell, minlength=K * n * 35).astype(np.int8).reshape(K, n, 35)[:, :, :34]
        age = (st.n_discards[idx].astype(np.int64) - 1)[:, None, None] - st.river_time[t2, rel, :R]
        decay = _DECAY[np.clip(age, 0, len(_DECAY) - 1)].reshape(-1)
        recency = np.bincount(cell, weights=decay, minlength=K * n * 35).reshape(K, n, 35)[:, :, :34]
        d0 = self.slices["discards"].start
        dv = out[:, d0 : d0 + 5 * n].reshape(K, n, 5, 34)
        np.greater(counts[:, :, None, :], _THERMO[None], out=dv[:, :, 0:4])
        dv[:, :, 4] = recency

    # ------------------------------------------------------------------ helpers
    def block(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The rows of block ``name`` of an encoded observation (``[..., C, 34]`` → ``[..., rows, 34]``)."""
        return obs[..., self.slices[name], :]

    def describe(self) -> str:
        """Markdown table (block, rows, first row, meaning) of this encoder's layout."""
        lines = [
            f"{self.version} for {self.variant}: C = {self.n_channels}",
            "",
            "| block | rows | first row | meaning |",
            "|---|---|---|---|",
        ]
        for blk in self.blocks:
            lines.append(f"| {blk.name} | {blk.rows} | {self.slices[blk.name].start} | {blk.meaning} |")
        return "\n".join(lines)


class OracleEncoder(ObservationEncoder):
    """The ``mjenv-oracle-v1`` encoder: v1 plus every hand, lock, 大吊车 tile and the live wall in order.

    Perfect information: for oracle / teacher policies and analysis, never for a player's policy.
    """

    version = ORACLE_VERSION

    def _blocks(self) -> list[Block]:
        n = self.n
        return super()._blocks() + [
            Block("oracle_hands", 4 * n, "every seat's concealed tiles, thermometer"),
            Block("oracle_locks", n, "every seat's missed-win lock value", 0.0, _INF),
            Block("oracle_dadiaoche", n, "every seat's 大吊车 exception tile"),
            Block("oracle_wall", self.live_wall, "live wall front to back, one-hot per position"),
        ]

    def _write(self, st: S.State, idx: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        super()._write(st, idx, seats, out)
        n = self.n
        K = len(idx)
        rel = (seats[:, None] + np.arange(n)[None, :]) % n
        h0 = self.slices["oracle_hands"].start
        hv = out[:, h0 : h0 + 4 * n].reshape(K, n, 4, 34)
        np.greater(st.hand[idx[:, None], rel][:, :, None, :], _THERMO[None], out=hv)
        out[:, self.slices["oracle_locks"]] = (st.lock[idx[:, None], rel] / LOCK_SCALE)[:, :, None]
        dd = st.dadiaoche[idx[:, None], rel].astype(np.int64)  # [K, n]
        k_i, s_i = np.nonzero(dd >= 0)
        out[k_i, self.slices["oracle_dadiaoche"].start + s_i, dd[k_i, s_i]] = 1.0
        w0 = self.slices["oracle_wall"].start
        pos = st.front[idx].astype(np.int64)[:, None] + np.arange(self.live_wall)[None, :]  # [K, L]
        k_i, j_i = np.nonzero(pos < st.back[idx].astype(np.int64)[:, None])
        out[k_i, w0 + j_i, st.wall[idx[k_i], pos[k_i, j_i]].astype(np.int64)] = 1.0


@lru_cache(maxsize=64)
def _cached(cls, variant: str, opts) -> ObservationEncoder:
    return cls(variant, opts)


def encoder_for(engine, oracle: bool = False) -> ObservationEncoder:
    """The (cached) v1 or oracle encoder for an engine's variant and options."""
    return (OracleEncoder if oracle else ObservationEncoder).for_engine(engine)


def encode(engine, seats, tables=None, *, oracle: bool = False) -> np.ndarray:
    """Encode ``engine``'s tables (default all) from ``seats`` (int [K]); ``float32 [K, C, 34]``.

    Session facts (round wind, balances) are read from the engine.
    """
    return encoder_for(engine, oracle).encode(engine.state, seats, tables, engine=engine)
