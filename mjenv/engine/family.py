"""Rule families as seen by the engine: what differs between variants, behind one small interface.

The engine (:mod:`mjenv.engine.core`) runs the common state machine of docs/rules/common.md §1.7; a
:class:`Family` answers the variant-specific questions — which shapes win, what a win is worth
and whether it is legal, who pays what (wins, kongs, drawn hands), who deals next, how a passed
win locks a player.  Each family is a thin adapter over the pure scoring module of that family
(:mod:`mjenv.rules.scoring`); a variant is a rule-options value plus a family, never a fork of
the engine.

Each adapter subclasses its family's rules class (:mod:`mjenv.rules.families`: id, variants, rule page, scorer,
fan table, the ``mjenv score`` text) and adds what the engine needs: scoring and settling a table's wins, kongs
and drawn hands, sessions, the slices it sets in the compiled core's configuration vector
(:meth:`Family.configure`).  The rule-based player's per-family parameters live with it
(:data:`agents.players.heuristic.FAMILY_PARAMS`).  :data:`FAMILIES` lists the adapters by name; adding a family is a
rules class and an adapter, its scorer module, its options, its variants (:mod:`mjenv.rules.variants`), its rules
files and its rule page.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import fanrow
from mjenv.rules import hand as H
from mjenv.rules.hand import Reading
from mjenv.rules.families import DiedaohuRules, GejiuRules, KawuxingRules, LiuweiRules, RuleFamily, YangzhouRules
from mjenv.rules.scoring import diedaohu as D
from mjenv.rules.scoring import gejiu as G
from mjenv.rules.scoring import kawuxing as K
from mjenv.rules.scoring import yangzhou as Y
from mjenv.rules.scoring.common import make_settlement


_CLASS_ORDER = tuple(D.CLASSES)  # the fan ids of Diedaohu's and Liuwei's fan rows: their hand classes


def settled_reading(concealed: np.ndarray, w: int, code: int) -> Reading | None:
    """The reading that the compiled scorer valued a win with, from its code (``mjenv.rules.hand``'s reading codes,
    written by :func:`mjenv.engine.kwscore.best_reading` / :func:`mjenv.engine.gjscore.best_reading`) and the hand
    (``concealed`` without the winning tile ``w``); ``None`` when there is none or another reading scored as well
    (the Python scorer then values every reading, so that its own order decides)."""
    if code < 0 or code & H.READING_TIE:
        return None
    full = np.array(concealed, dtype=np.int8)
    full[w] += 1
    pair = code >> 5
    if pair == H.READING_SEVEN_PAIRS:
        return H.seven_pairs_reading(full)
    if pair == H.READING_SPECIAL:
        return G.special_reading(full)
    return H.reading_of_choice(full, pair, code & 31)


def kernel_reading(engine, b: int, s: int, concealed: np.ndarray, w: int, code: int, fans: np.ndarray, order,
                   reading_text):
    """A win the kernel settled, read from its fan row (:mod:`mjenv.engine.fanrow`): ``(reading, text, fan names
    and values, value, cap)``, the fans named by ``order`` and the text made by ``reading_text(reading, melds)``;
    ``None`` when :func:`settled_reading` finds no single reading (the Python scorer then decides)."""
    r = settled_reading(concealed, w, code)
    if r is None:
        return None
    names, value, cap = fanrow.read(fans, order)
    return r, reading_text(r, " ".join(str(m) for m in engine.melds_of(b, s))), names, value, cap


class Family(RuleFamily):
    """Engine defaults shared by every family; subclasses override what their rule book section changes."""

    rob_added_kong = True  # an added kong opens a rob window
    rob_replacement = False  # a kong's replacement tile may be robbed (Gejiu ``gejiu_qianggang: replacement_tile``)
    draw_pays_nothing = True  # settle_draw never pays: the kernel ends drawn hands itself (no Python on the way)
    louhu_window = 0  # claim-window wins judged in the kernel by the missed-win lock and the discarder's bankroll
    win_on_shape = False  # every complete shape on a claimed / robbed tile is a legal win (the kernel opens it)
    kernel_win_money = False  # score / settle_win take ``money=``: the hand's money before a win the kernel settled

    def __init__(self, engine):
        self.engine = engine
        self.opts = engine.opts
        self.n = engine.n

    def configure(self, cfg: np.ndarray) -> None:
        """Set the family's entries of the compiled core's configuration vector ``cfg`` (``C_*`` of
        :mod:`mjenv.engine.codes`; the engine has set the common ones, everything else is 0): by default no kong
        money, drawn hands end in the kernel (they pay nothing) and the claim windows the flags above describe."""
        from mjenv.engine import codes as C

        if not self.draw_pays_nothing:
            raise NotImplementedError(f"{type(self).__name__}: drawn hands that pay are settled only for Kawuxing")
        cfg[C.C_KONG_MONEY] = C.KONG_MONEY_NONE
        cfg[C.C_WIN_ON_SHAPE] = self.win_on_shape
        cfg[C.C_LOUHU_WINDOW] = self.louhu_window

    def configure_float(self, fcfg: np.ndarray) -> None:
        """Set the family's entries of the float configuration vector (``F_*`` of :mod:`mjenv.engine.codes`):
        none by default."""

    @property
    def single_winner(self) -> bool:
        """Only the nearest claimant wins a discard (docs/rules/common.md §1.8)."""
        return getattr(self.opts, "multi_win", "on") == "off"

    def special_complete(self, counts: np.ndarray) -> np.ndarray | None:
        """bool [N]: concealed 14-tile special shapes (Gejiu 烂牌); None when the family has none."""
        return None

    def concealed_kong_mask(self, four: np.ndarray, drawn: np.ndarray, first_turn: np.ndarray) -> np.ndarray:
        """Which held fours may be konged now (timing rules); ``four`` bool [K, 34]."""
        return four

    def kong_money(self, b: int, konger: int, kind: str, discarder: int | None, position: int) -> list:
        """Transfers for a completed kong (none by default)."""
        return []

    def bankroll_kong(self) -> tuple[dict[str, float], bool, bool]:
        """For the compiled kong money of a family whose kongs are paid through ``apply_bankroll``: the amount
        each payer owes by kong kind, whether every other seat pays a direct kong (else only the discarder),
        and whether payments are limited by the balances (园子)."""
        raise NotImplementedError

    def new_session(self, dealer: int):
        """The session (一操) state of a new match, or None for families without sessions."""
        return None

    def new_sessions(self, idx: np.ndarray, dealers: np.ndarray) -> None:
        """Start the sessions of tables ``idx`` with ``dealers`` (valid seats) dealing first."""
        for b, d in zip(idx.tolist(), dealers.tolist()):
            self.engine.sessions[b] = self.new_session(d)

    def session_of_row(self, b: int):
        """Table ``b``'s session object from the engine's session row (families with sessions)."""
        return None

    def starting_balance(self) -> float:
        """Each player's bankroll (园子) at the start of a session; 0 when money is unlimited."""
        return 0.0

    def advance_session(self, b: int, winners: list[int], settlement) -> tuple[object, bool]:
        """The session after a finished hand and whether it is over."""
        return None, False

    def advance_drawn(self, idx: np.ndarray) -> list[bool]:
        """Advance the sessions of tables ``idx`` after a drawn hand (the kernel ended it); whether each is over."""
        out = []
        for b in idx.tolist():
            self.engine.sessions[b], over = self.advance_session(b, [], None)
            out.append(over)
        return out

    def settle_draw(self, b: int):
        """A drawn hand pays nothing unless the family says otherwise."""
        return make_settlement(self.n, [])


