"""Rule families as seen by the engine: what differs between variants, behind one small interface.

The engine (:mod:`mjenv.engine.core`) runs the common state machine of docs/rules/common.md §1.7; a
:class:`Family` answers the variant-specific questions — which shapes win, what a win is worth
and whether it is legal, who pays what (wins, kongs, drawn hands), who deals next, how a passed
win locks a player.  Each family is a thin adapter over the pure scoring module of that family
(:mod:`mjenv.rules.scoring`); a variant is a rule-options value plus a family, never a fork of
the engine.

A family class is also the one place the rest of mjenv reads a family's particulars from: its id
(:attr:`Family.name`, ``VariantSpec.family``), rule page, scorer module and fan table (the CLI, the viewer and
the generated rule reference), how ``mjenv score`` scores one hand in a situation and writes the result
(:meth:`Family.score_situation`, :attr:`Family.situation`), the rows of its generated value tables, its kong
money at default options, the
slices it sets in the compiled core's configuration vector (:meth:`Family.configure`) and the rule-based player's
per-family parameters (:attr:`Family.heuristic`) and its variants (:attr:`Family.variants`, from which
:data:`mjenv.rules.options.VARIANTS` is filled).  :data:`FAMILIES` lists the classes by name; adding a family
is a class here, its scorer module, its options, its rules files and its rule page; adding a variant to a family
is an entry of its ``variants``, its rules files and its rule page.
"""

from __future__ import annotations

import numpy as np

from mjenv.rules import hand as H
from mjenv.rules.hand import Reading
from mjenv.rules.variants import VariantSpec, variants_of
from mjenv.rules.scoring import diedaohu as D
from mjenv.rules.scoring import gejiu as G
from mjenv.rules.scoring import kawuxing as K
from mjenv.rules.scoring import liuwei as L
from mjenv.rules.scoring import yangzhou as Y
from mjenv.rules.scoring.common import json_number, make_settlement


def _plain_json(score, amount: float) -> dict:
    """The seven ``mjenv score --json`` fields of a score without a ``to_json`` (Kawuxing, Gejiu)."""
    return {
        "legal": score.legal,
        "reason": score.reason,
        "reading": score.reading_text,
        "fans": score.fans,
        "value": score.value,
        "cap": score.cap,
        "share": json_number(amount),
    }


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


def _louhu_lock(sit, hand) -> D.LouhuLock:
    """The winner's missed-win state from ``louhu`` / ``dadiaoche`` (大吊车: the exception is the winning tile)."""
    if sit.dadiaoche:
        return D.LouhuLock(True, hand.win_tile)
    return D.LouhuLock(sit.louhu)


