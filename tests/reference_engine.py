"""The numpy game core this project ran before the compiled one: kept as the test oracle of tests/differential.py.

One :class:`Engine` holds the state of ``B`` tables of one variant and rule options.  Each
step every live table's acting seat gives one action id (see :mod:`mjenv.encoding.actions`);
the engine applies it, then advances every table through the moves nobody has to decide
(draws, claim windows nobody can use, a revealed player's automatic discard, any state with a
single legal action) until every live table waits for a real decision.

Common moves (draw, discard, claim replies, passes) are applied with numpy over all tables
concerned; rare moves (kongs, wins, 亮倒, the end of a hand) are applied table by table and
call the pure scoring library.

Seeded walls: table ``i`` of ``reset(seed=s)`` gets the wall
``numpy.random.default_rng([s, i]).permutation(tiles)`` where ``tiles`` is the variant's tile
multiset in ascending id order, so a batch of N tables plays exactly the games of N single
tables reset with the same seed and index (``reset(seed=s, table_ids=[i])``).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.engine.family import family_for
from mjenv.engine.state import CLAIM, CLAIMED, DONE, PICK, ROB, TURN, State, allocate
from mjenv.rules import hand as H
from mjenv.rules.options import load_rules, n_players, tile_kinds
from mjenv.tiles import Meld, NotationError, format_counts, parse_tiles, tile_name

CHI_BITS = (8, 16, 32)  # claim_opts bits of chi with the claimed tile lowest / middle / highest
KONG_KIND_NAMES = {S.CONCEALED_KONG: "concealed", S.ADDED_KONG: "added", S.DIRECT_KONG: "direct"}


class IllegalActionError(ValueError):
    """An action the mask does not allow; the engine state is unchanged."""


class WallError(ValueError):
    """An explicit wall that is not exactly the variant's tile multiset."""