class KawuxingFamily(Family, KawuxingRules):
    """Kawuxing 3p/4p and its rulesets (docs/rules/kawuxing.md §3–§5)."""

    draw_pays_nothing = False  # §3.11 penalties and 讲听头 (compiled in kwend._kw_end)

    @property
    def rob_added_kong(self) -> bool:  # type: ignore[override]
        return self.opts.qianggang == "on"

    def concealed_kong_mask(self, four, drawn, first_turn):
        """K4: ``angang_timing: immediate`` allows only the fourth copy just drawn (or a dealt four in the first turn)."""
        if self.opts.angang_timing != "immediate":
            return four
        onehot = np.zeros_like(four)
        onehot[np.arange(len(drawn)), drawn] = True
        return four & (onehot | first_turn[:, None])

    def configure(self, cfg):
        """Claim windows judged and valued, hand ends settled and kong money paid in the kernel
        (:mod:`mjenv.engine.kwscore` reads its options and the fan values of :data:`~.kawuxing.FANS`)."""
        from mjenv.engine import codes as C
        from mjenv.engine import kwscore

        cfg[C.C_KONG_MONEY] = C.KONG_MONEY_COMPILED
        cfg[C.C_KW_SCORE] = 1
        cfg[C.C_KW : C.C_KW + kwscore.N_KW] = kwscore.config(self.opts)

    def configure_float(self, fcfg):
        """Kong money per payer at chain position 1 in units of b (§3.5, the scorer's table), its doubling and b."""
        from mjenv.engine import codes as C

        fcfg[C.F_KONG_DIRECT] = K._KONG_MONEY["direct"]
        fcfg[C.F_KONG_ADDED] = K._KONG_MONEY["added"]
        fcfg[C.F_KONG_CONCEALED] = K._KONG_MONEY["concealed"]
        fcfg[C.F_KONG_DOUBLING] = self.opts.gangshanggang != "off"
        fcfg[C.F_KONG_DOUBLING + 1] = self.opts.base

    def hideable_triplets(self, b: int, s: int) -> tuple[int, ...]:
        """§3.6 D2: the triplets seat ``s`` keeps face down when it declares 亮倒 now."""
        if self.opts.liang_hide_triplets != "on":
            return ()
        eng = self.engine
        return K.hideable_triplets(eng.state.hand[b, s], self.opts, eng.kinds, melds=eng.melds_of(b, s))

    def score(self, b: int, s: int, concealed: np.ndarray, w: int, how: str, kong_position: int, last_tile: bool,
              reading: int = -1, fans=None):
        """Score and judge (L1–L4) a win of seat ``s`` at table ``b`` on tile ``w``; ``reading``: the code of the
        best reading when the compiled core found it (:func:`settled_reading`), ``fans``: the fan row the kernel
        wrote for that reading of a win it settled (:mod:`mjenv.engine.fanrow`), from which the score is made
        without the Python scorer."""
        st = self.engine.state
        discarder = int(st.claim_from[b]) if how != "self-draw" else None
        if fans is not None:
            kernel = kernel_reading(self.engine, b, s, concealed, w, reading, fans, K.FAN_ORDER, H.reading_text)
            if kernel is not None:
                r, text, fans, value, cap = kernel
                value_d = value
                if discarder is not None:
                    value_d *= K.payer_factor(bool(st.revealed[b, s]), bool(st.revealed[b, discarder]), self.opts)
                return K.WinScore(True, None, r, text, fans, value, cap, value_d)
        ctx = K.WinContext(
            how=how,
            revealed=bool(st.revealed[b, s]),
            kong_position=kong_position,
            last_tile=last_tile,
            winner_has_konged=bool(st.kong_count[b, s] > 0),
            discarder_revealed=bool(st.revealed[b, discarder]) if discarder is not None else False,
            missed_win_lock=(int(st.lock[b, s]) or None) if how != "self-draw" else None,
        )
        r = settled_reading(concealed, w, reading)
        if r is not None:
            return K.score_reading(concealed, self.engine.melds_of(b, s), w, ctx, self.opts, r)
        return K.score_win(concealed, self.engine.melds_of(b, s), w, ctx, self.opts, self.n)

    def settle_win(self, b: int, scored: list, how: str, discarder: int | None):
        """§3.10 settlement of one or several winners."""
        return K.settle_win(self.n, scored, how, discarder, list(self.engine.state.revealed[b]), self.opts)

    def kong_money(self, b, konger, kind, discarder, position):
        """§3.5 kong money at its chain position (doubling per ``gangshanggang``)."""
        money_pos = 1 if self.opts.gangshanggang == "off" else position
        return K.kong_money(self.n, kind, konger, discarder, money_pos, self.opts)

    def settle_draw(self, b: int):
        """§3.11 exhaustive-draw settlement (penalty or 讲听头)."""
        eng = self.engine
        st = eng.state
        seq = st.reveal_seq[b].tolist()  # (distinct numbers 0, 1, ... for the revealed seats, -1 for the others)
        order = sorted((s for s in range(self.n) if seq[s] >= 0), key=seq.__getitem__)
        ready = [None] * self.n
        if order and self.opts.tingtou != "off":  # (nobody revealed: nothing to settle, whoever is ready)
            ready = [K.ready_value(st.hand[b, s], eng.melds_of(b, s), self.opts, eng.kinds) for s in range(self.n)]
        return K.settle_draw(self.n, order, ready, self.opts)

    def next_dealer(self, b: int, winners: list[int], discarder: int | None) -> int:
        """§3.12: a single winner deals; several winners → the discarder; drawn hand → the dealer stays."""
        if not winners:
            return int(self.engine.state.dealer[b])
        return winners[0] if len(winners) == 1 else int(discarder)