class Family:
    """Defaults shared by every family; subclasses override what their rule book section changes."""

    name = ""  # the family id: ``VariantSpec.family`` and ``meta.family`` of its rules files
    variants: tuple[VariantSpec, ...] = ()
    """The variants of this family (:data:`mjenv.rules.options.VARIANTS` is read from here; each class lists its
    own, a subclass does not inherit them)."""
    page = ""  # its rule page in docs/rules/
    scorer = None  # its pure scoring module (mjenv.rules.scoring.<name>)
    fan_factors = False  # fan values are factors (shown ×v): they multiply under the default combination
    heuristic: dict = {}
    """The rule-based player's per-family parameters (:class:`agents.heuristic.HeuristicAgent`, measured in
    docs/training.md): ``flush_bonus`` (shanten steps a flush plan is worth; absent = no flush plan),
    ``triplets_bonus`` (likewise the all-triplets plan; 0 = none), ``exposure_weight`` (ukeire per b of expected
    deal-in cost), ``deal_in`` (what dealing into a visible flush / 风清 costs: class -> (discarder pays, each
    other payer pays), ``None`` = the whole balance) and ``flush_variant`` (the keywords of the built-in
    ``heuristic-flush``)."""

    seven_pairs = False  # seven pairs is a winning shape (checked on 14 concealed tiles)
    liang = False  # 亮倒 declarations exist (Kawuxing)
    chi = False  # the discarder's next player may chi
    rob_added_kong = True  # an added kong opens a rob window
    rob_replacement = False  # a kong's replacement tile may be robbed (Gejiu ``gejiu_qianggang: replacement_tile``)
    kong_tiles = 0  # face-up kong tiles the konger chooses from (Gejiu: 2); 0 = replacements from the wall's back
    value_lock = False  # missed-win lock keeps a value M (Kawuxing) instead of a plain flag
    self_draw_minimum = False  # a self-draw must also reach a minimum value (Yangzhou), not just a winning shape
    pays_kong_money = False  # kong_money can return transfers (the compiled core then asks for them)
    draw_pays_nothing = True  # settle_draw never pays: the kernel ends drawn hands itself (no Python on the way)
    louhu_window = 0  # claim-window wins judged in the kernel by the missed-win lock and the discarder's bankroll
    win_on_shape = False  # every complete shape on a claimed / robbed tile is a legal win (the kernel opens it)

    @classmethod
    def fans(cls) -> dict:
        """Fan (pattern, hand class) id -> (Chinese name, English name, value...): the scorer's table."""
        return cls.scorer.FANS

    @classmethod
    def fan_table(cls) -> tuple[list[str], list[list[str]]]:
        """Header and rows of the family's value table for its rule page (values straight from the scorer)."""
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in cls.fans().items()]
        return ["id", "fan", "English", "value"], rows

    @classmethod
    def extra_tables(cls) -> dict[str, tuple[list[str], list[list[str]]]]:
        """Further value tables of the rule page, by name (generated block ``"<name> <family>"``): header and rows."""
        return {}

    situation: tuple[str, ...] = ()
    """The facts of a win beyond the hand that :meth:`score_situation` reads (the ``mjenv score`` flags that apply)."""

    @classmethod
    def score_situation(cls, hand, sit, opts, variant: str):
        """Score the parsed notation hand ``hand`` (:class:`mjenv.tiles.Hand`) in situation ``sit``: an object with
        an attribute per name of :attr:`situation` (``kong_position`` for ``after_kong``), e.g. the ``mjenv score``
        arguments; ``ValueError`` for a fact the family cannot take."""
        raise NotImplementedError(f"family {cls.name!r} has no scorer for one hand")

    @classmethod
    def score_json(cls, score, opts) -> dict:
        """The ``mjenv score --json`` object of a score (``legal``, ``reason``, ``reading``, ``fans``, ``value``,
        ``cap``, ``share`` and the family's own fields)."""
        return score.to_json()

    @classmethod
    def value_note(cls, score, opts) -> str:
        """What follows V on the text ``value`` line of ``mjenv score``."""
        return ""

    @classmethod
    def share_note(cls, out: dict, opts, how: str) -> str:
        """The text ``share`` line of ``mjenv score`` from its JSON object ``out``."""
        return f"{out['share']} per payer"

    @classmethod
    def default_kong_money(cls, kind: str, opts) -> list:
        """The transfers of one kong of ``kind`` by seat 0 (seat 1 discarding a direct kong) under ``opts``; only for
        families whose kongs pay (:attr:`pays_kong_money`)."""
        raise NotImplementedError(f"family {cls.name!r} has no kong money")

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


