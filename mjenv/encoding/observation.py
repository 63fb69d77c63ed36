"""Observation encodings: named blocks of ``[rows, 34]`` planes, batched over tables.

This module owns what an agent sees: the ``mjenv-obs-v1`` encoding (only what the observing seat may
know, docs/rules/common.md §1.12) and the ``mjenv-oracle-v1`` encoding (v1 plus every hand and the wall order, for
perfect-information research).  Each encoder lists its blocks in order; :meth:`ObservationEncoder.encode`
writes them into one ``float32 [K, C, 34]`` array — a preallocated ``out`` buffer when given — with one
compiled loop over the K rows (:func:`_encode_rows`, numba, ``cache=True``; the same machine code for one
table and thousands, reading the engine's packed state buffers) and asserts the final row count.  Column ``t`` of a tile plane is tile id ``t`` (:mod:`mjenv.tiles`);
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
import weakref
from dataclasses import dataclass, fields
from functools import lru_cache
from types import SimpleNamespace

import numpy as np

from mjenv.engine import state as S
from mjenv.engine.state import (
    O8_ACTOR,
    O8_AFTER_KONG,
    O8_CLAIM_FROM,
    O8_CLAIM_KONG_POS,
    O8_CLAIM_TILE,
    O8_CUR,
    O8_DADIAOCHE,
    O8_DEALER,
    O8_DRAWN,
    O8_HAND,
    O8_HIDDEN,
    O8_KONG_TILES,
    O8_MELD_KIND,
    O8_MELD_TILE,
    O8_PHASE,
    O8_REVEAL_SEQ,
    O8_REVEALED,
    O8_RIVER,
    O8_TURNS,
    O8_WALL,
    O16_BACK,
    O16_FRONT,
    O16_LOCK,
    O16_N_DISCARDS,
    O16_RIVER_LEN,
    O16_RIVER_TIME,
)
from mjenv.engine import threads as TH
from mjenv.engine.calls import _direct_entry
from mjenv.engine.family import family_for
from mjenv.engine.jit import njit
from mjenv.encoding.option_block import (  # noqa: F401  (re-exported: the options block is part of this encoding)
    MATCH_LEVEL_OPTIONS,
    NUMBER_SCALES,
    OptionSlot,
    option_slots,
    option_values,
)
from mjenv.rules.value import Rules, door_rules, load_rules
from mjenv.tiles import WINDS

OBS_VERSION = "mjenv-obs-v1"
ORACLE_VERSION = "mjenv-oracle-v1"

LOCK_SCALE = 16.0
MONEY_SCALE = 8.0  # times the base stake
FACE_DOWN_SCALE = 12.0  # at most four triplets face down
KONG_SCALE = 4.0
BUST_EPS = 1e-9  # a balance at or below this is 0: busted (as the engine's Diedaohu family judges it)

RECENCY_DECAY = 0.8  # per discard made at the table since
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


class ObservationEncoder:
    """The ``mjenv-obs-v1`` encoder of one variant and option set (see the module docstring).

    ``blocks`` lists the blocks in order, ``slices[name]`` their row ranges, ``shape`` = ``(C, 34)``;
    ``low`` / ``high`` are the ``[C, 34]`` value bounds (for a Gymnasium ``Box``).  ``has_session`` says
    whether the variant plays sessions (so has winds); ``bankroll`` is each player's starting balance in
    money units (0 when money is unlimited).
    """

    version = OBS_VERSION
    compact = False
    """Whether :meth:`encode` writes the compact ``mjenv-obs-v2`` bytes (:mod:`mjenv.encoding.compact`)."""
    dtype = np.dtype(np.float32)
    """The dtype of an encoded observation."""

    def __init__(self, variant: str | Rules | None = None, opts=None, *, rules: Rules | None = None):
        # ``rules`` (or ``variant`` given as a Rules) is used as it is; else the variant's default rules, or ``opts``
        self.rules = door_rules(variant, options=opts, rules=rules)
        self.variant = variant = self.rules.variant
        self.opts = self.rules.options
        self.n = self.rules.n_players
        self.kinds = self.rules.kinds_mask
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
        self._rows_total = sum(blk.rows for blk in self.blocks)
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
        # What the compiled kernel needs besides the state: first rows of the blocks, sizes and scales.
        self._starts = np.array([self.slices[b].start if b in self.slices else -1 for b in _BLOCK_IDS], np.int64)
        cfg = np.zeros(_N_CFG, np.int64)
        cfg[_CF_N], cfg[_CF_LIVE_WALL] = self.n, self.live_wall
        cfg[_CF_SESSION], cfg[_CF_BANKROLL] = self.has_session, self.bankroll > 0
        cfg[_CF_ORACLE] = "oracle_wall" in self.slices
        self._cfg = cfg
        self._fcfg = np.array([MONEY_SCALE * float(self.opts.base), self.bankroll or 1.0], np.float64)
        self._no_balance = np.zeros((0, self.n), np.float64)
        self._no_round = np.zeros(1, np.int64)
        self._counts = np.zeros(34, np.int64)  # the kernel's scratch (it allocates nothing)
        self._recency = np.zeros(34, np.float64)
        self._final_shape = (self._rows_total, 34)

    @classmethod
    def for_engine(cls, engine) -> "ObservationEncoder":
        """The encoder matching an :class:`~mjenv.engine.core.Engine` (shared, cached per variant and options)."""
        rules = getattr(engine, "rules", None)
        return _cached(cls, rules if rules is not None else load_rules(engine.variant, options=engine.opts))

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
        to be in the first hand of a session.  Returns ``float32 [K, C, 34]``, written into ``out`` when
        given (a preallocated buffer: nothing else is allocated for it).  Many rows are encoded in shards on the
        engine's threads (``Engine.threads``, :mod:`mjenv.engine.threads`), with the same result.
        """
        seats = np.ascontiguousarray(seats, dtype=np.int64).reshape(-1)
        K = seats.shape[0]
        idx = np.arange(K, dtype=np.int64) if tables is None else np.ascontiguousarray(tables, dtype=np.int64).reshape(-1)
        if idx.shape[0] != K:
            raise ValueError(f"tables: {idx.shape[0]} tables for {K} seats")
        shape = (K,) + self.shape
        dt = self.dtype
        if out is None:
            out = np.empty(shape, dt)
        elif out.shape != shape or out.dtype != dt:
            raise ValueError(f"out must be {dt.name} {shape}, got {out.dtype} {out.shape}")
        if state.hand.shape[1] != self.n:
            raise ValueError(f"state: {state.hand.shape[1]} seats, the encoder is for {self.n} ({self.variant})")
        dest = out if out.flags.c_contiguous else np.empty(shape, dt)
        if self.has_session:
            rnd = self._round_index(state, idx, engine)
        else:  # not read by the kernel: any int64 [K]
            if self._no_round.shape[0] < K:
                self._no_round = np.zeros(K, np.int64)
            rnd = self._no_round[:K]
        balance = engine.balance if engine is not None and self.bankroll > 0 else self._no_balance
        rows = idx
        bufs = packed_buffers(state)
        if bufs is None:  # a plain State (a copy, a test's): pack the rows asked for, then encode those
            B = state.hand.shape[0]
            bad = np.flatnonzero((idx < 0) | (idx >= B))
            if len(bad):
                j = int(bad[0])
                raise ValueError(f"tables[{j}] = {idx[j]} is not in 0..{B - 1}")
            bufs = _pack_rows(state, idx)
            rows = np.arange(K, dtype=np.int64)
            balance = balance[idx] if balance.shape[0] else balance
        kern = _kernel(self.compact)
        threads = getattr(engine, "threads", 1)
        cuts = TH.bounds(K, threads) if K >= 2 * TH.MIN_TABLES else (0, K)
        if len(cuts) > 2 and 0 <= rows.min() and rows.max() < bufs[0].shape[0] and 0 <= seats.min() and seats.max() < self.n:
            # chunks of rows on the engine's threads, each thread with its own scratch (the checks made here first)
            def chunk(w: int, i: int) -> None:
                lo, hi = cuts[i], cuts[i + 1]
                kern(*self._front(dest[lo:hi]), rows[lo:hi], seats[lo:hi], self._cfg, self._fcfg, self._starts, _DECAY,
                     rnd[lo:hi], balance, *self._thread_scratch(w), *bufs)  # fmt: skip

            TH.run_chunks(len(cuts) - 1, threads, chunk)
            bad = -1
        else:
            bad, j = kern(
                *self._front(dest), rows, seats, self._cfg, self._fcfg, self._starts, _DECAY, rnd, balance,
                self._counts, self._recency, *bufs
            )
        if bad >= 0:
            field, limit = ("tables", state.hand.shape[0]) if bad == 0 else ("seats", self.n)
            value = idx[j] if bad == 0 else seats[j]
            raise ValueError(f"{field}[{j}] = {value} is not in 0..{limit - 1}")
        if dest is not out:
            out[...] = dest
        assert out.shape[1:] == self._final_shape  # the final shape check: every block written, in order
        return out

    def _thread_scratch(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """The encoding loop's scratch ``(counts, recency)`` for thread ``i`` (0: the encoder's own)."""
        if i == 0:
            return self._counts, self._recency
        more = self.__dict__.setdefault("_more_scratch", {})
        if i not in more:
            more[i] = (np.zeros(34, np.int64), np.zeros(34, np.float64))
        return more[i]

    def _front(self, dest: np.ndarray) -> tuple:
        """The encoding loop's first arguments for the output ``dest`` (v1: the rows; v2's arrays unused)."""
        return (dest, _NO_PLANES, _NO_VALUES, _NO_RMAP, self._static, _NO_PLANES[0], _NO_VALUES[0])

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

    def row_encoder(self, engine, table: int = 0) -> "RowEncoder":
        """The per-seat fast path over table ``table`` of ``engine`` (see :class:`RowEncoder`)."""
        return RowEncoder(self, engine, table)

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


class RowEncoder:
    """One table of one engine encoded from one seat per call: the AEC env's ``observe``.

    ``row(seat)`` returns a **fresh** ``float32 [C, 34]`` array equal to
    ``encoder.encode(engine.state, [seat], [table], engine=engine)[0]`` (nothing is shared with later calls,
    so an observation kept by the caller never changes); ``row(seat, out)`` writes into ``out``
    (C-contiguous ``float32 [1, C, 34]``) instead and returns ``out[0]``.  What :meth:`ObservationEncoder.encode`
    checks and builds on every call (argument shapes, the packed buffers, the seat and table arrays) is
    done once here; a call costs the compiled kernel (≈ 0.9 µs for a ``[100, 34]`` observation, 0.34 µs of it the
    call with its 20 arguments, most of the rest writing the 13.6 KB) plus ≈ 0.6 µs of Python and the fresh array.  Seats are checked; a table deeper into a session (round
    wind) takes the general path.
    """

    def __init__(self, encoder: ObservationEncoder, engine, table: int = 0):
        if not 0 <= table < engine.state.hand.shape[0]:
            raise ValueError(f"table {table} is not in 0..{engine.state.hand.shape[0] - 1}")
        self.encoder = encoder
        self.engine = engine
        self.table = int(table)
        self._n = encoder.n
        self._shape1 = (1,) + encoder.shape
        self._hand_number = engine.hand_number
        self._session = encoder.has_session
        self._seat_arrays = [np.array([s], np.int64) for s in range(encoder.n)]
        self._rows = np.array([self.table], np.int64)
        # The engine's packed buffers are fixed arrays its kernels update in place: read them directly.
        bufs = packed_buffers(engine.state)
        if bufs is None:  # pragma: no cover - an engine's state is always packed
            raise ValueError("the engine's state is not packed")
        balance = engine.balance if encoder.bankroll > 0 else encoder._no_balance
        # Every argument after ``out``, one tuple per seat; the kernel's compiled entry point skips the type
        # dispatch (all arguments have the one signature it was compiled for).
        self._args = [
            (self._rows, seats, encoder._cfg, encoder._fcfg, encoder._starts, _DECAY,
             np.zeros(1, np.int64), balance, encoder._counts, encoder._recency, *bufs)
            for seats in self._seat_arrays
        ]  # fmt: skip
        disp = _kernel(encoder.compact)
        self._call = disp.overloads[disp.signatures[0]].entry_point if disp.signatures else disp
        self._front = encoder._front
        # v1: the arguments after ``out`` are fixed too (the v1 path stays one call with no tuple made)
        self._v1_args = None if encoder.compact else [encoder._front(None)[1:] + a for a in self._args]
        self._dtype = encoder.dtype
        # v1, a fresh row: :func:`encode_one`'s arguments after ``out`` per seat (``[table, seat, round 0]`` first)
        self._one_args = None if encoder.compact else [
            (np.array([self.table, s, 0], np.int64), _NO_PLANES, encoder._front(None)[4], *a[2:5], a[5], *a[7:])
            for s, a in enumerate(self._args)
        ]  # fmt: skip
        self._one = None  # encode_one's direct entry, made by the first call

    def one_call(self) -> tuple | None:
        """``(entry, args)``: ``entry(out, *args[s])`` writes the row from seat ``s`` into a C-contiguous ``float32 [C, 34]``
        ``out`` (:func:`encode_one`'s compiled entry, no type dispatch; the AEC env's call); ``None`` for v2 and for
        variants with sessions (deeper into a session :meth:`__call__` reads the round wind)."""
        if self._one_args is None or self._session:
            return None
        if self._one is None:
            out = np.empty(self.encoder.shape, self._dtype)
            encode_one(out, *self._one_args[0])  # compiled, or loaded, by this first call
            self._one = _direct_entry(encode_one, (out, *self._one_args[0]))
        return self._one, self._one_args

    def __call__(self, seat: int, out: np.ndarray | None = None) -> np.ndarray:
        """The table seen from ``seat`` (``float32 [C, 34]``, v2: its bytes), fresh or ``out[0]`` when ``out`` is given."""
        if not 0 <= seat < self._n:
            raise ValueError(f"seats[0] = {seat} is not in 0..{self._n - 1}")
        if self._session and self._hand_number[self.table] > 0:  # the round wind from the session: general path
            return self.encoder.encode(self.engine.state, self._seat_arrays[seat], self._rows, out, engine=self.engine)[0]
        if out is None:
            out = np.empty(self._shape1, self._dtype)
        elif out.shape != self._shape1 or out.dtype != self._dtype or not out.flags.c_contiguous:
            raise ValueError(f"out must be C-contiguous {self._dtype.name} {self._shape1}, got {out.dtype} {out.shape}")
        if self._v1_args is not None:
            self._call(out, *self._v1_args[seat])
        else:
            self._call(*self._front(out), *self._args[seat])
        return out[0]


@lru_cache(maxsize=64)
def _cached(cls, rules: Rules) -> ObservationEncoder:
    return cls(rules=rules)


def encoder_for(engine, oracle: bool = False) -> ObservationEncoder:
    """The (cached) v1 or oracle encoder for an engine's variant and options."""
    return (OracleEncoder if oracle else ObservationEncoder).for_engine(engine)


def encode(engine, seats, tables=None, *, oracle: bool = False) -> np.ndarray:
    """Encode ``engine``'s tables (default all) from ``seats`` (int [K]); ``float32 [K, C, 34]``.

    Session facts (round wind, balances) are read from the engine.
    """
    return encoder_for(engine, oracle).encode(engine.state, seats, tables, engine=engine)


# ----------------------------------------------------------------------------------------- the kernel
# Blocks the kernel writes, in the order of ``ObservationEncoder._starts`` (-1: the encoder lacks it).
_BLOCK_IDS = (
    "hand", "drawn", "melds", "discards", "reveal", "claim", "kong_chain", "wall", "kong_tiles", "seats",
    "winds", "phase", "lock", "dadiaoche", "money", "bankroll",
    "oracle_hands", "oracle_locks", "oracle_dadiaoche", "oracle_wall",
)  # fmt: skip
(
    _B_HAND, _B_DRAWN, _B_MELDS, _B_DISCARDS, _B_REVEAL, _B_CLAIM, _B_KONG_CHAIN, _B_WALL, _B_KONG_TILES,
    _B_SEATS, _B_WINDS, _B_PHASE, _B_LOCK, _B_DADIAOCHE, _B_MONEY, _B_BANKROLL,
    _B_ORACLE_HANDS, _B_ORACLE_LOCKS, _B_ORACLE_DADIAOCHE, _B_ORACLE_WALL,
) = range(len(_BLOCK_IDS))  # fmt: skip
_CF_N, _CF_LIVE_WALL, _CF_SESSION, _CF_BANKROLL, _CF_ORACLE = range(5)
_N_CFG = 5
_F_MONEY_SCALE, _F_BANKROLL = 0, 1
_TURN, _CLAIM, _ROB, _DONE = S.TURN, S.CLAIM, S.ROB, S.DONE
_N_PHASES = len(S.PHASE_NAMES)
_MAX_MELDS = S.MAX_MELDS
_MAX_RIVER = S.MAX_RIVER


_RK_PLANE, _RK_THERMO, _RK_SCALAR, _RK_FLOATS = range(4)
"""Where a v1 row is kept in ``mjenv-obs-v2`` (:mod:`mjenv.encoding.compact`): the kinds of its row map."""


def _make_encode_rows(compact: bool):
    """The compiled encoding loop writing ``mjenv-obs-v1`` rows (``compact`` False) or ``mjenv-obs-v2`` bytes (True).

    One source for both: every block is written through five small writers (a 1 at a tile, a thermometer's count
    at a tile, +1 at a tile, a float at a tile, a scalar row) that put the value into the ``float32 [C, 34]`` row (v1) or where the v2 row map
    ``rmap`` (``int64 [C, 3]``: kind ``_RK_*``, index, thermometer level) keeps that v1 row: a ``uint8`` plane,
    one ``float32`` value, or 34 of them.  ``compact`` is a closure constant, so each version compiles to its own
    straight code (a closure: the compiled-code cache keys each by its value, as :mod:`mjenv.engine.entry` does).
    """

    @njit(_nrt=False, inline="always")
    def one(o, r, t):
        """v1 row ``r`` holds 1 at tile ``t`` (a one-hot or a thermometer level)."""
        if compact:
            rmap = o[3]
            kind = rmap[r, 0]
            src = rmap[r, 1]
            if kind == _RK_PLANE:
                o[1][src, t] = 1
            elif kind == _RK_THERMO:
                level = rmap[r, 2] + 1  # the thermometer's rows are written in increasing order: keep the highest
                if o[1][src, t] < level:
                    o[1][src, t] = level
            else:
                o[2][src + t] = 1.0
        else:
            o[0][r, t] = 1.0

    @njit(_nrt=False, inline="always")
    def therm(o, r0, t, count):
        """The 4-row thermometer from v1 row ``r0`` holds ``count`` at tile ``t`` (its row i is 1 where count > i)."""
        if compact:
            if count > 0:
                o[1][o[3][r0, 1], t] = 4 if count > 4 else count
        else:
            for r in range(4):
                if count > r:
                    o[0][r0 + r, t] = 1.0

    @njit(_nrt=False, inline="always")
    def add1(o, r, t):
        """v1 row ``r`` counts one more at tile ``t`` (a plane of small counts)."""
        if compact:
            o[1][o[3][r, 1], t] += 1
        else:
            o[0][r, t] += 1.0

    @njit(_nrt=False, inline="always")
    def put(o, r, t, v):
        """v1 row ``r`` holds the float ``v`` at tile ``t`` (a row of 34 floats)."""
        if compact:
            o[2][o[3][r, 1] + t] = v
        else:
            o[0][r, t] = v

    @njit(_nrt=False, inline="always")
    def scalar_row(o, r, v):
        """v1 row ``r`` is a "scalar" row holding ``v`` in every column (v2 keeps it once)."""
        if compact:
            o[2][o[3][r, 1]] = v
        else:
            row = o[0]
            for t in range(row.shape[1]):
                row[r, t] = v

    @njit(cache=True, _nrt=False, nogil=True)
    def encode_rows(
        out, planes, values, rmap, static, static_planes, static_values,
        idx, seats, cfg, fcfg, starts, decay, rnd, balance, counts, recency, b8, b16, money,
    ):
        """Write row ``j`` = table ``idx[j]`` of the packed state ``(b8, b16, money)`` seen from ``seats[j]``:
        v1 into ``out[j]`` (``float32 [C, 34]``, starting from ``static``), or v2 into ``planes[j]`` (``uint8 [P, 34]``)
        and ``values[j]`` (``float32 [F]``), starting from ``static_planes`` / ``static_values``; the other
        version's arrays are placeholders, not read.

        Reads the fields at the offsets of :mod:`mjenv.engine.state`; ``counts`` and ``recency`` are its scratch.
        Returns ``(-1, -1)``, or before writing anything ``(0, j)`` / ``(1, j)`` when ``idx[j]`` / ``seats[j]``
        is out of range.  Every block follows the module docstring; rare features are written only where
        they are non-zero, on top of the static rows (kinds, options) and zeros.
        """
        K = idx.shape[0]
        B = b8.shape[0]
        n = cfg[_CF_N]
        for j in range(K):
            if idx[j] < 0 or idx[j] >= B:
                return 0, j
            if seats[j] < 0 or seats[j] >= n:
                return 1, j
        L = cfg[_CF_LIVE_WALL]
        last_age = decay.shape[0] - 1
        counts[:] = 0
        recency[:] = 0.0
        for j in range(K):
            b = idx[j]
            s = seats[j]
            if compact:  # planes[j, 0]: the row's bytes; the planes, then the values from byte 34·P
                row = planes[j, 0]
                vo = 34 * static_planes.shape[0]
                o = (out[0], row[:vo].reshape((static_planes.shape[0], 34)), row[vo:].view(np.float32), rmap)
                sp = static_planes.reshape(-1)  # the static planes, copied as one flat run (as v1's rows below)
                for i in range(vo):
                    row[i] = sp[i]
                va = o[2]
                for i in range(static_values.shape[0]):
                    va[i] = static_values[i]
            else:
                o = (out[j], planes[0], values[0], rmap)
                # the static rows, copied as one flat run (a loop over rows and columns ran ≈ 3× slower: ≈ 1 µs of a
                # one-row call's 1.6)
                flat = o[0].reshape(-1)
                src = static.reshape(-1)
                for i in range(src.shape[0]):
                    flat[i] = src[i]
            r8 = b8[b]
            r16 = b16[b]
            ph = r8[O8_PHASE]
            c = r8[O8_CUR]
            d = r8[O8_DRAWN]
            turn = ph == _TURN
            live = ph != _DONE

            r0 = starts[_B_HAND]
            for t in range(34):
                h = r8[O8_HAND + 34 * s + t]
                therm(o, r0, t, h)
            if turn and c == s and d >= 0:
                one(o, starts[_B_DRAWN], d)

            for k in range(n):
                a = (s + k) % n
                m0 = starts[_B_MELDS] + 5 * k
                for m in range(_MAX_MELDS):
                    kind = r8[O8_MELD_KIND + _MAX_MELDS * a + m]
                    if kind != 0:
                        add1(o, m0 + kind - 1, r8[O8_MELD_TILE + _MAX_MELDS * a + m])
                # Discards: a thermometer of the unclaimed ones and the decayed recency, summed in river order.
                nd = r16[O16_RIVER_LEN + a]
                if nd > 0:
                    clock = np.int64(r16[O16_N_DISCARDS]) - 1
                    for i in range(nd):
                        t = r8[O8_RIVER + _MAX_RIVER * a + i]
                        if t < 0:
                            continue
                        counts[t] += 1
                        age = clock - r16[O16_RIVER_TIME + _MAX_RIVER * a + i]
                        age = 0 if age < 0 else (last_age if age > last_age else age)
                        recency[t] += np.float64(decay[age])
                    d0 = starts[_B_DISCARDS] + 5 * k
                    for t in range(34):
                        ct = counts[t]
                        if ct > 0:
                            therm(o, d0, t, ct)
                            put(o, d0 + 4, t, recency[t])
                            counts[t] = 0
                            recency[t] = 0.0
                # 亮倒: face-up tiles = hand - face-down triplets - a just-drawn tile (private until played).
                if r8[O8_REVEALED + a] != 0:
                    v0 = starts[_B_REVEAL] + 7 * k
                    scalar_row(o, v0, 1.0)
                    if r8[O8_REVEAL_SEQ + a] == 0:
                        scalar_row(o, v0 + 1, 1.0)
                    holding = turn and d >= 0 and c == a and k != 0
                    face_down = 0
                    for t in range(34):
                        shown = np.int64(r8[O8_HAND + 34 * a + t])
                        if r8[O8_HIDDEN + 34 * a + t] != 0:
                            shown -= 3
                            face_down += 1
                        if holding and t == d:
                            shown -= 1
                        therm(o, v0 + 2, t, shown)
                    scalar_row(o, v0 + 6, face_down * (3.0 / FACE_DOWN_SCALE))
                mv = money[b, a]
                if mv != 0.0:
                    scalar_row(o, starts[_B_MONEY] + k, mv / fcfg[_F_MONEY_SCALE])

            # Claim window: the tile under claim is public; who else is asked and their replies are not.
            if ph == _CLAIM or ph == _ROB:
                c0 = starts[_B_CLAIM]
                one(o, c0, r8[O8_CLAIM_TILE])
                scalar_row(o, c0 + (2 if ph == _ROB else 1), 1.0)
                scalar_row(o, c0 + 3 + (np.int64(r8[O8_CLAIM_FROM]) - s) % n, 1.0)

            k0 = starts[_B_KONG_CHAIN]
            if turn and r8[O8_AFTER_KONG] > 0:
                scalar_row(o, k0, r8[O8_AFTER_KONG] / KONG_SCALE)
            if ph == _CLAIM and r8[O8_CLAIM_KONG_POS] > 0:
                scalar_row(o, k0 + 1, r8[O8_CLAIM_KONG_POS] / KONG_SCALE)

            w0 = starts[_B_WALL]
            left = np.int64(r16[O16_BACK]) - np.int64(r16[O16_FRONT])
            scalar_row(o, w0, left / L)
            if left <= 0 and live:
                scalar_row(o, w0 + 1, 1.0)

            # Gejiu's face-up kong tiles are public (docs/rules/common.md §1.12); -1 marks an empty slot.
            for i in range(2):
                kt = r8[O8_KONG_TILES + i]
                if kt >= 0:
                    one(o, starts[_B_KONG_TILES] + i, kt)

            s0 = starts[_B_SEATS]
            scalar_row(o, s0 + (np.int64(r8[O8_DEALER]) - s) % n, 1.0)
            scalar_row(o, s0 + n + (np.int64(c) - s) % n, 1.0)
            if r8[O8_ACTOR] == s and live:
                scalar_row(o, s0 + 2 * n, 1.0)

            p0 = starts[_B_PHASE]
            scalar_row(o, p0 + ph, 1.0)
            if r8[O8_TURNS + s] == 0:
                scalar_row(o, p0 + _N_PHASES, 1.0)

            lk = r16[O16_LOCK + s]
            if lk > 0:
                scalar_row(o, starts[_B_LOCK], 1.0)
                scalar_row(o, starts[_B_LOCK] + 1, lk / LOCK_SCALE)

            # 大吊车 is private to its player (derived from its own lock and hand), like the lock itself.
            dd = r8[O8_DADIAOCHE + s]
            if dd >= 0:
                one(o, starts[_B_DADIAOCHE], dd)

            # Session facts the engine keeps beside the state: winds and 园子 balances.
            if cfg[_CF_SESSION]:
                w0 = starts[_B_WINDS]
                one(o, w0, _EAST + (s - np.int64(r8[O8_DEALER])) % n)
                one(o, w0 + 1, _EAST + rnd[j] % 4)
            if cfg[_CF_BANKROLL]:
                b0 = starts[_B_BANKROLL]
                bankroll = fcfg[_F_BANKROLL]
                for k in range(n):
                    a = (s + k) % n
                    start = balance[b, a] if balance.shape[0] > 0 else bankroll
                    bal = start + money[b, a]
                    v = bal / bankroll
                    scalar_row(o, b0 + k, 0.0 if v < 0.0 else (float(n) if v > n else v))
                    if bal <= BUST_EPS:
                        scalar_row(o, b0 + n + k, 1.0)

            if cfg[_CF_ORACLE]:
                h0 = starts[_B_ORACLE_HANDS]
                for k in range(n):
                    a = (s + k) % n
                    for t in range(34):
                        h = r8[O8_HAND + 34 * a + t]
                        therm(o, h0 + 4 * k, t, h)
                    scalar_row(o, starts[_B_ORACLE_LOCKS] + k, r16[O16_LOCK + a] / LOCK_SCALE)
                    dd = r8[O8_DADIAOCHE + a]
                    if dd >= 0:
                        one(o, starts[_B_ORACLE_DADIAOCHE] + k, dd)
                ow = starts[_B_ORACLE_WALL]
                f = np.int64(r16[O16_FRONT])
                bk = np.int64(r16[O16_BACK])
                for i in range(L):
                    if f + i >= bk:
                        break
                    one(o, ow + i, r8[O8_WALL + f + i])
        return -1, -1

    return encode_rows


def packed_buffers(st: S.State) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The packed buffers ``(int8 [B, ROW8], int16 [B, ROW16], float64 [B, 4])`` behind ``st``, or ``None``.

    An engine's state (:func:`mjenv.engine.state.allocate_packed`) is a set of views into three buffers;
    the kernel reads those (three arguments instead of 27).  The layout is checked field by field (address,
    row stride, inner strides) the first time a state is seen and remembered for it; a state whose fields
    are separate arrays (``State.copy()``, :func:`~mjenv.engine.state.allocate`) gives ``None``.
    """
    key = id(st)
    hit = _PACKED.get(key)
    # The state, and the first field of each buffer, must still be the very objects checked.
    if hit is not None and hit[0]() is st and hit[1] is st.hand and hit[2] is st.river_time and hit[3] is st.money:
        return hit[4]
    bufs = _find_packed(st)
    if bufs is not None:
        if len(_PACKED) >= 16:  # a few engines per process; forget the oldest
            _PACKED.pop(next(iter(_PACKED)))
        _PACKED[key] = (weakref.ref(st), st.hand, st.river_time, st.money, bufs)
    return bufs


_PACKED: dict = {}


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _find_packed(st: S.State):
    """The buffers behind ``st`` if every field is a view at its packed offset, else ``None``."""
    if S.OFFSETS["hand"] or S.OFFSETS["river_time"] or S.OFFSETS["money"]:
        return None  # the first field of each buffer starts it; a new layout needs this function updated
    B = st.hand.shape[0]
    base = {1: (_address(st.hand), S.ROW8), 2: (_address(st.river_time), 2 * S.ROW16), 8: (_address(st.money), 8 * S.MAX_SEATS)}
    for f in fields(st):
        a = getattr(st, f.name)
        size = a.dtype.itemsize
        if not isinstance(a, np.ndarray) or a.ndim < 1 or a.shape[0] != B or size not in base:
            return None
        start, row = base[size]
        if _address(a) != start + size * S.OFFSETS[f.name] or (B > 1 and a.strides[0] != row):
            return None
        step = size
        for d in range(a.ndim - 1, 0, -1):  # inner axes C-ordered inside the row
            if a.shape[d] > 1 and a.strides[d] != step:
                return None
            step *= a.shape[d]
    as_strided = np.lib.stride_tricks.as_strided
    return (
        as_strided(st.hand, (B, S.ROW8), (S.ROW8, 1)),
        as_strided(st.river_time, (B, S.ROW16), (2 * S.ROW16, 2)),
        as_strided(st.money, (B, S.MAX_SEATS), (8 * S.MAX_SEATS, 8)),
    )


def _pack_rows(st: S.State, idx: np.ndarray):
    """Rows ``idx`` of a plain State copied into fresh packed buffers (row j = table ``idx[j]``)."""
    packed, b8, b16, money = S.allocate_packed(len(idx), st.hand.shape[1], st.wall.shape[1])
    for f in fields(st):
        getattr(packed, f.name)[...] = getattr(st, f.name)[idx]
    return b8, b16, money


_NO_PLANES = np.zeros((1, 1, 34), np.uint8)  # placeholders for the arrays of the version not written
_NO_VALUES = np.zeros((1, 1), np.float32)
_NO_RMAP = np.zeros((1, 3), np.int64)
_NO_STATIC = np.zeros((1, 34), np.float32)
_NO_OUT = np.zeros((1, 1, 34), np.float32)
_ENCODE_ROWS = {False: _make_encode_rows(False), True: _make_encode_rows(True)}
"""The compiled loops of :func:`_make_encode_rows`: v1 (False) and v2 (True); made at import (so their cache is
known), compiled by :func:`_kernel`."""
_ENCODE_V1 = _ENCODE_ROWS[False]  # (the v1 loop as a global name, which encode_one's compiled code calls)
_KERNEL: dict = {}


def _signature(compact: bool):
    """The one signature each loop is compiled for (v2 writes ``planes`` = its ``uint8 [K, 1, N]`` bytes)."""
    from numba import types as T

    def arr(dt, nd, layout="C"):
        return T.Array(dt, nd, layout)

    f64, i64 = T.float64, T.int64
    return T.UniTuple(i64, 2)(
        arr(T.float32, 3), arr(T.uint8, 3), arr(T.float32, 2), arr(i64, 2), arr(T.float32, 2),
        arr(T.uint8, 2), arr(T.float32, 1),
        arr(i64, 1), arr(i64, 1), arr(i64, 1), arr(f64, 1), arr(i64, 1), arr(T.float32, 1), arr(i64, 1),
        arr(f64, 2), arr(i64, 1), arr(f64, 1), arr(T.int8, 2), arr(T.int16, 2), arr(f64, 2),
    )


@njit(cache=True, _nrt=False, nogil=True)
def encode_one(out, sel, planes, static, cfg, fcfg, starts, decay, balance, counts, recency, b8, b16, money):
    """The v1 loop's row of table ``sel[0]`` from seat ``sel[1]`` (round ``sel[2]``) into ``out`` (``float32 [C, 34]``):
    14 arguments instead of 20 (``planes``: a placeholder), no batch-row view, the loop's first result back."""
    return _ENCODE_V1(
        out.reshape((1, out.shape[0], out.shape[1])), planes, out, cfg.reshape((1, cfg.shape[0])), static, planes[0],
        out[0], sel[0:1], sel[1:2], cfg, fcfg, starts, decay, sel[2:3], balance, counts, recency, b8, b16, money,
    )[0]


@njit(cache=True, _nrt=False, nogil=True)
def encode_next(out, sel, planes, static, cfg, fcfg, starts, decay, balance, counts, recency, b8, b16, money, paid):
    """The AEC env's next observation: -1 when table ``sel[0]``'s hand is over; else :func:`encode_one` of the seat it
    waits for (set into ``sel[1]``) and that seat back, plus 8 when the table's money differs bit for bit from ``paid``
    (``int64 [n]``: the bits of the money the env last paid out)."""
    b = sel[0]
    if b8[b, O8_PHASE] == _DONE:
        return -1
    sel[1] = seat = np.int64(b8[b, O8_ACTOR])
    moved = 0
    for s in range(paid.shape[0]):
        if money[b].view(np.int64)[s] != paid[s]:
            moved = 8
    encode_one(out, sel, planes, static, cfg, fcfg, starts, decay, balance, counts, recency, b8, b16, money)
    return seat + moved


def _kernel(compact: bool = False):
    """The v1 (or, ``compact``, v2) encoding loop compiled on first use (numba, ``cache=True``, no reference
    counting), one signature: one compilation (cached on disk) serves every batch size."""
    k = _KERNEL.get(compact)
    if k is None:
        k = _ENCODE_ROWS[compact]
        k.compile(_signature(compact))
        k.disable_compile()  # that signature only
        _KERNEL[compact] = k
    return k