class GejiuFamily(Family, GejiuRules):
    """Gejiu (docs/rules/gejiu.md §6): chi, seven pairs and 烂牌, face-up kong tiles, no kong money, no lock."""

    win_on_shape = True  # §6.8: no minimum, no missed-win rule; a rob is of the kind gejiu_qianggang allows

    @property
    def rob_added_kong(self) -> bool:  # type: ignore[override]
        return self.opts.gejiu_qianggang == "add_kong"

    @property
    def rob_replacement(self) -> bool:  # type: ignore[override]
        return self.opts.gejiu_qianggang == "replacement_tile"

    def configure(self, cfg):
        """Wins valued (:mod:`mjenv.engine.gjscore`, with the values of :data:`~.gejiu.PATTERNS`) and settled in the
        kernel, besides the defaults."""
        from mjenv.engine import codes as C
        from mjenv.engine import gjscore

        super().configure(cfg)
        cfg[C.C_GJ_SCORE] = 1
        cfg[C.C_GJ : C.C_GJ + gjscore.N_GJ] = gjscore.config(self.opts)
        cfg[C.C_SINGLE_WINNER] = self.single_winner

    def configure_float(self, fcfg):
        """The stake b of the compiled settlement."""
        from mjenv.engine import codes as C

        fcfg[C.F_BASE] = self.opts.base

    def special_complete(self, counts):
        """烂牌 / 七星 (§6.6): 14 unrelated concealed tiles."""
        return G.lanpai_mask(counts)

    def score(self, b, s, concealed, w, how, kong_position, last_tile, reading: int = -1, fans=None):
        """§6.7–§6.8 value; every winning shape is legal (no minimum, no missed-win rule); ``reading`` and ``fans``
        as for :meth:`KawuxingFamily.score`."""
        if fans is not None:
            kernel = kernel_reading(self.engine, b, s, concealed, w, reading, fans, G.PATTERN_ORDER, G._reading_text)
            if kernel is not None:
                r, text, fans, value, _ = kernel
                return G.WinScore(True, None, r, text, fans, value, None, value)
        ctx = G.GejiuContext(
            how=how,
            after_kong=how == "self-draw" and kong_position > 0,
            rob=self.opts.gejiu_qianggang if how == "rob" else None,
        )
        r = settled_reading(concealed, w, reading)
        if r is not None:
            return G.score_reading(concealed, self.engine.melds_of(b, s), w, ctx, self.opts, r)
        return G.score_win(concealed, self.engine.melds_of(b, s), w, ctx, self.opts)

    def settle_win(self, b, scored, how, discarder):
        """§6.8: the discarder (konger) pays each winner V·b; a self-draw is paid by all three others."""
        return G.settle_win(scored, how, discarder, self.opts)

    def settle_draw(self, b):
        """A drawn Gejiu hand pays nothing."""
        return G.settle_draw(self.opts)

    def next_dealer(self, b, winners, discarder):
        """§6.5 including ``gejiu_multiwin_dealer``."""
        return G.next_dealer(int(self.engine.state.dealer[b]), winners, discarder, self.opts)