class KawuxingFamily(Family):
    """Kawuxing 3p/4p and its rulesets (docs/rules/kawuxing.md §3–§5)."""

    name = "kawuxing"
    variants = variants_of("kawuxing")
    page = "kawuxing.md"
    scorer = K
    fan_factors = True
    # no flush credit by default (a flush is 清一色 alone, ×4); heuristic-flush plays a 清一色 plan worth 2 steps
    heuristic = {"triplets_bonus": 0, "flush_variant": {"flush_bonus": 2}}
    seven_pairs = True
    liang = True
    value_lock = True
    pays_kong_money = True
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

    @classmethod
    def fan_table(cls):
        """Fans are factors (×v) under the default ``fan_combine``."""
        rows = [[f"`{k}`", zh, en, f"×{v}"] for k, (zh, en, v) in K.FANS.items()]
        return ["id", "fan", "English", "value"], rows

    @classmethod
    def default_kong_money(cls, kind, opts):
        return K.kong_money(3, kind, 0, 1 if kind == "direct" else None, 1, opts)

    situation = ("liangdao", "after_kong", "last_tile", "konged", "discarder_liangdao", "lock")

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        from mjenv.rules.options import n_players

        ctx = K.WinContext(
            how=hand.win_how,
            revealed=sit.liangdao,
            kong_position=sit.kong_position,
            last_tile=sit.last_tile,
            winner_has_konged=sit.konged,
            discarder_revealed=sit.discarder_liangdao,
            missed_win_lock=sit.lock,
        )
        return K.score_hand(hand, ctx, opts, n_players(variant))

    @classmethod
    def score_json(cls, score, opts):
        return _plain_json(score, K.share(score, 1, opts))

    @classmethod
    def value_note(cls, score, opts):
        return f"({opts.fan_combine})"

    @classmethod
    def share_note(cls, out, opts, how):
        return f"{out['share']} per payer before payer factors (min(V, cap) × b, b = {json_number(opts.base)})"

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
              reading: int = -1):
        """Score and judge (L1–L4) a win of seat ``s`` at table ``b`` on tile ``w``; ``reading``: the code of the
        best reading when the compiled core found it (:func:`settled_reading`)."""
        st = self.engine.state
        discarder = int(st.claim_from[b]) if how != "self-draw" else None
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
        order = [int(s) for s in np.argsort(st.reveal_seq[b]) if st.reveal_seq[b, s] >= 0]
        ready = [None] * self.n
        if self.opts.tingtou != "off":
            ready = [K.ready_value(st.hand[b, s], eng.melds_of(b, s), self.opts, eng.kinds) for s in range(self.n)]
        return K.settle_draw(self.n, order, ready, self.opts)

    def next_dealer(self, b: int, winners: list[int], discarder: int | None) -> int:
        """§3.12: a single winner deals; several winners → the discarder; drawn hand → the dealer stays."""
        if not winners:
            return int(self.engine.state.dealer[b])
        return winners[0] if len(winners) == 1 else int(discarder)


class GejiuFamily(Family):
    """Gejiu (docs/rules/gejiu.md §6): chi, seven pairs and 烂牌, face-up kong tiles, no kong money, no lock."""

    name = "gejiu"
    variants = variants_of("gejiu")
    page = "gejiu.md"
    scorer = G
    heuristic = {"flush_bonus": 1, "triplets_bonus": 0}  # a flush is 2x a plain hand
    seven_pairs = True
    chi = True
    kong_tiles = 2
    win_on_shape = True  # §6.8: no minimum, no missed-win rule; a rob is of the kind gejiu_qianggang allows

    @property
    def rob_added_kong(self) -> bool:  # type: ignore[override]
        return self.opts.gejiu_qianggang == "add_kong"

    @property
    def rob_replacement(self) -> bool:  # type: ignore[override]
        return self.opts.gejiu_qianggang == "replacement_tile"

    @classmethod
    def fans(cls):
        return G.PATTERNS

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

    @classmethod
    def fan_table(cls):
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in G.PATTERNS.items()]
        return ["id", "pattern", "English", "value"], rows

    situation = ("after_kong",)

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        if sit.kong_position > 1:
            raise ValueError(f"--after-kong takes no chain position in {variant} (杠上花 is one pattern)")
        if sit.kong_position and hand.win_how != "self-draw":
            raise ValueError(f"--after-kong applies to a self-draw in {variant} (杠上花; there is no 杠上炮)")
        return G.score_hand(hand, G.GejiuContext(hand.win_how, after_kong=bool(sit.kong_position)), opts)

    @classmethod
    def score_json(cls, score, opts):
        return _plain_json(score, G.share(score, opts))

    @classmethod
    def value_note(cls, score, opts):
        return f"({opts.gejiu_combine}; 平胡 = {G.PATTERNS['pinghu'][2]} is the base)"

    @classmethod
    def share_note(cls, out, opts, how):
        return f"{out['share']} per payer (V × b, b = {json_number(opts.base)}; no cap)"

    def special_complete(self, counts):
        """烂牌 / 七星 (§6.6): 14 unrelated concealed tiles."""
        return G.lanpai_mask(counts)

    def score(self, b, s, concealed, w, how, kong_position, last_tile, reading: int = -1):
        """§6.7–§6.8 value; every winning shape is legal (no minimum, no missed-win rule); ``reading`` as for
        :meth:`KawuxingFamily.score`."""
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


