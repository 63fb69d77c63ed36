"""The batched game core: reset and step for B tables at once (docs/rules/common.md §1.7–§1.9, §3).

One :class:`Engine` holds the state of ``B`` tables of one variant and rule options.  Each
step every live table's acting seat gives one action id (see :mod:`mjenv.engine.actions`);
the engine applies it, then advances every table through the moves nobody has to decide
(draws, claim windows nobody can use, a revealed player's automatic discard, any state with a
single legal action) until every live table waits for a real decision.

The state machine runs compiled (the kernels, numba: :mod:`mjenv.engine.entry` and the modules it calls)
table by table over the packed state of :func:`mjenv.engine.state.allocate_packed`; the same code serves
one table (the AEC env) and thousands.  The kernels judge every claim window and settle every hand end and
kong themselves (:mod:`mjenv.engine.codes` lists what: every family's wins, drawn hands and kong money); the
Python path through the family adapter (:mod:`mjenv.engine.family`), which a kernel reaches by stopping a
table with a pending code and which then resumes it, stays as the reference the tests play in lockstep with
the kernels (their configuration entries cleared).  A hand a kernel ended is only booked here in a batch
(match money, sessions kept as rows); its ``results`` entry is built when read, from the fans the kernel wrote for
each winner's reading (:mod:`mjenv.engine.fanrow`; by the pure scorer when readings tie).  Events are kept
as compact records and become dicts only when read.

Seeded walls: table ``i`` of ``reset(seed=s)`` gets the wall :func:`seeded_wall` ``(s, i, tiles)``,
a SplitMix64-driven Fisher–Yates shuffle of the variant's tiles in ascending id order, so a batch
of N tables plays exactly the games of N single tables reset with the same seed and index
(``reset(seed=s, table_ids=[i])``).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from mjenv.engine import actions as A
from mjenv.engine import handk
from mjenv.engine import codes as K
from mjenv.engine import autoplay, entry
from mjenv.engine.arguments import IllegalActionError, WallError, check_batch_size, check_reset_args, check_step_args
from mjenv.engine.calls import _UNREAD, _SettledWin, _direct_entry
from mjenv.engine.views import EventLog, _EventLogs, _Results, _Sessions
from mjenv.engine import state as S
from mjenv.engine import jitcache, yzscore
from mjenv.engine.family import Family, family_for
from mjenv.engine.state import CLAIM, CLAIMED, DONE, PICK, ROB, TURN, State, allocate_packed, fresh_rows
from mjenv.engine import table as T
from mjenv.engine import threads as TH
from mjenv.rules import hand as H
from mjenv.rules.value import Rules, door_rules
from mjenv.tiles import Meld, NotationError, format_counts, parse_tiles, tile_name

__all__ = ["Engine", "IllegalActionError", "WallError", "seeded_wall", "CLAIM", "CLAIMED", "DONE", "PICK", "ROB", "TURN"]

CHI_BITS = (8, 16, 32)  # claim_opts bits of chi with the claimed tile lowest / middle / highest
KONG_KIND_NAMES = {S.CONCEALED_KONG: "concealed", S.ADDED_KONG: "added", S.DIRECT_KONG: "direct"}
_LIANG_KONG = {"none": K.LIANG_KONG_NONE, "keep_ready": K.LIANG_KONG_KEEP_READY, "same_waits": K.LIANG_KONG_SAME_WAITS}
_KONG_LINK = {"off": K.LINK_SELF_CONSECUTIVE, "self_consecutive": K.LINK_SELF_CONSECUTIVE, "chain": K.LINK_CHAIN, "per_hand": K.LINK_PER_HAND}
_MASK64 = (1 << 64) - 1



def _splitmix(x: int) -> tuple[int, int]:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x, z ^ (z >> 31)


def seeded_wall(seed: int, table_id: int, tiles: Sequence[int]) -> list[int]:
    """The wall of table ``table_id`` under ``seed`` in plain Python (the engine runs the compiled twin).

    SplitMix64 seeded with ``mix(mix(seed) ^ table_id)`` drives a Fisher–Yates shuffle of ``tiles``
    (the variant's tiles in ascending id order): for i = W−1 … 1 swap positions i and ``next() mod (i+1)``.
    """
    _, s0 = _splitmix(int(seed) & _MASK64)
    state, _ = _splitmix(s0 ^ (int(table_id) & _MASK64))
    row = list(tiles)
    for i in range(len(row) - 1, 0, -1):
        state, r = _splitmix(state)
        k = r % (i + 1)
        row[i], row[k] = row[k], row[i]
    return row


_INT64 = np.dtype(np.int64)
_STEP_ACTS = 13  # where the action array sits in Engine._step_args: (mode, 11 arrays of Engine._args, idx, acts, ...)


class Engine:
    """B tables of one variant.  See the module docstring for the stepping contract.

    The rules are a :class:`mjenv.rules.Rules` value (``rules=``, or ``variant`` given as one), or resolved here
    once from ``variant`` (default ``kawuxing3``), ``ruleset``, ``preset`` and ``options`` (a mapping, or a
    complete options value) by :func:`mjenv.rules.load_rules`; ``engine.rules`` keeps the value.

    ``threads``: how many threads a kernel call over many tables may run on, in shards of the tables
    (:mod:`mjenv.engine.threads`); the default ``None`` takes every core, capped by ``MJENV_THREADS``.  Results are
    the same for every value.
    """

    def __init__(
        self,
        variant: str | Rules | None = None,
        batch_size: int = 1,
        *,
        ruleset: str | None = None,
        preset: str | None = None,
        options: Mapping[str, Any] | Any = None,
        record_events: bool = True,
        rules: Rules | None = None,
        threads: int | None = None,
    ):
        batch_size = check_batch_size(batch_size)
        threads = TH.check_threads(threads)
        # the public door: the rule strings are resolved here once (variant None: kawuxing3), or rules= handed in
        self.rules = door_rules(variant, ruleset, preset, options, rules)
        self.opts = self.rules.options
        self.variant = variant = self.rules.variant
        jitcache.set_subject(f"the {variant} game core")  # the notice if its compiled code must be built
        self.n = self.rules.n_players
        self.kinds = self.rules.kinds_mask
        self.tiles = np.repeat(np.arange(34, dtype=np.int8), np.where(self.kinds, 4, 0))
        self.wall_size = len(self.tiles)
        self.batch_size = int(batch_size)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.record_events = record_events
        B = self.batch_size
        self.state: State
        self.state, self._b8, self._b16, self._money = allocate_packed(B, self.n, self.wall_size)
        self._fresh8, self._fresh16 = fresh_rows(self.n, self.wall_size)
        self.results: list[dict | None] = _Results(B, self._kernel_result)
        self._end_kind = np.zeros(B, np.int8)  # K.END_* of a hand the kernel settled
        # and the code of the reading it valued each winner with (mjenv.rules.hand), -1 for the other seats
        self._win_reading = np.full((B, S.MAX_SEATS), -1, np.int64)
        self.mask = np.zeros((B, A.N_ACTIONS), dtype=bool)
        self.n_decisions = 0
        self.match_money = np.zeros((B, self.n), dtype=np.float64)
        self.family = family_for(self)
        self._has_sessions = type(self.family).new_session is not Family.new_session
        self.seven_pairs = self.family.seven_pairs
        self._ses = np.zeros((B, 5), np.int64)  # the sessions' rows (see _Sessions)
        self.sessions: list = _Sessions(B, self.family.session_of_row, self._ses)
        self.session_over = np.zeros(B, dtype=bool)
        self.hand_number = np.zeros(B, dtype=np.int64)
        self._pend = np.zeros((B, K.PEND_WIDTH), np.int64)
        self._waiting = np.zeros(B, np.int64)
        self._scratch = np.zeros((4, 34), np.int8)
        self._ev = np.zeros((B if record_events else 1, K.EV_CAPACITY if record_events else 1, K.EV_WIDTH), np.int16)
        self._evn = np.zeros(B, np.int64)
        self._py_events: list[list[dict]] = [[] for _ in range(B)]
        self._logs: dict[int, EventLog] = {}
        self.events = _EventLogs(self)
        self._tabs = handk.tables()
        self._cfg = self._config()
        self._fcfg = self._float_config()
        # float64 [B, n], a view into the kernels' float vector (they limit kong money by it under 园子)
        self.balance = self._fcfg[K.F_BALANCE : K.F_BALANCE + B * self.n].reshape(B, self.n)
        # float64 [B, n]: the money of a hand before the win the kernel settled in it (ddwin._dd_end writes it)
        self._money_before_win = self._fcfg[K.F_BALANCE + B * self.n :].reshape(B, 2 * self.n)[:, : self.n]
        self._all = np.arange(B, dtype=np.int64)
        self._phase = self.state.phase  # int8 [B], a fixed view into the packed state the kernels update in place
        self._info = np.zeros(2, np.int64)
        self._ever_dealt = False
        self._none = np.zeros(0, np.int64)
        # The compiled entry point (entry.kernel_for: only this family's scorers), chosen at the first deal from
        # the configuration vector as it is then, and its direct entry for the common step (_direct_entry).
        self._kernel = None
        self._step_kernel = None
        self._deal_kernel = None  # table.deal_tables' direct entry, for a deal of every table
        self._book_kernel = None  # table.book_ended's direct entry (Engine._book_numbers)
        self._walls_call: tuple | None = None  # table.seeded_walls' entry and the table ids (Engine._table_walls)
        # The kernel arguments of the last common step (Engine.step: tables None, an int64 [B] contiguous action
        # array, at _STEP_ACTS), made again only for another array.  A cache, not state: kept in a tuple, so that the
        # engine's arrays (vars(engine)) stay its state and scratch buffers.
        self._step_args: tuple = (None,) * (_STEP_ACTS + 3)
        self._shape = (B,)
        # The arrays every kernel call takes, in their order (see mjenv.engine.entry.run_tables).
        self._args = (self._b8, self._b16, self._money, self.mask, self._pend, self._ev, self._evn, self._cfg, self._tabs, self._scratch, self._fcfg)
        self.threads = threads
        """Threads the kernel calls over many tables may run on (:mod:`mjenv.engine.threads`; ``threads=None``: the
        cores, capped by ``MJENV_THREADS``)."""
        # (a batch too small to cut in two shards never uses them: the one-table envs pay nothing)
        # what table.book_ended books the numbers of ended hands into (Engine._book_numbers)
        self._book_args = (self._pend, self._end_kind, self._win_reading, self.match_money, self._money)
        self._shards = (TH.Shards(threads, self._args, 9, self._book_numbers)
                        if threads > 1 and B >= 2 * TH.MIN_TABLES else None)
        self._play = None  # random_step's buffers (mjenv.engine.autoplay), made on its first call

    def _config(self) -> np.ndarray:
        fam, opts = self.family, self.opts
        cfg = np.zeros(K.N_CONFIG, np.int64)
        cfg[K.C_N] = self.n
        cfg[K.C_WALL] = self.wall_size
        cfg[K.C_SEVEN_PAIRS] = fam.seven_pairs
        cfg[K.C_LIANG] = fam.liang
        cfg[K.C_CHI] = fam.chi
        cfg[K.C_ROB_ADDED] = fam.rob_added_kong
        cfg[K.C_ROB_REPLACEMENT] = fam.rob_replacement
        cfg[K.C_KONG_TILES] = fam.kong_tiles
        cfg[K.C_SELF_DRAW_MINIMUM] = fam.self_draw_minimum
        cfg[K.C_LIANG_KONG] = _LIANG_KONG[getattr(opts, "liang_kong", "none")]
        cfg[K.C_ANGANG_IMMEDIATE] = getattr(opts, "angang_timing", "deferrable") == "immediate"
        cfg[K.C_KONG_LINK] = _KONG_LINK[getattr(opts, "gangshanggang", "off")]
        cfg[K.C_HIDE_TRIPLETS] = fam.liang and getattr(opts, "liang_hide_triplets", "off") == "on"
        cfg[K.C_RECORD] = self.record_events
        cfg[K.C_KINDS_BITS] = handk.kinds_bits(self.kinds)
        cfg[K.C_SPECIAL] = fam.special_complete(np.zeros((1, 34), np.int8)) is not None
        fam.configure(cfg)  # kong money, and what the family's compiled scorers and ends read
        return cfg


    def _float_config(self) -> np.ndarray:
        # then the balances (F_BALANCE) and two rows per table for the win settlement (codes.F_BALANCE)
        fcfg = np.zeros(K.N_FCONFIG + 3 * self.batch_size * self.n, np.float64)
        self.family.configure_float(fcfg)
        return fcfg

    # ------------------------------------------------------------------ reset
    def reset(
        self,
        seed: int | None = None,
        *,
        walls: Sequence | np.ndarray | None = None,
        dealer: int | Sequence[int] | np.ndarray = 0,
        tables: Sequence[int] | np.ndarray | None = None,
        table_ids: Sequence[int] | np.ndarray | None = None,
        continue_match: bool = False,
    ) -> None:
        """Deal new hands on ``tables`` (default: all); a new match unless ``continue_match``.

        Give either ``seed`` (table ``i`` plays the wall of ``(seed, table_ids[i])``; ``table_ids``
        defaults to the table indices) or ``walls``: one wall per table as tile ids or a notation
        string listing the tiles in the order they leave the wall (13 to the dealer, 13 to each
        next seat, the dealer's 14th, then the live wall front to back).
        """
        seed, walls, dealer, tables, table_ids = check_reset_args(self, seed, walls, dealer, tables, table_ids, continue_match)
        # ``sel`` addresses the same rows as ``idx``; a slice when every table is dealt (the B = 1 env's call),
        # where numpy's fancy indexing would cost ~1.5 µs per array.
        if tables is None:
            idx, sel = self._all, slice(None)
        else:
            idx = sel = np.asarray(tables, dtype=np.int64).reshape(-1)
        k = len(idx)
        if k == 0:
            return
        # A re-deal of some tables, once the direct entries exist, runs on the threads (Shards.deal): each chunk makes
        # its walls, deals them and plays their first automatic moves; ``on_threads`` holds the walls' seed and ids.
        on_threads = None
        threaded = (
            self._shards is not None and tables is not None and k >= 2 * TH.DEAL_MIN_TABLES
            and self._deal_kernel is not None and self._step_kernel is not None and idx.flags.c_contiguous
        )
        if walls is not None:
            wall_arr = self._check_walls(walls, k)
            if threaded:
                on_threads = (None, None)
        else:
            ids = idx if table_ids is None else np.asarray(table_ids, dtype=np.int64).reshape(-1)
            if len(ids) != k:
                raise ValueError(f"table_ids has {len(ids)} entries for {k} tables")
            seed = 0 if seed is None else int(seed)
            if threaded:
                on_threads = (np.uint64(seed & _MASK64), ids.astype(np.uint64))
                wall_arr = np.empty((k, self.wall_size), np.int8)  # (made in the chunks)
            elif tables is None and table_ids is None:  # every table by its index (the one-table env's deal)
                wall_arr = self._table_walls(seed)
            else:
                wall_arr = self.seeded_walls(seed, ids)
        # check_reset_args has checked every dealer is a seat
        if type(dealer) is int:
            dealers = np.full(k, dealer, np.int64)
        else:
            dealers = np.broadcast_to(np.asarray(dealer, dtype=np.int64), (k,)).copy()
        rows = idx.tolist()
        if self._logs:  # complete the held logs first: their events are read from the finished hand's state
            for b in rows:
                log = self._logs.pop(b, None)
                if log is not None:
                    log._detach()
        if not continue_match:
            self.match_money[sel] = 0.0
            self.hand_number[sel] = 0
            self.session_over[sel] = False
            start = self.family.starting_balance()
            if self._has_sessions:  # (families without sessions keep None in every entry)
                self.family.new_sessions(idx, dealers)
            self.balance[sel] = start
        else:
            self.hand_number[sel] += 1
            self.balance[sel] += self.state.money[sel]  # the bankroll carries the finished hand's money
        results = self.results
        for b in rows:
            results[b] = None
        if self.record_events:  # (dict-valued events exist only when recording)
            for b in rows:
                if self._py_events[b]:
                    self._py_events[b] = []
        self._ever_dealt = True
        if on_threads is not None:
            self._pend[sel] = 0
            if self._cfg[K.C_YZ + yzscore.YZ_ON]:  # the round wind the compiled Yangzhou judging reads
                self._pend[sel, K.PEND_ROUND_WIND] = self.family.round_winds(idx)
            head = (self._b8, self._b16, self._money, self._fresh8, self._fresh16)
            tail = (self.tiles, self._cfg, self._ev, self._evn, self.mask)
            k = self._shards.deal(self._deal_kernel, T.seeded_walls, self._step_kernel, (head, tail), idx, wall_arr,
                                  dealers, *on_threads, self._waiting, self._none)  # fmt: skip
            if k:
                self._run(k)
            return
        deal = (self._b8, self._b16, self._money, self._fresh8, self._fresh16, idx, wall_arr, dealers, self._cfg, self._ev,
                self._evn, self.mask)  # fmt: skip
        # The direct entries, without numba's type dispatch (≈ 20 µs a call of these many arguments), once made by a
        # deal of every table: for every deal whose arrays are of the types they were compiled for (the engine's
        # arrays, and C-contiguous ones made above; the one-table env's deal, a loop re-dealing its finished tables).
        direct = self._deal_kernel is not None and self._step_kernel is not None and (
            tables is None or (idx.flags.c_contiguous and wall_arr.flags.c_contiguous and dealers.flags.c_contiguous)
        )
        (self._deal_kernel if direct else T.deal_tables)(*deal)
        if tables is None and self._deal_kernel is None:
            self._deal_kernel = _direct_entry(T.deal_tables, deal)
        self._pend[sel] = 0
        if self._cfg[K.C_YZ + yzscore.YZ_ON]:  # the round wind the compiled Yangzhou judging reads
            self._pend[sel, K.PEND_ROUND_WIND] = self.family.round_winds(idx)
        k = self._call(self._step_kernel if direct else self._entry(), K.MODE_ADVANCE, idx, self._none)
        if self._step_kernel is None:  # compiled by now for the common step's argument types
            example = (K.MODE_STEP, *self._args, self._all, self._all, self._waiting, self._info)
            self._step_kernel = _direct_entry(self._kernel, example)
        if k:
            self._run(k)

    def _call(self, kernel, mode: int, idx: np.ndarray, acts: np.ndarray) -> int:
        """``kernel`` (the entry point or its direct entry) in ``mode`` over tables ``idx``, on shards over threads
        when there are enough of them (:class:`mjenv.engine.threads.Shards`: the same effect and result)."""
        sh = self._shards
        if sh is not None and len(idx) >= 2 * TH.MIN_TABLES:
            # (the chunks are slices of ``idx`` and ``acts``: a direct entry serves them as it serves the whole)
            return sh.run(kernel, mode, idx, acts, self._waiting, self._info)
        return kernel(mode, *self._args, idx, acts, self._waiting, self._info)

    def _entry(self):
        """The kernels' entry point for this engine's configuration (chosen on the first call)."""
        if self._kernel is None:
            self._kernel = entry.kernel_for(self._cfg)
        return self._kernel

    def seeded_walls(self, seed: int, table_ids) -> np.ndarray:
        """int8 [k, W]: the walls :func:`seeded_wall` gives table ids ``table_ids`` under ``seed``."""
        ids = np.asarray(table_ids, dtype=np.int64).reshape(-1)
        out = np.empty((len(ids), self.wall_size), np.int8)
        T.seeded_walls(np.uint64(int(seed) & _MASK64), ids.astype(np.uint64), self.tiles, out)
        return out

    def _table_walls(self, seed: int) -> np.ndarray:
        """``seeded_walls(seed, range(B))`` with the table ids made once and, after the first call, the kernel's direct
        entry (no numba type dispatch, no conversions: 0.3 against 2.2 µs for one table, a deal of the AEC env)."""
        out = np.empty((self.batch_size, self.wall_size), np.int8)
        walls = self._walls_call
        if walls is None:  # the first call loads (or compiles) the kernel; its direct entry serves the next ones
            ids = self._all.astype(np.uint64)
            T.seeded_walls(np.uint64(seed & _MASK64), ids, self.tiles, out)
            self._walls_call = (_direct_entry(T.seeded_walls, (np.uint64(0), ids, self.tiles, out)), ids)
            return out
        walls[0](np.uint64(seed & _MASK64), walls[1], self.tiles, out)
        return out

    def next_hand(self, seed: int | None = None, *, walls=None, tables=None, table_ids=None) -> None:
        """Deal the next hand of each finished table's match (docs/rules/kawuxing.md §3.12 dealer rotation).

        The dealer is the finished hand's ``next_dealer``; money accumulates in ``match_money``.
        """
        idx = np.flatnonzero(self.done) if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
        unfinished = [int(b) for b in idx if list.__getitem__(self.results, b) is None]
        if unfinished:
            raise ValueError(f"tables {unfinished} have no finished hand to continue from")
        over = [int(b) for b in idx if self.session_over[b]]
        if over:
            raise ValueError(f"tables {over} finished their session; start a new one with reset()")
        dealers = np.array([self._next_dealer(b) for b in idx.tolist()], dtype=np.int8)
        self.reset(seed, walls=walls, dealer=dealers, tables=idx, table_ids=table_ids, continue_match=True)

    def _check_walls(self, walls, k: int) -> np.ndarray:
        if isinstance(walls, str):
            walls = [walls]
        rows = []
        for i, w in enumerate(walls):
            try:
                ids = parse_tiles(w.replace(" ", "")) if isinstance(w, str) else list(np.asarray(w, dtype=np.int64))
            except NotationError as exc:
                raise WallError(f"wall {i}: {exc}") from None
            got = np.bincount(np.asarray(ids, dtype=np.int64), minlength=34)[:34] if len(ids) else np.zeros(34, int)
            want = np.where(self.kinds, 4, 0)
            if len(ids) != self.wall_size or not np.array_equal(got, want):
                diff = [f"{tile_name(t)}: {int(got[t])} (want {int(want[t])})" for t in range(34) if got[t] != want[t]]
                raise WallError(
                    f"wall {i} is not the {self.variant} tile set: {len(ids)} tiles (want {self.wall_size}); "
                    + ("; ".join(diff[:6]) if diff else "")
                )
            rows.append(ids)
        if len(rows) != k:
            raise WallError(f"{len(rows)} walls given for {k} tables")
        return np.asarray(rows, dtype=np.int8)

    def sample_worlds(self, table: int, seat: int, n: int, *, seed: int, out: "Engine | None" = None,
                      record_events: bool = False) -> "Engine":
        """``n`` worlds of table ``table`` as seat ``seat`` knows it: an engine of ``n`` tables (``out`` refilled
        when given) in which everything ``seat`` cannot see is dealt afresh (:func:`mjenv.engine.worlds.sample_worlds`,
        docs/search.md)."""
        from mjenv.engine.worlds import sample_worlds

        return sample_worlds(self, table, seat, n, seed=seed, out=out, record_events=record_events)

    # ------------------------------------------------------------------ public views
    @property
    def done(self) -> np.ndarray:
        """bool [B]: the table's hand is over."""
        return self.state.phase == DONE

    def any_done(self) -> bool:
        """Whether any table's hand is over: ``bool(engine.done.any())``, without building the array at B = 1.

        A loop that re-deals finished tables asks this at every step; at B = 1 it is a scalar read (≈ 0.1 µs), where
        ``done`` makes a fresh array and ``.any()`` reduces it (≈ 1.6 µs, a third of a one-table decision)."""
        if self.batch_size == 1:
            return self._phase.item(0) == DONE
        return bool((self._phase == DONE).any())

    def deal_next_walls(self, seed: int, next_wall: int) -> tuple[int, int]:
        """Deal walls ``next_wall, next_wall + 1, …`` of ``seed`` onto the finished tables, each dealt by the seat
        ``wall id % n`` (again where a deal ends at once), as the label and bench loops play consecutive walls;
        returns the next unused wall id and the number of hands that had ended."""
        ended = 0
        done = np.flatnonzero(self._phase == DONE)
        while len(done):
            ended += len(done)
            ids = next_wall + np.arange(len(done))
            next_wall += len(done)
            self.reset(seed=seed, tables=done, table_ids=ids, dealer=ids % self.n)
            done = done[self._phase[done] == DONE]
        return next_wall, ended

    def legal_mask(self) -> np.ndarray:
        """bool [B, 111] legal actions of each table's acting seat (all False for finished tables)."""
        return self.mask.copy()

    def wall_left(self) -> np.ndarray:
        """int [B] tiles left in the live wall."""
        return (self.state.back - self.state.front).astype(np.int64)

    def event_count(self, b: int) -> int:
        """Number of events of table ``b``'s current hand (cheaper than ``len(events[b])``)."""
        if not self.record_events:
            return 0
        # each 亮倒 is one event written as three records (the reveal and two holding the shown hand)
        return int(self._evn[b]) - 2 * int(self.state.revealed[b].sum())

    def melds_of(self, b: int, s: int) -> tuple[Meld, ...]:
        """The declared melds of seat ``s`` at table ``b`` as notation objects."""
        st = self.state
        out = []
        for j in range(int(st.n_melds[b, s])):
            kind = int(st.meld_kind[b, s, j])
            t = int(st.meld_tile[b, s, j])
            src = int(st.meld_src[b, s, j])
            tiles = (t, t + 1, t + 2) if kind == S.CHI_MELD else (t,) * (4 if kind >= S.DIRECT_KONG else 3)
            out.append(Meld(S.MELD_LETTERS[kind], tiles, src if src >= 0 else None))
        return tuple(out)

    def _compute_masks(self, idx) -> np.ndarray:
        """bool [len(idx), 111]: the masks of live tables ``idx`` derived afresh from the state (for the validator)."""
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        out = np.zeros_like(self.mask)
        args = list(self._args)
        args[3] = out
        self._entry()(K.MODE_MASKS, *args, idx, self._none, self._waiting, self._info)
        return out[idx]

    # ------------------------------------------------------------------ step
    def step(self, actions, tables=None) -> None:
        """Apply one action per table, then advance automatic moves.

        ``actions`` has one id per table (finished tables' ids are ignored), or, with ``tables``
        (indices), one id per listed table: only those tables move, the others keep waiting.
        Raises :class:`IllegalActionError` naming the table, seat and action if any live table's
        action is not legal, ``ValueError`` for malformed ``actions`` / ``tables`` and ``RuntimeError``
        before any hand was dealt (:mod:`mjenv.engine.arguments`); in each case nothing changes.
        """
        if actions is self._step_args[_STEP_ACTS] and tables is None and actions.dtype is _INT64 and actions.shape == self._shape:
            # the array of the last common call again (the AEC env's, a loop's buffer): still one int64 row per
            # table (an array changed in place keeps its memory contiguous), so the arguments made then serve
            acts, idx = actions, self._all
            if self._shards is None:
                k = self._step_kernel(*self._step_args)
            else:
                k = self._call(self._step_kernel, K.MODE_STEP, idx, acts)
        elif (
            tables is None
            and type(actions) is np.ndarray
            and actions.dtype is _INT64
            and actions.shape == self._shape
            and actions.flags.c_contiguous
            and self._ever_dealt
        ):  # the common call, already in the form the checks would give (the AEC env and vector envs)
            acts, idx = actions, self._all
            self._step_args = (K.MODE_STEP, *self._args, idx, acts, self._waiting, self._info)
            if self._shards is None:  # (the one-table envs' path: no call more)
                k = self._step_kernel(*self._step_args)
            else:
                k = self._call(self._step_kernel, K.MODE_STEP, idx, acts)
        else:
            acts, tables = check_step_args(self, actions, tables)
            idx = self._all if tables is None else tables
            k = self._call(self._entry(), K.MODE_STEP, idx, acts.astype(np.int64, copy=False))
        info = self._info
        if info.item(1) >= 0:
            self._refuse(idx, acts)
        self.n_decisions += info.item(0)
        if k:
            self._run(k)

    def random_step(self, sampler, *, seed: int, steps: int = 1) -> None:
        """One step of random play with re-deals, in one pass over the tables' chunks on the engine's threads
        (:mod:`mjenv.engine.autoplay`): every finished table is dealt a new match (its ``j``-th such deal plays wall
        ``b + j × B`` of ``seed``, dealt by seat ``id mod n``; ``results[b]`` is None again), then every table's acting
        seat plays a uniformly random legal action drawn by ``sampler`` (a :class:`mjenv.engine.sampling.TableSampler`
        of this batch size; the actions are left in ``sampler.actions``).  ``steps=n`` plays ``n`` such steps in one
        call, the same play as ``n`` calls, with one hand-over to the threads for all of them (the faster loop on several
        threads: docs/benchmarks.md, "Several steps a call").  The
        same results for every thread count."""
        autoplay.random_step(self, sampler, seed, steps)

    def _refuse(self, idx: np.ndarray, acts: np.ndarray) -> None:
        """Raise :class:`IllegalActionError` for the action the step's kernel call over tables ``idx`` with actions
        ``acts`` found illegal (at position ``info[1]``; the kernel changed nothing)."""
        j = self._info.item(1)
        b, a = int(idx[j]), int(acts[j])
        name = A.action_name(a) if 0 <= a < A.N_ACTIONS else f"id {a}"
        legal = ", ".join(A.action_name(x) for x in np.flatnonzero(self.mask[b]))
        raise IllegalActionError(f"table {b}, seat {int(self.state.actor[b])}: action {name} is not legal (legal: {legal})")

    def _run(self, k: int) -> None:
        """Handle the pendings of the first ``k`` tables in ``_waiting`` in Python, resume them, repeat."""
        while k:
            # the numbers of the hands that ended (those ended in a chunk on the threads were booked there: P_BOOKED),
            # and how many ended: one compiled call, where numpy tests cost ≈ 10 µs each on rows out of the caches
            ended = self._book_numbers(self._waiting, k)
            waiting = self._waiting[:k].copy()
            if ended == k:  # (every pending of Kawuxing and Gejiu, nearly every one elsewhere)
                self._book_ended(waiting)
                return
            if ended:
                done = self._pend[waiting, 0] == K.P_BOOKED
                self._book_ended(waiting[done])
                waiting = waiting[~done]
            for b in waiting.tolist():
                self._handle(b, int(self._pend[b, 0]))
            # (``waiting`` is a fresh int64 array: the direct entry of the common step serves it)
            k = self._call(self._step_kernel or self._kernel, K.MODE_RESUME, waiting, self._none)

    def _book_numbers(self, waiting: np.ndarray, k: int, every: bool = False) -> int:
        """The numbers of the hands among tables ``waiting[:k]`` (int64, C-contiguous) that the kernel ended
        (P_ENDED → P_BOOKED; ``every``: all of them ended, and their pending codes are cleared): the end kind, reading
        codes and match money (:func:`mjenv.engine.table.book_ended`, compiled; the threads' chunks call it for their
        own tables).  Returns how many of them ended."""
        book = self._book_kernel
        if book is None:  # (compiled, or loaded, by this first call; its direct entry serves the next ones)
            ended = T.book_ended(waiting, k, every, *self._book_args)
            self._book_kernel = _direct_entry(T.book_ended, (waiting, k, every, *self._book_args))
            return ended
        return book(waiting, k, every, *self._book_args)

    def _book_ended(self, idx: np.ndarray) -> None:
        """Book the hands the kernel settled and ended (P_ENDED, or P_BOOKED where a thread booked their numbers):
        match money, the session, a lazy result."""
        idx = np.ascontiguousarray(idx, np.int64)
        self._book_numbers(idx, len(idx), True)  # (and their pending codes cleared)
        # ``sel`` addresses the rows of ``idx``: a slice for one table (a one-table env's hand end), where numpy's
        # fancy indexing costs ≈ 1 µs an array
        sel = slice(idx.item(0), idx.item(0) + 1) if len(idx) == 1 else idx
        if self._has_sessions:
            # Drawn hands (no winners, no settlement: the rounds, or kong money that left two players busted under
            # 园子, may end the session) in one batch; wins (Diedaohu, Liuwei, Yangzhou) one by one, with whether their
            # settlement ended the session (pend[b, PEND_OVER]).
            drawn = self._end_kind[idx] == K.END_DRAW
            over = np.zeros(len(idx), bool)
            if drawn.any():
                over[drawn] = self.family.advance_drawn(idx[drawn])
            for j in np.flatnonzero(~drawn).tolist():
                b = int(idx[j])
                ended = _SettledWin(bool(self._pend[b, K.PEND_OVER]))
                self.sessions[b], over[j] = self.family.advance_session(b, self._kernel_winners(b)[0], ended)
            self.session_over[sel] = over
        else:  # Kawuxing and Gejiu have no sessions: advance_session keeps None and never ends one
            self.session_over[sel] = False
        results = self.results
        for b in idx.tolist():
            list.__setitem__(results, b, _UNREAD)

    def _next_dealer(self, b: int) -> int:
        """The next dealer of table ``b``'s finished hand: from its result when built, else from the state the
        kernel left (who won, who discarded) without scoring the hand or building the result."""
        result = list.__getitem__(self.results, b)
        if result is not _UNREAD:
            return int(result["next_dealer"])
        winners, discarder = self._kernel_winners(b)
        return int(self.family.next_dealer(b, winners, discarder))

    def _kernel_winners(self, b: int) -> tuple[list[int], int | None]:
        """(winners, discarder) of table ``b``'s hand the kernel settled, read from the state."""
        st = self.state
        kind = int(self._end_kind[b])
        if kind == K.END_DRAW:
            return [], None
        if kind == K.END_SELF_DRAW:
            return [int(st.cur[b])], None
        frm = int(st.claim_from[b])
        order = [(frm + k) % self.n for k in range(1, self.n)]
        winners = [s for s in order if st.claim_reply[b, s] == A.WIN]
        return (winners[:1] if self.family.single_winner else winners), frm

    def _kernel_result(self, b: int) -> dict:
        """The result dict of table ``b``'s hand the kernel settled, as :meth:`_end` makes it: each winner scored by
        the pure scorer on the one reading the kernel valued it with (:attr:`_win_reading`; all readings when
        another one scored as well) or from the fans the kernel wrote for that reading (:meth:`_fans`), then
        settled."""
        st = self.state
        kind = int(self._end_kind[b])
        if kind == K.END_DRAW:
            return self._result(b, self.family.settle_draw(b), [], "draw", None, None)
        # Diedaohu / Liuwei: valued (a busted discarder) and settled (园子) from the money before the win
        money = {"money": self._money_before_win[b].copy()} if self.family.kernel_win_money else {}
        if kind == K.END_SELF_DRAW:
            s, w = int(st.cur[b]), int(st.drawn[b])
            scored = [(s, self._self_draw_score(b, int(self._win_reading[b, s]), **self._fans(b, s), **money))]
            settlement = self.family.settle_win(b, scored, "self-draw", None, **money)
            return self._result(b, settlement, scored, "self-draw", None, w)
        rob = kind == K.END_ROB
        t = int(st.claim_tile[b])
        winners, frm = self._kernel_winners(b)
        scored = []
        for s in winners:
            concealed = st.hand[b, s].copy()
            if s == winners[0]:
                concealed[t] -= 1  # the claimed tile joined the nearest winner's hand after scoring
            code = int(self._win_reading[b, s])
            scored.append((s, self._claim_score(b, s, t, rob, concealed, code, **self._fans(b, s), **money)))
        how = "rob" if rob else "discard"
        return self._result(b, self.family.settle_win(b, scored, how, frm, **money), scored, how, frm, t)

    def _fans(self, b: int, s: int) -> dict:
        """``{"fans": row}``: seat ``s``'s fan row at table ``b`` (:mod:`mjenv.engine.fanrow`) when the kernel wrote the
        fans of its reading there, for the family's ``score``; else ``{}``."""
        at = K.PEND_FANS + K.FAN_SLOTS * s
        if self._pend.item(b, at) <= 0:
            return {}
        return {"fans": self._pend[b, at : at + K.FAN_SLOTS]}

    def _handle(self, b: int, code: int) -> None:
        """Do pending ``code`` of table ``b`` (see :mod:`mjenv.engine.codes`)."""
        st = self.state
        p = self._pend[b]
        if code == K.P_WINDOW:
            bits, rob, t = int(p[1]), bool(p[2]), int(st.claim_tile[b])
            for s in range(self.n):
                if bits >> s & 1:
                    score = self._claim_score(b, s, t, rob)
                    if score.legal:
                        st.claim_opts[b, s] |= 1
                        # Kawuxing's lock remembers the value passed (§3.9 L4); the Yangzhou family's is a plain flag.
                        st.claim_value[b, s] = max(1, score.value_d) if self.family.value_lock else 1
        elif code == K.P_SELF_DRAW:
            self._self_draw_win(b)
        elif code == K.P_CLAIM_WIN:
            order = [(int(st.claim_from[b]) + k) % self.n for k in range(1, self.n)]
            winners = [s for s in order if st.claim_reply[b, s] == A.WIN]
            if self.family.single_winner:
                winners = winners[:1]
            self._claim_win(b, winners)
        else:  # pragma: no cover - a kernel bug
            raise RuntimeError(f"table {b}: unknown pending code {code}")

    # ------------------------------------------------------------------ the Python pieces
    def _event_py(self, b: int, event: dict) -> None:
        """Append a dict-valued event (made here, not by a kernel) to table ``b``'s log."""
        if not self.record_events:
            return
        k = int(self._evn[b])
        lst = self._py_events[b]
        if k < K.EV_CAPACITY:
            self._ev[b, k, 0] = K.EV_PY
            self._ev[b, k, 1] = len(lst)
        lst.append(event)
        self._evn[b] = k + 1

    def _claim_score(self, b: int, s: int, t: int, rob: bool, concealed=None, reading: int = -1, **money):
        """Score (and judge) seat ``s`` winning on the tile under claim ``t`` (its hand, or ``concealed``); on the
        reading of code ``reading`` alone when the kernel found it (:meth:`_kernel_result`; ``money``: the money
        before the win, and ``fans``: the kernel's fan row of that reading, where the family reads them)."""
        st = self.state
        extra = {} if reading < 0 else {"reading": reading}
        extra.update(money)
        return self.family.score(
            b,
            s,
            st.hand[b, s] if concealed is None else concealed,
            t,
            "rob" if rob else "discard",
            kong_position=0 if rob else int(st.claim_kong_pos[b]),
            last_tile=(not rob) and bool(st.front[b] >= st.back[b]),
            **extra,
        )

    def _self_draw_score(self, b: int, reading: int = -1, **money):
        """Score the hand of the seat on turn as a self-draw on the tile it drew (``reading``, ``money``: as
        :meth:`_claim_score`)."""
        st = self.state
        s = int(st.cur[b])
        w = int(st.drawn[b])
        concealed = st.hand[b, s].copy()
        concealed[w] -= 1
        extra = {} if reading < 0 else {"reading": reading}
        extra.update(money)
        return self.family.score(
            b, s, concealed, w, "self-draw", kong_position=int(st.after_kong[b]),
            last_tile=bool(st.front[b] >= st.back[b]), **extra,
        )

    def _self_draw_win(self, b: int) -> None:
        st = self.state
        s = int(st.cur[b])
        w = int(st.drawn[b])
        score = self._self_draw_score(b)
        settlement = self.family.settle_win(b, [(s, score)], "self-draw", None)
        self._end(b, settlement, [(s, score)], how="self-draw", discarder=None, tile=w)

    def _claim_win(self, b: int, winners: list[int]) -> None:
        st = self.state
        rob = st.phase[b] == ROB
        t = int(st.claim_tile[b])
        frm = int(st.claim_from[b])
        scored = [(s, self._claim_score(b, s, t, rob)) for s in winners]
        # The claimed tile joins the nearest winner's hand so that tiles stay conserved.
        if rob:
            st.hand[b, frm, t] -= 1
        else:
            st.river_len[b, frm] -= 1
            st.river[b, frm, st.river_len[b, frm]] = -1
        st.hand[b, winners[0], t] += 1
        how = "rob" if rob else "discard"
        settlement = self.family.settle_win(b, scored, how, frm)
        self._end(b, settlement, scored, how=how, discarder=frm, tile=t)

    def _end(self, b, settlement, scored, how, discarder, tile) -> None:
        st = self.state
        for tr in settlement.transfers:
            st.money[b, tr.payer] -= tr.amount
            st.money[b, tr.payee] += tr.amount
        st.phase[b] = DONE
        st.claim_opts[b] = 0
        self.mask[b] = False
        self.match_money[b] += st.money[b]
        self.sessions[b], over = self.family.advance_session(b, [w for w, _ in scored], settlement)
        self.session_over[b] = over
        result = self._result(b, settlement, scored, how, discarder, tile)
        self.results[b] = result
        if self.record_events:
            self._event_py(b, {"type": "end", **result})

    def _result(self, b, settlement, scored, how, discarder, tile) -> dict:
        """The ``results`` dict of table ``b``'s finished hand (state already final)."""
        st = self.state
        next_dealer = self.family.next_dealer(b, [w for w, _ in scored], discarder)
        winners = [
            {"seat": s, "reading": sc.reading_text, "fans": dict(sc.fans), "value": sc.value, "cap": sc.cap}
            for s, sc in scored
        ]
        result = {
            "how": how,
            "winners": winners,
            "discarder": discarder,
            "tile": tile_name(tile) if tile is not None else None,
            "transfers": [_transfer_dict(tr) for tr in settlement.transfers],
            "settlement_deltas": [float(x) for x in settlement.deltas],
            "deltas": st.money[b].tolist(),  # (float64: Python floats)
            "next_dealer": int(next_dealer),
            "session_over": bool(self.session_over[b]),
        }
        return result

    # ------------------------------------------------------------------ events
    def _log(self, b: int) -> EventLog:
        log = self._logs.get(b)
        if log is None:
            log = self._logs[b] = EventLog(self, b)
        return log._sync()

    def _convert(self, b: int, k: int, out: list) -> int:
        """Append the dict of table ``b``'s event record ``k`` to ``out``; returns the next record index."""
        rec = [int(x) for x in self._ev[b, k]]
        kind, a0, a1, a2, a3 = rec
        st = self.state
        if kind == K.EV_PY:
            out.append(self._py_events[b][a0])
        elif kind == K.EV_END:
            out.append({"type": "end", **self.results[b]})
        elif kind == K.EV_DEAL:
            wall = [int(x) for x in st.wall[b]]
            hands = []
            for k_seat in range(self.n):
                seat = (a0 + k_seat) % self.n
                hands.append((seat, wall[13 * k_seat : 13 * k_seat + 13]))
            counts = np.zeros((self.n, 34), np.int8)
            for seat, tiles in hands:
                for t in tiles:
                    counts[seat, t] += 1
            counts[a0, wall[13 * self.n]] += 1
            out.append(
                {
                    "type": "deal",
                    "dealer": a0,
                    "hands": [format_counts(counts[s]) for s in range(self.n)],
                    "wall": "".join(tile_name(t) for t in wall),
                }
            )
        elif kind == K.EV_DRAW:
            ev = {"type": "draw", "seat": a0, "tile": tile_name(a1)}
            if a2:
                ev["replacement"] = True
            out.append(ev)
        elif kind == K.EV_DISCARD:
            out.append({"type": "discard", "seat": a0, "tile": tile_name(a1), "liang": bool(a2)})
        elif kind == K.EV_REPLY:
            out.append({"type": "reply", "seat": a0, "action": A.action_name(a1)})
        elif kind == K.EV_PONG:
            out.append({"type": "pong", "seat": a0, "tile": tile_name(a1), "from": a2})
        elif kind == K.EV_CHI:
            meld = "".join(str(x % 9 + 1) for x in range(a3, a3 + 3)) + "mps"[a3 // 9]
            out.append({"type": "chi", "seat": a0, "tile": tile_name(a1), "from": a2, "meld": meld})
        elif kind == K.EV_ADD_KONG:
            out.append({"type": "add_kong_declared", "seat": a0, "tile": tile_name(a1)})
        elif kind == K.EV_KONG:
            kind, src = a2 // 8, a2 % 8 - 1
            src = None if src < 0 else src
            if self._cfg[K.C_KONG_LIMIT]:
                # limited by the balances: recomputed from them as they stood at the kong (the start-of-hand
                # balance plus this hand's money, which only kongs moved so far, in the same float steps)
                money = np.zeros(self.n, np.float64)
                for e in list.__iter__(out):
                    if e["type"] == "kong":
                        for tr in e["transfers"]:
                            money[tr["payer"]] -= tr["amount"]
                            money[tr["payee"]] += tr["amount"]
                transfers = self.family.kong_money_with(b, a0, KONG_KIND_NAMES[kind], src, money)
            else:  # a pure function of the kong (Kawuxing's, Diedaohu's / Liuwei's without 园子, or none)
                transfers = self.family.kong_money(b, a0, KONG_KIND_NAMES[kind], src, a3)
            out.append(_kong_event(a0, a1, kind, src, a3, [_transfer_dict(tr) for tr in transfers]))
        elif kind == K.EV_PICK:
            out.append({"type": "kong_pick", "seat": a0, "slot": a1, "tile": tile_name(a2)})
        elif kind == K.EV_REVEAL:
            counts = np.zeros(34, np.int8)
            fields = [int(x) for x in self._ev[b, k + 1, 1:]] + [int(x) for x in self._ev[b, k + 2, 1:]]
            for f, v in enumerate(fields):
                for x in range(6 * f, min(6 * f + 6, 34)):
                    counts[x] = v % 5
                    v //= 5
            out.append({"type": "reveal", "seat": a0, "shown": format_counts(counts), "face_down": a1})
            return k + 3
        else:  # pragma: no cover - a kernel bug
            raise RuntimeError(f"table {b}: unknown event record {rec}")
        return k + 1


def _kong_event(s: int, t: int, kind: int, src: int | None, pos: int, transfers: list) -> dict:
    return {
        "type": "kong",
        "seat": s,
        "tile": tile_name(t),
        "kind": KONG_KIND_NAMES[kind],
        "from": src,
        "position": pos,
        "transfers": transfers,
    }


def _transfer_dict(tr) -> dict:
    return {"payer": int(tr.payer), "payee": int(tr.payee), "amount": float(tr.amount), "reason": tr.reason}