class DiedaohuFamily(Family, DiedaohuRules):
    """Diedaohu (docs/rules/diedaohu.md §7): hand classes, 米钱 kong money, 漏胡 with 大吊车, 园子 bankroll, sessions.

    Yangzhou and Liuwei share its missed-win rule, sessions and (Liuwei) bankroll.
    """

    @property
    def louhu_window(self) -> int:  # type: ignore[override]
        """A complete shape wins a claimed tile unless the lock or a busted discarder refuses it (codes.LOUHU_* bits:
        judged in the kernel, ``louhu`` on, a bankroll)."""
        return 1 | (2 if self.opts.louhu == "on" else 0) | (4 if getattr(self.opts, "bankroll", None) is not None else 0)

    dd_end = 1  # codes.DD_END_*: which of ddwin._dd_end's payment rules settles the wins (0: the Python path)
    kernel_win_money = True  # the kernel keeps the money before a win it settles (the lazy result settles from it)

    def configure(self, cfg):
        """Kong money (where the family pays it) compiled, limited by the balances under 园子 (:meth:`bankroll_kong`);
        wins settled in the kernel (``ddwin._dd_end``) with the 园子 limit and the 风清 liability."""
        from mjenv.engine import codes as C

        super().configure(cfg)
        if self.pays_kong_money:
            cfg[C.C_KONG_MONEY] = C.KONG_MONEY_BANKROLL
            _, cfg[C.C_KONG_ALL_PAY], cfg[C.C_KONG_LIMIT] = self.bankroll_kong()
        cfg[C.C_DD_END] = self.dd_end
        baopai = getattr(self.opts, "baopai" if self.dd_end == C.DD_END_YANGZHOU else "fengqing_baopai", "off")
        cfg[C.C_DD_FLAGS] = (C.DD_LIMIT if getattr(self.opts, "bankroll", None) is not None else 0) | (
            C.DD_BAOPAI if baopai == "on" else 0
        )
        cfg[C.C_SINGLE_WINNER] = self.single_winner
        if self.dd_end in (C.DD_END_DIEDAOHU, C.DD_END_LIUWEI):  # each class's V (the results' fan rows)
            cfg[C.C_DD_V : C.C_DD_V + len(D.CLASSES)] = [v for _, _, v in D.CLASSES.values()]

    def configure_float(self, fcfg):
        """The amount each payer owes per kind of kong (:meth:`bankroll_kong`), where the family pays kong money, and
        per hand class of a win (:meth:`class_payments`)."""
        from mjenv.engine import codes as C

        if self.pays_kong_money:
            owed = self.bankroll_kong()[0]
            fcfg[C.F_KONG_DIRECT] = owed["direct"]
            fcfg[C.F_KONG_ADDED] = owed["added"]
            fcfg[C.F_KONG_CONCEALED] = owed["concealed"]
        if self.dd_end in (C.DD_END_DIEDAOHU, C.DD_END_LIUWEI):
            fcfg[C.F_DD_PAY : C.F_DD_PAY + 3 * len(D.CLASSES)] = np.asarray(self.class_payments(), np.float64).ravel()

    def class_payments(self) -> list[tuple[float, float, float]]:
        """Per hand class (:data:`~.diedaohu.CLASSES` order): what one payer owes on a self-draw, the discarder on a
        discard or rob, each 陪冲 (0 here) — the scorer's ``share`` (V·b; ``inf``, a whole balance, for 风清 under
        园子)."""
        whole = getattr(self.opts, "bankroll", None) is not None
        out = []
        for cls, (_, _, value) in D.CLASSES.items():
            share = D.WHOLE_BALANCE if cls == "fengqing" and whole else float(value) * self.opts.base
            out.append((share, share, 0.0))
        return out

    def _lock(self, b: int, s: int) -> D.LouhuLock:
        st = self.engine.state
        tile = int(st.dadiaoche[b, s])
        return D.LouhuLock(bool(st.lock[b, s] > 0), tile if tile >= 0 else None)

    def _balances(self, b: int, money=None) -> list[float] | None:
        """Current balances (园子), or None when money is unlimited; ``money``: this hand's money in place of the
        state's (a win the kernel settled is valued and settled from the money before it)."""
        if getattr(self.opts, "bankroll", None) is None:
            return None
        money = self.engine.state.money[b] if money is None else money
        return [float(x) for x in self.engine.balance[b] + money]

    def _busted(self, b: int, seat: int, money=None) -> bool:
        bal = self._balances(b, money)
        return bal is not None and bal[seat] <= 1e-9

    def _context(self, b: int, s: int, how: str, money=None):
        discarder = int(self.engine.state.claim_from[b]) if how != "self-draw" else None
        busted = discarder is not None and self._busted(b, discarder, money)
        return D.DiedaohuContext(how, self._lock(b, s), busted)

    def score(self, b, s, concealed, w, how, kong_position, last_tile, reading: int = -1, money=None, fans=None):
        """Hand class value with the missed-win lock and the busted-discarder rule as legality (``money``: as
        :meth:`_balances`; ``reading``: the code of the best reading when the compiled core found it, Diedaohu and
        Liuwei, :func:`settled_reading`; ``fans``: the fan row of a win the kernel settled, :mod:`mjenv.engine.fanrow`,
        from which :meth:`_settled_score` makes the score without valuing or judging the hand again)."""
        if fans is not None:
            r = settled_reading(concealed, w, reading)
            if r is not None:
                return self._settled_score(b, s, r, fans, how)
        ctx = self._context(b, s, how, money)
        r = settled_reading(concealed, w, reading)
        if r is not None:
            return self.scorer.score_reading(concealed, self.engine.melds_of(b, s), w, ctx, self.opts, r)
        return self.scorer.score_win(concealed, self.engine.melds_of(b, s), w, ctx, self.opts)

    def _settled_score(self, b, s, r, fans, how):
        """The score of seat ``s``'s win on reading ``r`` from the fan row ``fans`` the kernel wrote for it: its hand
        class and V (``score_settled``)."""
        ((cls, value),) = fanrow.read(fans, _CLASS_ORDER)[0].items()
        return self.scorer.score_settled(r, self.engine.melds_of(b, s), cls, value, how, self.opts)

    def settle_win(self, b, scored, how, discarder, money=None):
        """Payments limited by the balances under 园子 (``money``: as :meth:`_balances`)."""
        return self.scorer.settle_win(scored, how, discarder, self.opts, self._balances(b, money))

    def kong_money(self, b, konger, kind, discarder, position):
        """Kong money paid at once, limited by the balances under 园子."""
        return list(self.scorer.settle_kong(kind, konger, discarder, self.opts, self._balances(b)).transfers)

    def bankroll_kong(self):
        """The scorer's own amounts (``kong_money`` asked once per kind), the 园子 limit from ``bankroll``."""
        owed, all_pay = {}, False
        for kind in ("direct", "added", "concealed"):
            transfers = self.scorer.kong_money(kind, 0, 1 if kind == "direct" else None, self.opts)
            if len({tr.amount for tr in transfers}) != 1:  # pragma: no cover - a new rule the kernel lacks
                raise NotImplementedError(f"kong money of unequal shares: {transfers}")
            owed[kind] = float(transfers[0].amount)
            if kind == "direct":
                all_pay = len(transfers) > 1
        return owed, all_pay, getattr(self.opts, "bankroll", None) is not None

    def kong_money_with(self, b, konger, kind, discarder, money) -> list:
        """:meth:`kong_money` with this hand's ``money`` so far as it stood at the kong (for its event, read later)."""
        bal = self._balances(b)
        if bal is not None:
            bal = [float(x) for x in self.engine.balance[b] + money]
        return list(self.scorer.settle_kong(kind, konger, discarder, self.opts, bal).transfers)

    def next_dealer(self, b, winners, discarder):
        """§7.8: the dealer stays if it won; a drawn hand follows ``draw_dealer``."""
        return D.next_dealer(int(self.engine.state.dealer[b]), winners, self.opts.draw_dealer)

    def new_session(self, dealer):
        return self.scorer.new_session(self.opts, dealer)

    def new_sessions(self, idx, dealers):
        """``new_session`` of each table on the engine's session rows (the seats are checked already)."""
        rows = self.engine._ses
        rows[idx, 0] = dealers
        rows[idx, 1] = int(self.opts.rounds)
        rows[idx, 2:] = 0
        self.engine.sessions._stale(idx.tolist())

    def starting_balance(self):
        bankroll = getattr(self.opts, "bankroll", None)
        return 0.0 if bankroll is None else float(bankroll) * float(self.opts.base)

    def _two_busted(self, idx) -> np.ndarray:
        """bool per table of ``idx``: under 园子 two seats end the hand busted (§7.7), which ends the session."""
        if getattr(self.opts, "bankroll", None) is None:
            return np.zeros(len(idx), bool)
        eng = self.engine
        return D.two_busted(eng.balance[idx] + eng.state.money[idx])

    def advance_session(self, b, winners, settlement):
        # A win's settlement says whether it ended the session; a drawn hand's (no bankroll bookkeeping) does not,
        # yet kong money may have busted a second player in it.
        ended = bool(getattr(settlement, "session_over", False)) or bool(self._two_busted([b])[0])
        session = self.scorer.next_hand(self.engine.sessions[b], winners, self.opts, ended)
        return session, session.over

    def _draw_dealer_stays(self) -> bool:
        return self.opts.draw_dealer == "stay"

    def advance_drawn(self, idx):
        """``diedaohu.advance_session`` of a drawn hand (no winners) on the engine's session rows, in one batch:
        the dealer stays or passes per ``draw_dealer`` (Liuwei: stays), a pass counts, the session is over after
        4 · rounds passes, or under 园子 when kong money left two players busted (§7.7)."""
        rows = self.engine._ses
        r = rows[idx]  # dealer, rounds, passes, hands, over
        if r[:, 4].any():
            raise ValueError("the session is over")
        if not self._draw_dealer_stays():
            r[:, 0] = (r[:, 0] + 1) % D.N_PLAYERS
            r[:, 2] += 1
        r[:, 3] += 1
        over = (r[:, 2] >= D.N_PLAYERS * r[:, 1]) | self._two_busted(idx)
        r[:, 4] = over
        rows[idx] = r
        self.engine.sessions._stale(idx.tolist())
        return over

    def session_of_row(self, b):
        dealer, rounds, passes, hands, over = self.engine._ses[b].tolist()
        return D.Session(dealer, rounds, passes, hands, bool(over))