class DiedaohuFamily(Family):
    """Diedaohu (docs/rules/diedaohu.md §7): hand classes, 米钱 kong money, 漏胡 with 大吊车, 园子 bankroll, sessions.

    Yangzhou and Liuwei share its missed-win rule, sessions and (Liuwei) bankroll.
    """

    name = "diedaohu"
    variants = variants_of("diedaohu")
    page = "diedaohu.md"
    scorer = D
    heuristic = {
        "flush_bonus": 1,  # a flush is 2x a plain hand
        "triplets_bonus": 0,
        "exposure_weight": 3.0,
        # the discarder alone pays V (docs/rules/diedaohu.md §7.4-7.5); ``flush``: 混一色 or 清一色, their mean
        "deal_in": {"hun": (2.0, 0.0), "flush": (3.0, 0.0), "fengqing": (16.0, 0.0)},
    }
    pays_kong_money = True

    @property
    def louhu_window(self) -> int:  # type: ignore[override]
        """A complete shape wins a claimed tile unless the lock or a busted discarder refuses it (codes.LOUHU_* bits:
        judged in the kernel, ``louhu`` on, a bankroll)."""
        return 1 | (2 if self.opts.louhu == "on" else 0) | (4 if getattr(self.opts, "bankroll", None) is not None else 0)

    @classmethod
    def fan_table(cls):
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in D.CLASSES.items()]
        return ["id", "hand class", "English", "value V (紧淌)"], rows

    @classmethod
    def default_kong_money(cls, kind, opts):
        return cls.scorer.kong_money(kind, 0, 1 if kind == "direct" else None, opts)

    situation = ("louhu", "dadiaoche", "discarder_busted")

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        """One hand class, the missed-win lock and a busted discarder (Diedaohu and Liuwei)."""
        ctx = D.DiedaohuContext(hand.win_how, lock=_louhu_lock(sit, hand), discarder_busted=sit.discarder_busted)
        return cls.scorer.score_hand(hand, ctx, opts)

    @classmethod
    def value_note(cls, score, opts):
        return "(V of the hand class, §7.4)"

    @classmethod
    def share_note(cls, out, opts, how):
        if out["whole_balance"]:
            return "the payer's whole balance (风清 under 园子)"
        return f"{out['share']} per payer (V × b, b = {json_number(opts.base)})"

    def configure(self, cfg):
        """Kong money (where the family pays it) compiled, limited by the balances under 园子 (:meth:`bankroll_kong`)."""
        from mjenv.engine import codes as C

        super().configure(cfg)
        if self.pays_kong_money:
            cfg[C.C_KONG_MONEY] = C.KONG_MONEY_BANKROLL
            _, cfg[C.C_KONG_ALL_PAY], cfg[C.C_KONG_LIMIT] = self.bankroll_kong()

    def configure_float(self, fcfg):
        """The amount each payer owes per kind of kong (:meth:`bankroll_kong`), where the family pays kong money."""
        from mjenv.engine import codes as C

        if self.pays_kong_money:
            owed = self.bankroll_kong()[0]
            fcfg[C.F_KONG_DIRECT] = owed["direct"]
            fcfg[C.F_KONG_ADDED] = owed["added"]
            fcfg[C.F_KONG_CONCEALED] = owed["concealed"]

    def _lock(self, b: int, s: int) -> D.LouhuLock:
        st = self.engine.state
        tile = int(st.dadiaoche[b, s])
        return D.LouhuLock(bool(st.lock[b, s] > 0), tile if tile >= 0 else None)

    def _balances(self, b: int) -> list[float] | None:
        """Current balances (园子), or None when money is unlimited."""
        if getattr(self.opts, "bankroll", None) is None:
            return None
        return [float(x) for x in self.engine.balance[b] + self.engine.state.money[b]]

    def _busted(self, b: int, seat: int) -> bool:
        bal = self._balances(b)
        return bal is not None and bal[seat] <= 1e-9

    def _context(self, b: int, s: int, how: str):
        discarder = int(self.engine.state.claim_from[b]) if how != "self-draw" else None
        busted = discarder is not None and self._busted(b, discarder)
        return D.DiedaohuContext(how, self._lock(b, s), busted)

    def score(self, b, s, concealed, w, how, kong_position, last_tile):
        """Hand class value with the missed-win lock and the busted-discarder rule as legality."""
        return self.scorer.score_win(concealed, self.engine.melds_of(b, s), w, self._context(b, s, how), self.opts)

    def settle_win(self, b, scored, how, discarder):
        """Payments limited by the balances under 园子."""
        return self.scorer.settle_win(scored, how, discarder, self.opts, self._balances(b))

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