class Engine:
    """B tables of one variant.  See the module docstring for the stepping contract."""

    def __init__(
        self,
        variant: str = "kawuxing3",
        batch_size: int = 1,
        *,
        ruleset: str | None = None,
        preset: str | None = None,
        options: Mapping[str, Any] | Any = None,
        record_events: bool = True,
    ):
        if options is not None and not isinstance(options, Mapping):
            self.opts = options
        else:
            self.opts = load_rules(variant, ruleset=ruleset, preset=preset, options=options)
        self.variant = variant
        self.n = n_players(variant)
        self.kinds = tile_kinds(variant, self.opts)
        self.tiles = np.repeat(np.arange(34, dtype=np.int8), np.where(self.kinds, 4, 0))
        self.wall_size = len(self.tiles)
        self.batch_size = int(batch_size)
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.record_events = record_events
        self.state: State = allocate(self.batch_size, self.n, self.wall_size)
        self.events: list[list[dict]] = [[] for _ in range(self.batch_size)]
        self.results: list[dict | None] = [None] * self.batch_size
        self.mask = np.zeros((self.batch_size, A.N_ACTIONS), dtype=bool)
        self.n_decisions = 0
        self.match_money = np.zeros((self.batch_size, self.n), dtype=np.float64)
        self.family = family_for(self)
        self.seven_pairs = self.family.seven_pairs
        self.balance = np.zeros((self.batch_size, self.n), dtype=np.float64)
        self.sessions: list = [None] * self.batch_size
        self.session_over = np.zeros(self.batch_size, dtype=bool)
        self.hand_number = np.zeros(self.batch_size, dtype=np.int64)

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
        idx = np.arange(self.batch_size) if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
        k = len(idx)
        if k == 0:
            return
        if walls is not None:
            wall_arr = self._check_walls(walls, k)
        else:
            ids = idx if table_ids is None else np.asarray(table_ids, dtype=np.int64).reshape(-1)
            if len(ids) != k:
                raise ValueError(f"table_ids has {len(ids)} entries for {k} tables")
            base = 0 if seed is None else int(seed)
            wall_arr = np.stack([np.random.default_rng([base, int(i)]).permutation(self.tiles) for i in ids])
        dealers = np.broadcast_to(np.asarray(dealer, dtype=np.int8), (k,)).copy()
        if np.any((dealers < 0) | (dealers >= self.n)):
            raise ValueError(f"dealer must be a seat 0..{self.n - 1}")
        if not continue_match:
            self.match_money[idx] = 0.0
            self.hand_number[idx] = 0
            self.session_over[idx] = False
            for j, b in enumerate(idx):
                self.sessions[b] = self.family.new_session(int(dealers[j]))
                self.balance[b] = self.family.starting_balance()
        else:
            self.hand_number[idx] += 1
            self.balance[idx] += self.state.money[idx]  # the bankroll carries the finished hand's money
        self._deal(idx, wall_arr, dealers)
        self._advance(idx)

    def next_hand(self, seed: int | None = None, *, walls=None, tables=None, table_ids=None) -> None:
        """Deal the next hand of each finished table's match (docs/rules/kawuxing.md §3.12 dealer rotation).

        The dealer is the finished hand's ``next_dealer``; money accumulates in ``match_money``.
        """
        idx = np.flatnonzero(self.done) if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
        unfinished = [int(b) for b in idx if self.results[b] is None]
        if unfinished:
            raise ValueError(f"tables {unfinished} have no finished hand to continue from")
        over = [int(b) for b in idx if self.session_over[b]]
        if over:
            raise ValueError(f"tables {over} finished their session; start a new one with reset()")
        dealers = np.array([self.results[b]["next_dealer"] for b in idx], dtype=np.int8)
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

    def _deal(self, idx: np.ndarray, walls: np.ndarray, dealers: np.ndarray) -> None:
        st = self.state
        n = self.n
        fresh = allocate(len(idx), n, self.wall_size)
        for name in fresh.__dataclass_fields__:
            getattr(st, name)[idx] = getattr(fresh, name)
        st.wall[idx] = walls
        rows = np.arange(len(idx))
        for k in range(n):
            seat = (dealers + k) % n
            counts = np.zeros((len(idx), 34), np.int8)
            np.add.at(counts, (np.repeat(rows, 13), walls[:, 13 * k : 13 * k + 13].reshape(-1).astype(np.int64)), 1)
            st.hand[idx, seat] = counts
        fourteenth = walls[:, 13 * n].astype(np.int64)
        st.hand[idx, dealers, fourteenth] += 1
        st.front[idx] = 13 * n + 1
        st.back[idx] = self.wall_size
        if self.family.kong_tiles:
            # Gejiu §6.3: the last two wall tiles are turned face up as kong tiles right after the deal.
            st.kong_tiles[idx] = walls[:, -2:][:, ::-1]
            st.back[idx] = self.wall_size - 2
        st.dealer[idx] = dealers
        st.cur[idx] = dealers
        st.actor[idx] = dealers
        st.phase[idx] = TURN
        st.drawn[idx] = fourteenth
        for j, b in enumerate(idx):
            self.results[b] = None
            self.events[b] = []
            if self.record_events:
                self.events[b].append(
                    {
                        "type": "deal",
                        "dealer": int(dealers[j]),
                        "hands": [format_counts(st.hand[b, s]) for s in range(n)],
                        "wall": "".join(tile_name(t) for t in walls[j]),
                    }
                )

    # ------------------------------------------------------------------ public views
    @property
    def done(self) -> np.ndarray:
        """bool [B]: the table's hand is over."""
        return self.state.phase == DONE

    def legal_mask(self) -> np.ndarray:
        """bool [B, 111] legal actions of each table's acting seat (all False for finished tables)."""
        return self.mask.copy()

    def wall_left(self) -> np.ndarray:
        """int [B] tiles left in the live wall."""
        return (self.state.back - self.state.front).astype(np.int64)

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

    # ------------------------------------------------------------------ step
    def step(self, actions, tables=None) -> None:
        """Apply one action per table, then advance automatic moves.

        ``actions`` has one id per table (finished tables' ids are ignored), or, with ``tables``
        (indices), one id per listed table: only those tables move, the others keep waiting.
        Raises :class:`IllegalActionError` naming the table, seat and action if any live table's
        action is not legal; in that case nothing changes.
        """
        acts = np.asarray(actions).reshape(-1)
        idx = np.arange(self.batch_size) if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
        if acts.shape[0] != len(idx):
            raise ValueError(f"expected {len(idx)} actions, got {acts.shape[0]}")
        if not np.issubdtype(acts.dtype, np.integer):
            raise IllegalActionError(f"actions must be integer ids, got dtype {acts.dtype}")
        keep = self.state.phase[idx] != DONE
        live = idx[keep]
        a = acts[keep].astype(np.int64)
        inrange = (a >= 0) & (a < A.N_ACTIONS)
        ok = inrange.copy()
        ok[inrange] = self.mask[live[inrange], a[inrange]]
        if not ok.all():
            j = int(np.flatnonzero(~ok)[0])
            b = int(live[j])
            name = A.action_name(a[j]) if inrange[j] else f"id {a[j]}"
            legal = ", ".join(A.action_name(x) for x in np.flatnonzero(self.mask[b]))
            raise IllegalActionError(
                f"table {b}, seat {int(self.state.actor[b])}: action {name} is not legal (legal: {legal})"
            )
        self.n_decisions += len(live)
        self._apply(live, a)
        self._advance(live)

    def _apply(self, idx: np.ndarray, a: np.ndarray) -> None:
        st = self.state
        ph = st.phase[idx]
        own = (ph == TURN) | (ph == CLAIMED)
        disc = own & (a < A.KONG_SELF)
        if disc.any():
            self._discard(idx[disc], (a[disc] % 34).astype(np.int64), a[disc] >= A.LIANG)
        for b, act in zip(idx[own & ~disc], a[own & ~disc]):
            if act == A.WIN:
                self._self_draw_win(int(b))
            else:
                self._self_kong(int(b), int(act) - A.KONG_SELF)
        pick = ph == PICK
        for b, act in zip(idx[pick], a[pick]):
            self._pick(int(b), int(act) - A.KONGTILE_0)
        if (~own & ~pick).any():
            self._reply(idx[~own & ~pick], a[~own & ~pick])

    def _advance(self, tables: np.ndarray) -> None:
        """Recompute the masks of ``tables``; auto-play every one whose seat has exactly one legal action."""
        st = self.state
        tables = np.asarray(tables, dtype=np.int64)
        self.mask[tables[st.phase[tables] == DONE]] = False
        todo = tables[st.phase[tables] != DONE]
        while len(todo):
            self.mask[todo] = self._compute_masks(todo)
            single = todo[self.mask[todo].sum(1) == 1]
            if not len(single):
                break
            self._apply(single, self.mask[single].argmax(1).astype(np.int64))
            self.mask[single[st.phase[single] == DONE]] = False
            todo = single[st.phase[single] != DONE]

    # ------------------------------------------------------------------ draws and discards
    def _draw(self, idx: np.ndarray, seats: np.ndarray) -> None:
        """Normal draw for ``seats`` at tables ``idx``; an empty wall ends the hand as a draw."""
        st = self.state
        empty = st.front[idx] >= st.back[idx]
        for b in idx[empty]:
            self._exhaustive_draw(int(b))
        idx, seats = idx[~empty], seats[~empty]
        if not len(idx):
            return
        tiles = st.wall[idx, st.front[idx]].astype(np.int64)
        st.front[idx] += 1
        st.claim_tile[idx] = -1
        st.claim_from[idx] = -1
        st.hand[idx, seats, tiles] += 1
        st.drawn[idx] = tiles
        st.lock[idx, seats] = 0
        st.dadiaoche[idx, seats] = -1
        st.cur[idx] = seats
        st.actor[idx] = seats
        st.phase[idx] = TURN
        st.after_kong[idx] = 0
        if self.record_events:
            for b, s, t in zip(idx, seats, tiles):
                self.events[b].append({"type": "draw", "seat": int(s), "tile": tile_name(t)})

    def _discard(self, idx: np.ndarray, tiles: np.ndarray, liang: np.ndarray) -> None:
        st = self.state
        s = st.cur[idx].astype(np.int64)
        st.hand[idx, s, tiles] -= 1
        pos = st.river_len[idx, s].astype(np.int64)
        st.river[idx, s, pos] = tiles
        st.river_time[idx, s, pos] = st.n_discards[idx]
        st.river_len[idx, s] += 1
        st.n_discards[idx] += 1
        st.claim_kong_pos[idx] = st.after_kong[idx]
        st.after_kong[idx] = 0
        st.drawn[idx] = -1
        st.turns[idx, s] += 1
        # 大吊车 (Yangzhou family §7.6): a locked player left holding only the tile it just discarded may win on it.
        single = (st.lock[idx, s] > 0) & (st.hand[idx, s].sum(1) == 1) & (st.hand[idx, s, tiles] == 1)
        st.dadiaoche[idx, s] = np.where(single, tiles, -1)
        if self.record_events:
            for b, seat, t, lg in zip(idx, s, tiles, liang):
                self.events[b].append({"type": "discard", "seat": int(seat), "tile": tile_name(t), "liang": bool(lg)})
        for b, seat in zip(idx[liang], s[liang]):
            self._reveal(int(b), int(seat))
        self._open_window(idx, tiles, s, rob=False)

    def _reveal(self, b: int, s: int) -> None:
        st = self.state
        st.reveal_seq[b, s] = int(st.revealed[b].sum())
        st.revealed[b, s] = True
        hidden = self.family.hideable_triplets(b, s)
        st.hidden[b, s] = False
        for t in hidden:
            st.hidden[b, s, t] = True
        if self.record_events:
            shown = st.hand[b, s].copy()
            for t in hidden:
                shown[t] -= 3
            self.events[b].append(
                {"type": "reveal", "seat": s, "shown": format_counts(shown), "face_down": 3 * len(hidden)}
            )

    # ------------------------------------------------------------------ claim windows
    def _open_window(self, idx: np.ndarray, tiles: np.ndarray, frm: np.ndarray, rob: bool) -> None:
        """Find who may claim ``tiles`` discarded (or added-konged) by ``frm``; ask them or move on."""
        st = self.state
        n = self.n
        st.claim_tile[idx] = tiles
        st.claim_from[idx] = frm
        st.claim_reply[idx] = -1
        st.claim_opts[idx] = 0
        st.claim_value[idx] = 0
        wall_left = (st.back[idx] - st.front[idx]).astype(np.int64)
        rows = np.arange(len(idx))
        for k in range(1, n):
            s = (frm + k) % n
            h = st.hand[idx, s].astype(np.int8)
            cnt = h[rows, tiles]
            h[rows, tiles] += 1
            comp = H.is_complete(h, self.seven_pairs)
            special = self.family.special_complete(h)
            if special is not None:
                comp |= special
            opts = np.zeros(len(idx), np.int8)
            for j in np.flatnonzero(comp):
                b, seat = int(idx[j]), int(s[j])
                score = self._claim_score(b, seat, int(tiles[j]), rob)
                if score.legal:
                    opts[j] |= 1
                    # Kawuxing's lock remembers the value passed (§3.9 L4); the Yangzhou family's is a plain flag.
                    st.claim_value[b, seat] = max(1, score.value_d) if self.family.value_lock else 1
            if not rob:
                rev = st.revealed[idx, s]
                can = wall_left > 0
                opts |= np.where((cnt >= 2) & ~rev & can, 2, 0).astype(np.int8)
                kong = (cnt == 3) & can
                for j in np.flatnonzero(kong & rev):
                    if not self._revealed_kong_ok(int(idx[j]), int(s[j]), int(tiles[j]), "direct"):
                        kong[j] = False
                opts |= np.where(kong, 4, 0).astype(np.int8)
                if k == 1 and self.family.chi:
                    opts |= self._chi_bits(h, tiles, cnt) * can
            st.claim_opts[idx, s] = opts
        st.phase[idx] = ROB if rob else CLAIM
        self._next_claimant(idx)

    @staticmethod
    def _chi_bits(h_plus: np.ndarray, tiles: np.ndarray, cnt: np.ndarray) -> np.ndarray:
        """claim_opts chi bits for hands ``h_plus`` (already holding the claimed tile) on suited ``tiles``."""
        h = h_plus.copy()
        h[np.arange(len(tiles)), tiles] = cnt
        rank = np.where(tiles < 27, tiles % 9, -10)
        padded = np.concatenate([np.zeros((len(tiles), 2), h.dtype), h, np.zeros((len(tiles), 2), h.dtype)], axis=1)
        at = lambda off: padded[np.arange(len(tiles)), tiles + 2 + off] > 0  # noqa: E731
        low = (rank >= 0) & (rank <= 6) & at(1) & at(2)
        mid = (rank >= 1) & (rank <= 7) & at(-1) & at(1)
        high = (rank >= 2) & (rank <= 8) & at(-2) & at(-1)
        return (low * CHI_BITS[0] + mid * CHI_BITS[1] + high * CHI_BITS[2]).astype(np.int8)

    def _next_claimant(self, idx: np.ndarray) -> None:
        """Point each window at its next unanswered eligible seat in turn order; resolve finished windows."""
        st = self.state
        n = self.n
        offs = np.arange(1, n)
        seats = (st.claim_from[idx, None].astype(np.int64) + offs[None, :]) % n
        pending = (st.claim_opts[idx[:, None], seats] > 0) & (st.claim_reply[idx[:, None], seats] < 0)
        has = pending.any(1)
        first = seats[np.arange(len(idx)), pending.argmax(1)]
        st.actor[idx[has]] = first[has]
        if (~has).any():
            self._resolve(idx[~has])

    def _reply(self, idx: np.ndarray, a: np.ndarray) -> None:
        st = self.state
        s = st.actor[idx].astype(np.int64)
        st.claim_reply[idx, s] = a
        missed = ((st.claim_opts[idx, s] & 1) > 0) & (a != A.WIN)
        if missed.any():
            mb, ms = idx[missed], s[missed]
            st.lock[mb, ms] = np.maximum(st.lock[mb, ms], np.maximum(st.claim_value[mb, ms], 1))
        if self.record_events:
            for b, seat, act in zip(idx, s, a):
                self.events[b].append({"type": "reply", "seat": int(seat), "action": A.action_name(act)})
        self._next_claimant(idx)

    def _resolve(self, idx: np.ndarray) -> None:
        st = self.state
        replies = st.claim_reply[idx]
        wins = (replies == A.WIN).any(1)
        claims = ((replies == A.PONG) | (replies == A.KONG_CLAIM) | ((replies >= A.CHI_LOW) & (replies <= A.CHI_HIGH))).any(1)
        quiet = ~wins & ~claims
        q = idx[quiet]
        if len(q):
            rob = q[st.phase[q] == ROB]
            disc = q[st.phase[q] == CLAIM]
            st.claim_opts[q] = 0
            if len(disc):
                self._draw(disc, (st.claim_from[disc].astype(np.int64) + 1) % self.n)
            for b in rob:
                if st.rob_replacement[b]:  # nobody took the replacement tile: the konger plays on
                    st.rob_replacement[b] = False
                    st.phase[b] = TURN
                    st.actor[b] = st.cur[b]
                    st.claim_tile[b] = -1
                else:
                    self._complete_kong(int(b), int(st.cur[b]), int(st.claim_tile[b]), S.ADDED_KONG, None)
        for b in idx[~quiet]:
            b = int(b)
            order = [(int(st.claim_from[b]) + k) % self.n for k in range(1, self.n)]
            winners = [s for s in order if st.claim_reply[b, s] == A.WIN]
            if winners:
                if self.family.single_winner:
                    winners = winners[:1]
                self._claim_win(b, winners)
                continue
            s = next((s for s in order if st.claim_reply[b, s] in (A.PONG, A.KONG_CLAIM)), None)
            if s is None:  # chi has the lowest priority (§1.8) and only the next player may chi
                s = order[0]
                self._chi(b, s, int(st.claim_reply[b, s]) - A.CHI_LOW)
            elif st.claim_reply[b, s] == A.PONG:
                self._pong(b, s)
            else:
                self._direct_kong(b, s)

    def _take_discard(self, b: int) -> int:
        """Remove the tile under claim from its discarder's river (it is always the last one)."""
        st = self.state
        frm = int(st.claim_from[b])
        st.river_len[b, frm] -= 1
        st.river[b, frm, st.river_len[b, frm]] = -1
        return int(st.claim_tile[b])

    def _add_meld(self, b: int, s: int, kind: int, t: int, src: int | None) -> None:
        st = self.state
        j = int(st.n_melds[b, s])
        st.meld_kind[b, s, j] = kind
        st.meld_tile[b, s, j] = t
        st.meld_src[b, s, j] = -1 if src is None else src
        st.n_melds[b, s] += 1
        if kind == S.CHI_MELD:
            st.melded[b, s, t : t + 3] += 1
        else:
            st.melded[b, s, t] += 4 if kind >= S.DIRECT_KONG else 3

    def _pong(self, b: int, s: int) -> None:
        self._claim_meld(b, s, S.PONG_MELD, int(self.state.claim_tile[b]))

    def _chi(self, b: int, s: int, position: int) -> None:
        """Chi of the tile under claim as the lowest / middle / highest tile of the sequence (position 0/1/2)."""
        self._claim_meld(b, s, S.CHI_MELD, int(self.state.claim_tile[b]) - position)

    def _claim_meld(self, b: int, s: int, kind: int, low: int) -> None:
        """Seat ``s`` pongs or chis the tile under claim (meld starting at ``low``) and must discard next."""
        st = self.state
        t = self._take_discard(b)
        frm = int(st.claim_from[b])
        tiles = [low] * 3 if kind == S.PONG_MELD else [low, low + 1, low + 2]
        tiles.remove(t)
        for x in tiles:
            st.hand[b, s, x] -= 1
        self._add_meld(b, s, kind, low, frm)
        st.claim_opts[b] = 0
        st.claim_tile[b] = st.claim_from[b] = -1
        st.cur[b] = st.actor[b] = s
        st.phase[b] = CLAIMED
        st.drawn[b] = -1
        st.after_kong[b] = 0
        if self.record_events:
            name = "pong" if kind == S.PONG_MELD else "chi"
            event = {"type": name, "seat": s, "tile": tile_name(t), "from": frm}
            if kind == S.CHI_MELD:
                event["meld"] = "".join(str(x % 9 + 1) for x in range(low, low + 3)) + "mps"[low // 9]
            self.events[b].append(event)

    def _direct_kong(self, b: int, s: int) -> None:
        st = self.state
        t = self._take_discard(b)
        frm = int(st.claim_from[b])
        st.hand[b, s, t] -= 3
        st.hidden[b, s, t] = False  # a face-down triplet konged is shown as the kong
        self._add_meld(b, s, S.DIRECT_KONG, t, frm)
        st.claim_opts[b] = 0
        self._finish_kong(b, s, t, S.DIRECT_KONG, frm)

    # ------------------------------------------------------------------ kongs
    def _kong_position(self, b: int, s: int, direct: bool) -> int:
        """Chain position of a kong now made by ``s`` (docs/rules/kawuxing.md §3.5 linking; self_consecutive when off)."""
        st = self.state
        mode = getattr(self.opts, "gangshanggang", "off")
        link = "self_consecutive" if mode == "off" else mode
        if link == "per_hand":
            return int(st.kong_count[b, s]) + 1
        if not direct and st.after_kong[b] > 0 and st.cur[b] == s:
            return int(st.after_kong[b]) + 1
        if direct and link == "chain" and st.claim_kong_pos[b] > 0:
            return int(st.claim_kong_pos[b]) + 1
        return 1

    def _revealed_kong_ok(self, b: int, s: int, t: int, kind: str) -> bool:
        """§3.6 D3 ``liang_kong`` test for a revealed player's kong of ``t``."""
        rule = self.opts.liang_kong
        if rule == "none":
            return False
        st = self.state
        h = st.hand[b, s].astype(np.int8)
        nm = int(st.n_melds[b, s])
        owned = h + st.melded[b, s]
        owned_after = owned.copy()
        owned_after[t] = 4  # after the kong all four copies are the player's
        after = h.copy()
        after[t] -= {"direct": 3, "concealed": 4, "added": 1}[kind]
        w_after = self._waits(after, owned_after)
        if rule == "keep_ready":
            return bool(w_after.any())
        before = h.copy()
        if kind != "direct":
            before[st.drawn[b]] -= 1  # the wait set the player revealed, before this turn's draw
            owned[st.drawn[b]] -= 1
        w_before = self._waits(before, owned)
        return bool(w_after.any()) and bool(np.array_equal(w_before, w_after))

    def _waits(self, concealed: np.ndarray, owned: np.ndarray) -> np.ndarray:
        """Wait set of one concealed hand (seven pairs only count with 13 concealed tiles)."""
        return np.asarray(H.wait_mask(concealed, seven_pairs=self.seven_pairs, kinds=self.kinds, owned=owned))

    def _self_kong(self, b: int, t: int) -> None:
        st = self.state
        s = int(st.cur[b])
        if st.hand[b, s, t] == 4:
            st.hand[b, s, t] -= 4
            self._add_meld(b, s, S.CONCEALED_KONG, t, None)
            st.hidden[b, s, t] = False
            self._finish_kong(b, s, t, S.CONCEALED_KONG, None)
            return
        # Added kong: the rob window opens before the kong is laid down (§3.5).
        if self.record_events:
            self.events[b].append({"type": "add_kong_declared", "seat": s, "tile": tile_name(t)})
        if self.family.rob_added_kong:
            self._open_window(np.array([b]), np.array([t]), np.array([s]), rob=True)
        else:
            self._complete_kong(b, s, t, S.ADDED_KONG, None)

    def _complete_kong(self, b: int, s: int, t: int, kind: int, src: int | None) -> None:
        """Lay down an added kong whose rob window closed without a rob."""
        st = self.state
        st.hand[b, s, t] -= 1
        j = int(np.flatnonzero((st.meld_kind[b, s] == S.PONG_MELD) & (st.meld_tile[b, s] == t))[0])
        st.meld_kind[b, s, j] = S.ADDED_KONG
        st.melded[b, s, t] += 1
        st.claim_opts[b] = 0
        st.claim_tile[b] = -1
        self._finish_kong(b, s, t, kind, src)

    def _finish_kong(self, b: int, s: int, t: int, kind: int, discarder: int | None) -> None:
        """Kong money at its chain position, then the replacement draw from the back of the wall."""
        st = self.state
        pos = self._kong_position(b, s, direct=kind == S.DIRECT_KONG)
        transfers = self.family.kong_money(b, s, KONG_KIND_NAMES[kind], discarder, pos)
        for tr in transfers:
            st.money[b, tr.payer] -= tr.amount
            st.money[b, tr.payee] += tr.amount
        st.kong_count[b, s] += 1
        if self.record_events:
            self.events[b].append(
                {
                    "type": "kong",
                    "seat": s,
                    "tile": tile_name(t),
                    "kind": KONG_KIND_NAMES[kind],
                    "from": discarder,
                    "position": pos,
                    "transfers": [_transfer_dict(tr) for tr in transfers],
                }
            )
        st.cur[b] = st.actor[b] = s
        st.after_kong[b] = pos
        st.claim_tile[b] = -1
        if self.family.kong_tiles:
            st.phase[b] = PICK
            return
        back = int(st.back[b]) - 1
        st.back[b] = back
        self._replacement(b, s, int(st.wall[b, back]))

    def _replacement(self, b: int, s: int, tile: int) -> None:
        """Seat ``s`` takes its kong replacement ``tile`` and is in AFTER_DRAW with the after-kong flag."""
        st = self.state
        st.hand[b, s, tile] += 1
        st.drawn[b] = tile
        st.lock[b, s] = 0
        st.dadiaoche[b, s] = -1
        st.phase[b] = TURN
        if self.record_events:
            self.events[b].append({"type": "draw", "seat": s, "tile": tile_name(tile), "replacement": True})

    def _pick(self, b: int, slot: int) -> None:
        """Gejiu §6.3: the konger takes face-up kong tile ``slot``; the last face-down tile is turned up."""
        st = self.state
        s = int(st.cur[b])
        tile = int(st.kong_tiles[b, slot])
        if st.back[b] > st.front[b]:
            st.back[b] -= 1
            st.kong_tiles[b, slot] = st.wall[b, st.back[b]]
        else:
            st.kong_tiles[b, slot] = -1
        if self.record_events:
            self.events[b].append({"type": "kong_pick", "seat": s, "slot": slot, "tile": tile_name(tile)})
        self._replacement(b, s, tile)
        if self.family.rob_replacement:
            st.rob_replacement[b] = True
            self._open_window(np.array([b]), np.array([tile]), np.array([s]), rob=True)

    # ------------------------------------------------------------------ wins and the end of a hand
    def _claim_score(self, b: int, s: int, t: int, rob: bool):
        """Score (and judge) seat ``s`` winning on the tile under claim ``t``."""
        st = self.state
        return self.family.score(
            b,
            s,
            st.hand[b, s],
            t,
            "rob" if rob else "discard",
            kong_position=0 if rob else int(st.claim_kong_pos[b]),
            last_tile=(not rob) and bool(st.front[b] >= st.back[b]),
        )

    def _self_draw_score(self, b: int):
        """Score the hand of the seat on turn as a self-draw on the tile it drew."""
        st = self.state
        s = int(st.cur[b])
        w = int(st.drawn[b])
        concealed = st.hand[b, s].copy()
        concealed[w] -= 1
        return self.family.score(
            b, s, concealed, w, "self-draw", kong_position=int(st.after_kong[b]), last_tile=bool(st.front[b] >= st.back[b])
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
            self._take_discard(b)
        st.hand[b, winners[0], t] += 1
        how = "rob" if rob else "discard"
        settlement = self.family.settle_win(b, scored, how, frm)
        self._end(b, settlement, scored, how=how, discarder=frm, tile=t)

    def _exhaustive_draw(self, b: int) -> None:
        self._end(b, self.family.settle_draw(b), [], how="draw", discarder=None, tile=None)

    def _end(self, b, settlement, scored, how, discarder, tile) -> None:
        st = self.state
        next_dealer = self.family.next_dealer(b, [w for w, _ in scored], discarder)
        for tr in settlement.transfers:
            st.money[b, tr.payer] -= tr.amount
            st.money[b, tr.payee] += tr.amount
        st.phase[b] = DONE
        st.claim_opts[b] = 0
        self.match_money[b] += st.money[b]
        self.sessions[b], over = self.family.advance_session(b, [w for w, _ in scored], settlement)
        self.session_over[b] = over
        winners = [
            {
                "seat": s,
                "reading": sc.reading_text,
                "fans": dict(sc.fans),
                "value": sc.value,
                "cap": sc.cap,
            }
            for s, sc in scored
        ]
        result = {
            "how": how,
            "winners": winners,
            "discarder": discarder,
            "tile": tile_name(tile) if tile is not None else None,
            "transfers": [_transfer_dict(tr) for tr in settlement.transfers],
            "settlement_deltas": [float(x) for x in settlement.deltas],
            "deltas": [float(x) for x in st.money[b]],
            "next_dealer": int(next_dealer),
            "session_over": bool(self.session_over[b]),
        }
        self.results[b] = result
        if self.record_events:
            self.events[b].append({"type": "end", **result})

    # ------------------------------------------------------------------ masks
    def _compute_masks(self, idx: np.ndarray) -> np.ndarray:
        st = self.state
        m = np.zeros((len(idx), A.N_ACTIONS), dtype=bool)
        ph = st.phase[idx]
        own = (ph == TURN) | (ph == CLAIMED)
        if own.any():
            m[own] = self._own_turn_masks(idx[own])
        win_rows = ~own
        if win_rows.any():
            w = idx[win_rows]
            o = st.claim_opts[w, st.actor[w]]
            sub = np.zeros((len(w), A.N_ACTIONS), dtype=bool)
            sub[:, A.WIN] = (o & 1) > 0
            sub[:, A.PONG] = (o & 2) > 0
            sub[:, A.KONG_CLAIM] = (o & 4) > 0
            for j, bit in enumerate(CHI_BITS):
                sub[:, A.CHI_LOW + j] = (o & bit) > 0
            sub[:, A.PASS] = True
            pick = st.phase[w] == PICK
            sub[pick] = False
            sub[pick, A.KONGTILE_0] = st.kong_tiles[w[pick], 0] >= 0
            sub[pick, A.KONGTILE_1] = st.kong_tiles[w[pick], 1] >= 0
            m[win_rows] = sub
        return m

    def _own_turn_masks(self, idx: np.ndarray) -> np.ndarray:
        st = self.state
        m = np.zeros((len(idx), A.N_ACTIONS), dtype=bool)
        s = st.cur[idx].astype(np.int64)
        h = st.hand[idx, s]
        rev = st.revealed[idx, s]
        turn = st.phase[idx] == TURN
        drawn = st.drawn[idx].astype(np.int64)
        nm = st.n_melds[idx, s]
        wall_ok = st.back[idx] > st.front[idx]

        free = ~rev
        m[free, 0:34] = h[free] > 0
        rd = np.flatnonzero(rev)
        m[rd, drawn[rd]] = True  # a revealed player's only possible discard is the drawn tile
        if self.family.liang and free.any():
            fi = np.flatnonzero(free)
            m[fi, A.LIANG : A.LIANG + 34] = self._ready_after_discard(h[fi], st.melded[idx[fi], s[fi]], nm[fi])
        # Kongs on one's own turn (never after a claim, never without a replacement tile).
        kong_rows = turn & wall_ok
        if kong_rows.any():
            kr = np.flatnonzero(kong_rows)
            four = self.family.concealed_kong_mask(h[kr] == 4, drawn[kr], st.turns[idx[kr], s[kr]] == 0)
            added = np.zeros_like(four)
            pong = (st.meld_kind[idx[kr], s[kr]] == S.PONG_MELD) & (st.meld_tile[idx[kr], s[kr]] == drawn[kr, None])
            added[np.arange(len(kr)), drawn[kr]] = pong.any(1) & (h[kr, drawn[kr]] >= 1)
            kongs = four | added
            for j in np.flatnonzero(rev[kr] & kongs.any(1)):
                b = int(idx[kr[j]])
                for t in np.flatnonzero(kongs[j]):
                    kind = "concealed" if four[j, t] else "added"
                    kongs[j, t] = self._revealed_kong_ok(b, int(s[kr[j]]), int(t), kind)
            m[kr, A.KONG_SELF : A.KONG_SELF + 34] = kongs
        if turn.any():
            ti = np.flatnonzero(turn)
            hc = h[ti]
            win = H.is_complete(h[ti], self.seven_pairs)
            special = self.family.special_complete(h[ti])
            if special is not None:
                win |= special
            if self.family.self_draw_minimum:
                for j in np.flatnonzero(win):
                    win[j] = self._self_draw_score(int(idx[ti[j]])).legal
            m[ti, A.WIN] = win
        return m

    def _ready_after_discard(self, h: np.ndarray, melded: np.ndarray, nm: np.ndarray) -> np.ndarray:
        """bool [K, 34]: discarding t (held) leaves a ready hand (§3.6 D1)."""
        owned = h + melded
        return np.asarray(H.ready_after_discards(h, seven_pairs=self.seven_pairs, kinds=self.kinds, owned=owned))


def _transfer_dict(tr) -> dict:
    return {"payer": int(tr.payer), "payee": int(tr.payee), "amount": float(tr.amount), "reason": tr.reason}
