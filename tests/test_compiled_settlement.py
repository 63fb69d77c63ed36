"""Compiled win settlement (mjenv/engine/ddwin.py, mjenv/engine/yzend.py) against the pure scorers it twins.

``ddwin._dd_end`` / ``yzend._yz_end`` are called on one engine table whose hands, melds, claim and balances are
drawn at random (every hand class, 风清 with a fed fourth pong, 清一色 fed by three chis, several winners,
balances at and near bust); the money they leave must equal, bit for bit, the money the scorer's settlement
moves (``diedaohu.settle_win`` / ``liuwei.settle_win`` / ``yangzhou.settle_win`` as the engine's Python path
calls them), and the session-ending flag its ``session_over``.  The hand class alone is compared with
``best_class_reading`` under both families' ranks, and the score a result is made from (the class and V the kernel
writes in the winner's fan row, ``diedaohu.score_settled`` / ``liuwei.score_settled``; Yangzhou's fans and T,
``yangzhou.score_settled``) with the scorer's.  Whole
sessions of the compiled engine against its Python path are tests/test_kernel_ends_4p.py's.
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.encoding import actions as A
from mjenv.engine import codes as K
from mjenv.engine import ddwin, fanrow, yzend
from mjenv.engine import state as S
from mjenv.engine.core import Engine
from mjenv.engine.family import settled_reading
from mjenv.rules import hand as H
from mjenv.rules.scoring import diedaohu as D
from mjenv.rules.scoring import liuwei as L
from mjenv.rules.scoring import yangzhou as Y
from mjenv.tiles import Meld

_KINDS = (S.PONG_MELD, S.DIRECT_KONG, S.ADDED_KONG, S.CONCEALED_KONG)
_RANKS = {K.DD_END_DIEDAOHU: lambda c: D.CLASSES[c][2], K.DD_END_LIUWEI: L._RANK.__getitem__}
_KINDS_CHI = _KINDS + (S.CHI_MELD, S.CHI_MELD, S.CHI_MELD)


def _sets(rng, n: int, pool: np.ndarray, t: int | None) -> list[tuple[str, int]]:
    """``n`` random sets (trip or run) of tiles from ``pool``, the first holding ``t`` when given."""
    out = []
    for i in range(n):
        if i == 0 and t is not None:
            starts = [x for x in (t - 2, t - 1, t) if x < 27 and x >= 0 and x // 9 == t // 9 and x % 9 <= 6]
            if t < 27 and starts and rng.random() < 0.5:
                out.append(("run", int(rng.choice(starts))))
            else:
                out.append(("trip", t))
            continue
        x = int(rng.choice(pool))
        if x < 27 and x % 9 <= 6 and rng.random() < 0.5:
            out.append(("run", x))
        else:
            out.append(("trip", x))
    return out


def _hand(rng, t: int | None, chi: bool = False):
    """(full concealed counts with the winning tile, melds as (kind, tile, src)): a complete standard hand whose
    tiles are drawn from a random pool (one suit, honours only, a suit and honours, or anything); chi melds too
    when ``chi``."""
    style = rng.integers(4)
    suit = int(rng.integers(3))
    pool = {
        0: np.arange(9 * suit, 9 * suit + 9),
        1: np.arange(27, 34),
        2: np.r_[np.arange(9 * suit, 9 * suit + 9), np.arange(27, 34)],
        3: np.arange(34),
    }[int(style)]
    if t is not None and t not in pool:
        pool = np.r_[pool, [t]]
    while True:
        m = int(rng.integers(0, 5))
        melds = []
        for _ in range(m):
            kind, x = int(rng.choice(_KINDS_CHI if chi else _KINDS)), int(rng.choice(pool))
            if kind == S.CHI_MELD and (x >= 27 or x % 9 > 6):
                kind = S.PONG_MELD
            melds.append((kind, x, int(rng.integers(4))))
        counts = np.zeros(34, np.int64)
        pair_first = t is not None and rng.random() < 0.3
        pair = t if pair_first else int(rng.choice(pool))
        counts[pair] += 2
        for kind, x in _sets(rng, 4 - m, pool, None if pair_first else t):
            if kind == "trip":
                counts[x] += 3
            else:
                counts[x : x + 3] += 1
        total = counts.copy()
        for kind, x, _ in melds:
            if kind == S.CHI_MELD:
                total[x : x + 3] += 1
            else:
                total[x] += 4 if kind >= S.DIRECT_KONG else 3
        if t is None or counts[t] > 0:
            if total.max() <= 4:
                return counts, melds


def _put(eng: Engine, s: int, counts, melds) -> None:
    st = eng.state
    st.hand[0, s] = counts
    st.n_melds[0, s] = len(melds)
    st.meld_kind[0, s] = 0
    st.meld_tile[0, s] = 0
    st.meld_src[0, s] = -1
    for j, (kind, x, src) in enumerate(melds):
        st.meld_kind[0, s, j] = kind
        st.meld_tile[0, s, j] = x
        st.meld_src[0, s, j] = -1 if kind == S.CONCEALED_KONG else (s + 1 + src % 3) % 4  # another seat


def _stage_win(eng: Engine, rng: np.random.Generator, self_draw: bool, chi: bool = False, p_winner: float = 0.5):
    """Put a random winning position at table 0: a self-draw by one seat, or a discard (robbed with probability 0.2)
    claimed by each other seat with probability ``p_winner`` (at least one).  Returns ``(code, how, discarder or
    None, winners, winning tile)``; a single-winner family keeps only the first."""
    st = eng.state
    st.claim_reply[0] = 0
    if self_draw:
        s = int(rng.integers(4))
        counts, melds = _hand(rng, None, chi)
        w = int(rng.choice(np.flatnonzero(counts)))
        _put(eng, s, counts, melds)
        st.cur[0], st.drawn[0] = s, w
        st.phase[0] = S.TURN
        return K.P_SELF_DRAW, "self-draw", None, [s], w
    frm = int(rng.integers(4))
    w = int(rng.integers(34))
    others = [(frm + k) % 4 for k in range(1, 4)]
    winners = [x for x in others if rng.random() < p_winner] or [others[int(rng.integers(3))]]
    for x in winners:
        counts, melds = _hand(rng, w, chi)
        counts[w] -= 1
        _put(eng, x, counts, melds)
        st.claim_reply[0, x] = A.WIN
    st.claim_from[0], st.claim_tile[0] = frm, w
    rob = rng.random() < 0.2
    st.phase[0] = S.ROB if rob else S.CLAIM
    return K.P_CLAIM_WIN, "rob" if rob else "discard", frm, winners[:1] if eng.family.single_winner else winners, w


def _settle_one(eng: Engine, rng: np.random.Generator, self_draw: bool):
    """Draw a random win at table 0 of ``eng``, settle it compiled and by the scorer; both moneys and over flags."""
    st = eng.state
    fam = eng.family
    st.money[0] = np.round(rng.normal(0, 2, 4) * 4) / 4
    bankroll = getattr(eng.opts, "bankroll", None)
    if bankroll is not None:
        eng.balance[0] = np.round(rng.uniform(-1, 5, 4)).clip(0) * fam.starting_balance() / 8 - st.money[0]
        out = rng.random(4) < 0.15
        eng.balance[0, out] = -st.money[0, out]  # some seats already busted
    money0 = st.money[0].copy()
    code, how, frm, winners, _ = _stage_win(eng, rng, self_draw)
    scored = []
    for x in winners:
        concealed = st.hand[0, x].copy()
        w = int(st.drawn[0]) if self_draw else int(st.claim_tile[0])
        if self_draw:
            concealed[w] -= 1
        melds = eng.melds_of(0, x)
        ctx = D.DiedaohuContext(how)
        scored.append((x, fam.scorer.score_win(concealed, melds, w, ctx, eng.opts)))
    bal = None if bankroll is None else [float(v) for v in eng.balance[0] + money0]
    want = fam.scorer.settle_win(scored, how, frm, eng.opts, bal)
    expect = money0.copy()
    for tr in want.transfers:
        expect[tr.payer] -= tr.amount
        expect[tr.payee] += tr.amount
    hands = {x: (st.hand[0, x].copy(), eng.melds_of(0, x)) for x in winners}
    E = eng._args + (7,)
    assert ddwin._dd_end(E, 0, code) == K.P_ENDED
    assert st.phase[0] == S.DONE
    assert eng._money_before_win[0].tobytes() == money0.tobytes()
    # each winner's reading code names the reading the scorer values it with (or says several share its class)
    rank = _RANKS[eng.family.dd_end]
    for x in winners:
        held, melds = hands[x]
        w = int(st.drawn[0]) if self_draw else int(st.claim_tile[0])
        concealed = held.copy()
        if self_draw:
            concealed[w] -= 1
        rc = int(eng._pend[0, K.PEND_READING + x])
        r = settled_reading(concealed, w, rc)
        assert r is not None or rc & H.READING_TIE, rc
        row = eng._pend[0, K.PEND_FANS + K.FAN_SLOTS * x : K.PEND_FANS + K.FAN_SLOTS * (x + 1)]
        assert (row[fanrow.ROW_N] > 0) == (r is not None)
        if r is not None:
            assert r == D.best_class_reading(concealed, melds, w, rank)[0]
            # the result's score made from the kernel's fan row (its class and V) is the scorer's
            ((cls, value),) = fanrow.read(row, tuple(D.CLASSES))[0].items()
            assert fam.scorer.score_settled(r, melds, cls, value, how, eng.opts) == dict(scored)[x]
    return st.money[0].copy(), expect, bool(eng._pend[0, K.PEND_OVER]), bool(want.session_over), scored


CASES = [
    ("diedaohu", {}),
    ("diedaohu", {"bankroll": 4.0, "fengqing_baopai": "on"}),
    ("diedaohu", {"bankroll": 2.0, "multi_win": "off"}),
    ("diedaohu", {"fengqing_baopai": "on", "base": 0.3}),
    ("liuwei", {}),
    ("liuwei", {"bankroll": 12.5}),
    ("liuwei", {"bankroll": "none"}),
]


@pytest.mark.parametrize("variant,opts", CASES, ids=[f"{v}-{o}" for v, o in CASES])
def test_compiled_settlement_equals_the_scorer_on_random_wins(variant, opts):
    eng = Engine(variant, 1, options=opts or None)
    eng.reset(seed=0)
    rng = np.random.default_rng(len(variant) + 13 * len(opts))
    classes, liable, over, several = set(), 0, 0, 0
    for i in range(1500):
        got, want, got_over, want_over, scored = _settle_one(eng, rng, self_draw=i % 3 == 0)
        assert got.tobytes() == want.tobytes(), (i, got, want, scored)
        assert got_over == want_over, i
        classes.update(sc.hand_class for _, sc in scored)
        liable += any(getattr(sc, "baopai", None) for _, sc in scored)
        over += want_over
        several += len(scored) > 1
    assert classes == set(D.CLASSES)  # every class was settled
    if opts.get("fengqing_baopai") == "on":
        assert liable > 0
    if opts.get("bankroll") in (2.0, 4.0, 12.5) or (variant == "liuwei" and "bankroll" not in opts):
        assert over > 0
    if variant == "diedaohu" and opts.get("multi_win") != "off":
        assert several > 0


def test_hand_class_equals_best_class_reading():
    """The compiled class of a win equals the class of the scorer's best reading, ranked by V (Diedaohu) and by
    money (Liuwei): the two ranks agree on every hand."""
    eng = Engine("diedaohu", 1)
    eng.reset(seed=0)
    r8 = eng._b8[0]
    rng = np.random.default_rng(5)
    names = list(D.CLASSES)
    for _ in range(3000):
        counts, melds = _hand(rng, None)
        w = int(rng.choice(np.flatnonzero(counts)))
        _put(eng, 2, counts, melds)
        add = rng.random() < 0.5
        if add:
            eng.state.hand[0, 2, w] -= 1
        got = names[ddwin._dd_class(r8, 2, w, add)]
        concealed = counts.copy()
        concealed[w] -= 1
        ms = [Meld(S.MELD_LETTERS[k], (x,) * (4 if k >= S.DIRECT_KONG else 3), None) for k, x, _ in melds]
        for rank in (lambda c: D.CLASSES[c][2], L._RANK.__getitem__):
            assert D.best_class_reading(concealed, ms, w, rank)[1] == got


def _yz_win(eng: Engine, rng: np.random.Generator, self_draw: bool):
    """Draw a random legal Yangzhou win at table 0 of ``eng``; settle it compiled and by the scorer."""
    st = eng.state
    chi = eng.opts.chi == "on"
    st.money[0] = np.round(rng.normal(0, 2, 4) * 4) / 4
    money0 = st.money[0].copy()
    st.dealer[0] = int(rng.integers(4))
    eng._pend[0, K.PEND_ROUND_WIND] = 27 + int(rng.integers(4))
    rw = int(eng._pend[0, K.PEND_ROUND_WIND])
    while True:
        code, how, frm, winners, w = _stage_win(eng, rng, self_draw, chi, p_winner=0.4)
        scored = []
        for x in winners:
            concealed = st.hand[0, x].copy()
            if self_draw:
                concealed[w] -= 1
            ctx = Y.YangzhouContext(how, Y.seat_wind(x, int(st.dealer[0])), rw)
            scored.append((x, Y.score_win(concealed, eng.melds_of(0, x), w, ctx, eng.opts)))
        if all(sc.legal for _, sc in scored):
            break
    want = Y.settle_win(scored, how, frm, eng.opts)
    expect = money0.copy()
    for tr in want.transfers:
        expect[tr.payer] -= tr.amount
        expect[tr.payee] += tr.amount
    hands = {x: (st.hand[0, x].copy(), eng.melds_of(0, x)) for x in winners}
    E = eng._args + (7,)
    assert yzend._yz_end(E, 0, code) == K.P_ENDED
    assert st.phase[0] == S.DONE and eng._pend[0, K.PEND_OVER] == 0
    # each winner's reading code names a reading whose own score is the scorer's (or says another ties)
    for (x, sc) in scored:
        held, melds = hands[x]
        concealed = held.copy()
        if self_draw:
            concealed[w] -= 1
        rc = int(eng._pend[0, K.PEND_READING + x])
        r = settled_reading(concealed, w, rc)
        assert r is not None or rc & H.READING_TIE, rc
        row = eng._pend[0, K.PEND_FANS + K.FAN_SLOTS * x : K.PEND_FANS + K.FAN_SLOTS * (x + 1)]
        assert (row[fanrow.ROW_N] > 0) == (r is not None)
        if r is not None:
            ctx = Y.YangzhouContext(how, Y.seat_wind(x, int(st.dealer[0])), rw)
            assert Y.score_reading(concealed, melds, w, ctx, eng.opts, r) == sc
            # the result's score made from the kernel's fan row (yzscore.reading_fans) is the scorer's
            fans, total, cap = fanrow.read(row, Y.FAN_ORDER)
            assert cap is None and Y.score_settled(r, melds, fans, total, how, eng.opts) == sc
    return st.money[0].copy(), expect, scored


YZ_CASES = [
    ("yangzhou", {}),
    ("yangzhou", {"chi": "off", "base": 0.3}),
    ("yangzhou_new", {"multi_win": "off"}),
    ("yangzhou", {"baopai": "off"}),
]


@pytest.mark.parametrize("variant,opts", YZ_CASES, ids=[f"{v}-{o}" for v, o in YZ_CASES])
def test_compiled_yangzhou_settlement_equals_the_scorer_on_random_wins(variant, opts):
    eng = Engine(variant, 1, options=opts or None)
    eng.reset(seed=0)
    rng = np.random.default_rng(len(variant) + 7 * len(opts))
    liable, several, totals = 0, 0, set()
    for i in range(1200):
        got, want, scored = _yz_win(eng, rng, self_draw=i % 3 == 0)
        assert got.tobytes() == want.tobytes(), (i, got, want, scored)
        liable += any(Y.liable_seat(x, sc) is not None for x, sc in scored)
        several += len(scored) > 1
        totals.update(sc.total for _, sc in scored)
    assert len(totals) >= 8  # many values of T were settled
    if opts.get("baopai") != "off":
        assert liable > 0
    if opts.get("multi_win") != "off":
        assert several > 0


# The rule book's worked examples (§11; tests/test_scoring_*.py assert the scorer on them): (variant, options,
# [(winner, hand)], how, discarder, balances or None, the deltas of the rule book; for Yangzhou, in units of the
# winner's T: the compiled money must equal T times them).
_A, _B, _C, _D = range(4)
EXAMPLES = [
    ("diedaohu", {}, [(_A, "222m777m99m55z [P 111z] +5z")], "self-draw", None, None, (12, -4, -4, -4)),  # E37
    ("diedaohu", {}, [(_A, "333z55z66z [P 111z] [P 222z] +6z")], "discard", _B, None, (16, -16, 0, 0)),  # E39
    ("diedaohu", {"bankroll": 100}, [(_A, "333z55z66z [P 111z] [P 222z] +6z")], "discard", _B,
     (100, 25, 100, 100), (25, -25, 0, 0)),  # E39 under 园子: the whole balance
    ("diedaohu", {"bankroll": 100}, [(_B, "22m44s [P 111p] [P 999s] [P 333z] +2m"), (_D, "13m456m777m888m99m +2m")],
     "discard", _A, (3, 100, 100, 100), (-3, 2, 0, 1)),  # E40: two winners, a short discarder
    ("diedaohu", {}, [(_B, "5m [P 111p] [P 222s] [P 333z] [P 777m] +5m")], "discard", _C, None, (0, 2, -2, 0)),  # E41
    ("liuwei", {}, [(_B, "22m44s [P 111p] [P 999s] [P 333z] +4s")], "discard", _A, (50,) * 4, (-10, 20, -5, -5)),  # E47
    ("liuwei", {}, [(_B, "123m456p789s234m5z +5z")], "self-draw", None, (50,) * 4, (-6, 18, -6, -6)),  # E48
    ("liuwei", {}, [(_C, "123m456p789s234m5z +5z")], "discard", _A, (50,) * 4, (-4, -2, 8, -2)),  # E49
    ("yangzhou", {}, [(_A, "123m456m789m345m9m +9m")], "self-draw", None, None, (3, -1, -1, -1)),  # E43
    ("yangzhou_new", {}, [(_A, "123m456m789m345m9m +9m")], "self-draw", None, None, (3, -1, -1, -1)),  # E43
    ("yangzhou", {}, [(_A, "111m555s77z88s [P 999p] +7z")], "discard", _B, None, (2, -2, 0, 0)),  # E45
    ("yangzhou", {}, [(_C, "55m99m [C 123m<B] [C 456m<B] [C 789m<B] +9m")], "self-draw", None, None, (0, -3, 3, 0)),  # E46
    ("yangzhou_new", {}, [(_C, "55m99m [C 123m<B] [C 456m<B] [C 789m<B] +9m")], "self-draw", None, None, (0, -3, 3, 0)),
]
_LETTER_KIND = {"P": S.PONG_MELD, "C": S.CHI_MELD, "K": S.DIRECT_KONG, "A": S.ADDED_KONG, "X": S.CONCEALED_KONG}


@pytest.mark.parametrize("variant,opts,winners,how,frm,balances,deltas", EXAMPLES)
def test_compiled_settlement_of_the_worked_examples(variant, opts, winners, how, frm, balances, deltas):
    from mjenv.tiles import parse_hand

    eng = Engine(variant, 1, options=opts or None)
    eng.reset(seed=0)
    st = eng.state
    st.money[0] = 0.0
    st.claim_reply[0] = 0
    if balances is not None:
        eng.balance[0] = balances
    st.dealer[0] = winners[0][0]  # the winner is East in the East round, as the scorer's notation context
    eng._pend[0, K.PEND_ROUND_WIND] = 27
    scored = []
    for seat, text in winners:
        hand = parse_hand(f"{text} {how}")
        counts = hand.concealed_counts().astype(np.int64)
        w = int(hand.win_tile)
        if how == "self-draw":
            counts[w] += 1
            st.cur[0], st.drawn[0] = seat, w
            st.phase[0] = S.TURN
        else:
            st.claim_reply[0, seat] = A.WIN
            st.claim_from[0], st.claim_tile[0] = frm, w
            st.phase[0] = S.ROB if how == "rob" else S.CLAIM
        melds = [(_LETTER_KIND[m.kind], min(m.tiles), -1 if m.source is None else m.source) for m in hand.melds]
        _put(eng, seat, counts, [])
        for j, (kind, x, src) in enumerate(melds):
            st.meld_kind[0, seat, j], st.meld_tile[0, seat, j], st.meld_src[0, seat, j] = kind, x, src
        st.n_melds[0, seat] = len(melds)
        scored.append((seat, hand))
    code = K.P_SELF_DRAW if how == "self-draw" else K.P_CLAIM_WIN
    E = eng._args + (7,)
    settle = yzend._yz_end if eng.family.dd_end == K.DD_END_YANGZHOU else ddwin._dd_end
    assert settle(E, 0, code) == K.P_ENDED
    unit = 1.0
    if variant.startswith("yangzhou"):
        ctx = Y.YangzhouContext(how)
        h = scored[0][1]
        unit = float(Y.score_win(h.concealed_counts(), h.melds, h.win_tile, ctx, eng.opts).total)
    assert st.money[0].tolist() == [unit * d for d in deltas]
    eng._book_ended(np.array([0]))  # as the engine books a hand the kernel ended; the result is built when read
    result = eng.results[0]
    assert result["settlement_deltas"] == result["deltas"] == [unit * d for d in deltas]
    assert [w["seat"] for w in result["winners"]] == [seat for seat, _ in winners]