class YangzhouFamily(DiedaohuFamily):
    """Yangzhou standard and new (docs/rules/yangzhou.md §8–§9): chi, seat and round winds, fan minimum, 1:2, 包牌; no kong money."""

    name = "yangzhou"
    variants = variants_of("yangzhou")
    page = "yangzhou.md"
    scorer = Y
    # 混一色 (15 / 20) and 对对胡 (15 / 20) are legal alone, a plain hand rarely reaches the minimum;
    # heuristic-flush credits both plans more (5 and 4): it beat these credits by +3.2 per hand over 800
    # duplicate walls (docs/training.md, "The 4-player variants")
    heuristic = {"flush_bonus": 3, "triplets_bonus": 3, "flush_variant": {"flush_bonus": 5, "triplets_bonus": 4}}
    louhu_window = 0  # its windows are judged by mjenv.engine.yzscore (fan minimum and lock)
    self_draw_minimum = True
    pays_kong_money = False

    @property
    def chi(self) -> bool:  # type: ignore[override]
        return self.opts.chi == "on"

    @classmethod
    def fan_table(cls):
        """The big fans with both value columns and what each composite combines (the small fans: their own block)."""
        made_of = {c: f"{Y.BIG_FANS[a][0]} + {Y.BIG_FANS[b][0]}" for (a, b), c in Y.COMPOSITES.items()}
        rows = [[f"`{k}`", zh, en, made_of.get(k, ""), str(s), str(n)] for k, (zh, en, (s, n)) in Y.BIG_FANS.items()]
        return ["id", "big fan", "English", "combines", "standard", "new"], rows

    situation = ("louhu", "dadiaoche", "seat_wind", "round_wind")

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        """``seat_wind`` / ``round_wind``: wind tile ids (East when ``None``)."""
        east = Y.round_wind(0)
        ctx = Y.YangzhouContext(
            hand.win_how,
            seat_wind=east if sit.seat_wind is None else sit.seat_wind,
            round_wind=east if sit.round_wind is None else sit.round_wind,
            lock=_louhu_lock(sit, hand),
        )
        return Y.score_hand(hand, ctx, opts)

    @classmethod
    def value_note(cls, score, opts):
        return (f"(T = B {score.big_fan_value} + small fans {score.total - score.big_fan_value}; "
                f"{opts.yz_style} values, min_fan {opts.min_fan})")

    @classmethod
    def share_note(cls, out, opts, how):
        b = json_number(opts.base)
        if how == "self-draw":
            return f"{out['share']} from each of the three others (T × b, b = {b})"
        return f"{out['share']} from the discarder (2 × T × b, b = {b}; the others pay nothing)"

    @classmethod
    def extra_tables(cls):
        """The small fans (小番) with their fan counts."""
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in Y.SMALL_FANS.items()]
        return {"small fans": (["id", "small fan", "English", "fans"], rows)}

    def configure(self, cfg):
        """Claim-window wins and the self-draw minimum judged in the kernel (:mod:`mjenv.engine.yzscore`, with the
        values of the scorer's tables), besides Diedaohu's entries."""
        from mjenv.engine import codes as C
        from mjenv.engine import yzscore

        super().configure(cfg)
        cfg[C.C_YZ : C.C_YZ + yzscore.N_YZ] = yzscore.config(self.opts)

    def round_wind(self, b: int) -> int:
        """Tile id of table ``b``'s round wind (§8.3), from its session (the kernels read it too, see ``PEND_ROUND_WIND``)."""
        return Y.round_wind(self.engine.sessions[b].round_index)

    def round_winds(self, idx: np.ndarray) -> np.ndarray:
        """:meth:`round_wind` of tables ``idx`` in one batch, from the engine's session rows (``Session.round_index``)."""
        rows = self.engine._ses[idx]
        return Y.round_wind(0) + np.minimum(rows[:, 2] // D.N_PLAYERS, rows[:, 1] - 1) % 4

    def _context(self, b, s, how):
        dealer = int(self.engine.state.dealer[b])
        return Y.YangzhouContext(how, Y.seat_wind(s, dealer), self.round_wind(b), self._lock(b, s))

    def settle_win(self, b, scored, how, discarder):
        """Yangzhou is 紧淌: no bankroll."""
        return Y.settle_win(scored, how, discarder, self.opts)

    def kong_money(self, b, konger, kind, discarder, position):
        return []

    def new_session(self, dealer):
        return D.new_session(self.opts, dealer)

    def advance_session(self, b, winners, settlement):
        session = D.next_hand(self.engine.sessions[b], winners, self.opts)
        return session, session.over


class LiuweiFamily(DiedaohuFamily):
    """Liuwei (docs/rules/liuwei.md §10): one winner per discard, 陪冲 payments, kong money, 园子 50, 8 rounds."""

    name = "liuwei"
    variants = variants_of("liuwei")
    page = "liuwei.md"
    scorer = L
    heuristic = {
        "flush_bonus": 1,  # a 混一色 is paid 3x a 屁胡 on a discard
        "triplets_bonus": 1,
        "exposure_weight": 0.0,  # under 陪冲 a deal-in costs little more than the self-draw it would prevent
        # the §10.4 table at the 50-scale: everyone pays, the discarder more; 风清 takes the discarder's balance
        "deal_in": {"hun": (12.0, 6.0), "flush": (14.0, 7.0), "fengqing": (None, 16.0)},
    }

    @classmethod
    def value_note(cls, score, opts):
        return "(Diedaohu V of the hand class, §7.4; money from the §10.4 table)"

    @classmethod
    def share_note(cls, out, opts, how):
        paid = "the whole balance" if out["whole_balance"] else out["share"]
        b = json_number(opts.base)
        n = json_number(opts.bankroll)
        scale = f"§10.4 table × b, b = {b}" if n is None else f"§10.4 table × N/50 × b, N = {n}, b = {b}"
        if how == "self-draw":
            return f"{paid} from each of the three others ({scale})"
        return f"{paid} from the discarder (出冲), {out['peichong']} from each other player (陪冲) ({scale})"

    @classmethod
    def fan_table(cls):
        """The payments of each hand class (§10.4)."""
        rows = []
        for k, (zh, en, _v) in L.CLASSES.items():
            cells = [str(m) for m in L.PAYMENTS[k]]
            if k == "fengqing":  # under 园子 the self-draw and the discarder pay their whole balance (§10.4)
                cells[:2] = [f"whole balance ({c} without a bankroll)" for c in cells[:2]]
            rows.append([f"`{k}`", zh, en, *cells])
        header = ["id", "hand class", "English", "self-draw: each other pays", "discard: discarder pays",
                  "discard: each other pays (陪冲)"]
        return header, rows

    @property
    def single_winner(self) -> bool:  # type: ignore[override]
        return True

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