class YangzhouFamily(DiedaohuFamily, YangzhouRules):
    """Yangzhou standard and new (docs/rules/yangzhou.md §8–§9): chi, seat and round winds, fan minimum, 1:2, 包牌; no kong money."""

    louhu_window = 0  # its windows are judged by mjenv.engine.yzscore (fan minimum and lock)
    dd_end = 3  # codes.DD_END_YANGZHOU: its wins are settled by yzend._yz_end

    def configure(self, cfg):
        """Claim-window wins and the self-draw minimum judged in the kernel (:mod:`mjenv.engine.yzscore`, with the
        values of the scorer's tables), besides Diedaohu's entries."""
        from mjenv.engine import codes as C
        from mjenv.engine import yzscore

        super().configure(cfg)
        cfg[C.C_YZ : C.C_YZ + yzscore.N_YZ] = yzscore.config(self.opts)

    def configure_float(self, fcfg):
        """The stake b of the compiled settlement (``yzend._yz_end``; no kong money)."""
        from mjenv.engine import codes as C

        super().configure_float(fcfg)
        fcfg[C.F_BASE] = self.opts.base

    def round_wind(self, b: int) -> int:
        """Tile id of table ``b``'s round wind (§8.3), from its session (the kernels read it too, see ``PEND_ROUND_WIND``)."""
        return Y.round_wind(self.engine.sessions[b].round_index)

    def round_winds(self, idx: np.ndarray) -> np.ndarray:
        """:meth:`round_wind` of tables ``idx`` in one batch, from the engine's session rows (``Session.round_index``)."""
        rows = self.engine._ses[idx]
        return Y.round_wind(0) + np.minimum(rows[:, 2] // D.N_PLAYERS, rows[:, 1] - 1) % 4

    def _context(self, b, s, how, money=None):
        dealer = int(self.engine.state.dealer[b])
        return Y.YangzhouContext(how, Y.seat_wind(s, dealer), self.round_wind(b), self._lock(b, s))

    def _settled_score(self, b, s, r, fans, how):
        """The score of seat ``s``'s win on reading ``r`` from the fan row ``fans`` the kernel wrote for it: the fans of
        that reading and T (``yzscore.reading_fans``, ``yangzhou.score_settled``)."""
        names, total, _ = fanrow.read(fans, Y.FAN_ORDER)
        return Y.score_settled(r, self.engine.melds_of(b, s), names, total, how, self.opts)

    def settle_win(self, b, scored, how, discarder, money=None):
        """Yangzhou is 紧淌: no bankroll (``money`` is not read)."""
        return Y.settle_win(scored, how, discarder, self.opts)

    def kong_money(self, b, konger, kind, discarder, position):
        return []

    def new_session(self, dealer):
        return D.new_session(self.opts, dealer)

    def advance_session(self, b, winners, settlement):
        session = D.next_hand(self.engine.sessions[b], winners, self.opts)
        return session, session.over


class LiuweiFamily(DiedaohuFamily, LiuweiRules):
    """Liuwei (docs/rules/liuwei.md §10): one winner per discard, 陪冲 payments, kong money, 园子 50, 8 rounds."""

    @property
    def single_winner(self) -> bool:  # type: ignore[override]
        return True

    dd_end = 2  # codes.DD_END_LIUWEI: the 陪冲 table

    def class_payments(self):
        """Per hand class: the §10.4 amounts (self-draw each, discarder, each 陪冲) times ``liuwei.scale``, as the
        scorer's ``share`` and ``peichong`` (``inf``: a whole balance, 风清 under 园子)."""
        from mjenv.rules.scoring import liuwei as L

        k = L.scale(self.opts)
        whole = self.opts.bankroll is not None
        out = []
        for cls in D.CLASSES:
            selfdraw, discarder, peichong = L.PAYMENTS[cls]
            if cls == "fengqing" and whole:
                out.append((D.WHOLE_BALANCE, D.WHOLE_BALANCE, peichong * k))
            else:
                out.append((selfdraw * k, discarder * k, peichong * k))
        return out

    def _draw_dealer_stays(self) -> bool:
        return True  # §10.5 (liuwei.next_hand)

    def next_dealer(self, b, winners, discarder):
        """§10.5: the dealer stays when it wins or the hand is drawn."""
        return D.next_dealer(int(self.engine.state.dealer[b]), winners, "stay")


FAMILIES: dict[str, type[Family]] = {
    cls.name: cls for cls in (KawuxingFamily, GejiuFamily, DiedaohuFamily, YangzhouFamily, LiuweiFamily)
}
"""Family id -> its class: every per-family particular is read from here."""



def family_class(family: str) -> type[Family]:
    """The class of rule family ``family`` (a ``VariantSpec.family``); ``ValueError`` naming the known ones."""
    try:
        return FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown rule family {family!r}; known: {', '.join(FAMILIES)}") from None


def family_for(engine) -> Family:
    """The family adapter of ``engine``'s variant."""
    from mjenv.rules.options import get_variant

    return FAMILIES[get_variant(engine.variant).family](engine)
