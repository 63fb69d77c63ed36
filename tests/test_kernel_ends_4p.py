"""The 4-player families' pieces compiled into the kernel against the engine's own Python path, in lockstep.

Gejiu's claim windows open in the kernel and its wins are valued (mjenv/engine/gjscore.py) and settled there,
their results built when read; Diedaohu's and Liuwei's claim windows are judged there (mjenv/engine/ddend.py) and
their wins settled there (mjenv/engine/ddwin.py), Yangzhou's wins too (mjenv/engine/yzend.py).
An engine switched back to the Python path for those (the configuration entries cleared) plays the same walls
and actions: state (money bit for bit), masks, results, sessions, bankrolls and event logs must stay equal over
whole sessions, including balances set close to bust.  Drawn hands (ended in the kernel, results built when
read, sessions advanced in a batch) and the bankroll-limited kong money have no Python path any more: both
engines run them compiled here, and tests/differential.py compares them with the reference engine (as the
drawn-hand test below does too).
"""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.encoding import actions as A
from mjenv.engine import core
from mjenv.engine import codes as K
from mjenv.engine.core import Engine


def _python_path(eng: Engine) -> Engine:
    """Send ``eng`` through the Python pendings again (P_WINDOW, Gejiu's, Diedaohu's and Liuwei's wins)."""
    eng._cfg[K.C_WIN_ON_SHAPE] = 0
    eng._cfg[K.C_LOUHU_WINDOW] = 0
    eng._cfg[K.C_GJ_SCORE] = 0
    eng._cfg[K.C_DD_END] = 0
    return eng


def _same(a: Engine, b: Engine, where: str, events: bool) -> None:
    assert np.array_equal(a._b8, b._b8), where
    assert np.array_equal(a._b16, b._b16), where
    assert a._money.tobytes() == b._money.tobytes(), where  # bit for bit
    assert np.array_equal(a.mask, b.mask), where
    assert a.results == b.results, where
    assert a.sessions == b.sessions, where
    assert np.array_equal(a.session_over, b.session_over), where
    assert a.balance.tobytes() == b.balance.tobytes(), where
    assert a.match_money.tobytes() == b.match_money.tobytes(), where
    if events:
        for t in range(a.batch_size):
            assert list(a.events[t]) == list(b.events[t]), f"{where} table {t}"


def _policy(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    acts = np.zeros(len(mask), np.int64)
    for t in np.flatnonzero(mask.any(1)):
        legal = np.flatnonzero(mask[t])
        # wins often (hands end every way), kongs always (kong money), else at random
        kongs = legal[(legal >= A.KONG_SELF) & (legal < A.KONG_SELF + 34) | (legal == A.KONG_CLAIM)]
        if mask[t, A.WIN] and rng.random() < 0.5:
            acts[t] = A.WIN
        elif len(kongs) and rng.random() < 0.8:
            acts[t] = kongs[0]
        else:
            acts[t] = legal[rng.integers(len(legal))]
    return acts


CASES = [
    ("gejiu", {}),
    ("gejiu", {"gejiu_qianggang": "replacement_tile"}),
    ("gejiu", {"gejiu_combine": "add", "multi_win": "off", "gejiu_multiwin_dealer": "nearest_winner"}),
    ("diedaohu", {"bankroll": 4.0}),
    ("diedaohu", {"bankroll": 2.0, "draw_dealer": "stay", "multi_win": "off"}),
    ("diedaohu", {}),
    ("yangzhou", {}),
    ("yangzhou_new", {"draw_dealer": "stay"}),
    ("liuwei", {}),
    ("liuwei", {"bankroll": 12.5}),
]


@pytest.mark.parametrize("variant,opts", CASES, ids=[f"{v}-{'-'.join(f'{k}={x}' for k, x in o.items())}" for v, o in CASES])
def test_compiled_equals_python_path_over_sessions(variant, opts):
    B, hands = 8, 28
    fast = Engine(variant, B, options=opts or None)
    slow = _python_path(Engine(variant, B, options=opts or None))
    rng = np.random.default_rng(len(variant) * 7 + len(opts))
    wall_rng = np.random.default_rng(99)
    sessions_over = 0
    for hand in range(hands):
        walls = np.stack([wall_rng.permutation(fast.tiles) for _ in range(B)])
        if hand == 0:
            dealers = rng.integers(0, 4, B)
            fast.reset(walls=walls, dealer=dealers)
            slow.reset(walls=walls, dealer=dealers)
            if fast.balance.any():  # close to bust: some seats hold less than one kong's money, some nothing
                # (in quarters of b: the scorer's 园子 check rejects the -1e-17 that sums of other fractions leave)
                low = np.round(rng.uniform(-1, 6, fast.balance.shape)).clip(0) * fast.family.starting_balance() / 16
                fast.balance[:] = low
                slow.balance[:] = low
        else:
            over = np.flatnonzero(fast.session_over)
            cont = np.flatnonzero(~fast.session_over)
            sessions_over += len(over)
            if len(cont):
                fast.next_hand(walls=walls[cont], tables=cont)
                slow.next_hand(walls=walls[cont], tables=cont)
            if len(over):
                fast.reset(walls=walls[over], tables=over, dealer=0)
                slow.reset(walls=walls[over], tables=over, dealer=0)
        _same(fast, slow, f"hand {hand} deal", events=True)
        step = 0
        while not fast.done.all():
            acts = _policy(fast.mask, rng)
            fast.step(acts)
            slow.step(acts)
            step += 1
            _same(fast, slow, f"hand {hand} step {step}", events=False)
        _same(fast, slow, f"hand {hand} end", events=True)
    if fast.sessions[0] is not None:
        assert max(s.hands for s in fast.sessions) >= 1
    if opts.get("bankroll") in (2.0, 4.0):
        assert sessions_over > 0  # the bankroll ended sessions on the way


def test_drawn_hand_result_is_built_when_read_and_equals_the_eager_one():
    """The kernel ends drawn hands with their results unread; read, they equal the reference engine's, built at once."""
    from tests.reference_engine import Engine as ReferenceEngine

    fast = Engine("diedaohu", 8)
    ref = ReferenceEngine("diedaohu", 8)
    wall_rng = np.random.default_rng(4)
    walls = np.stack([wall_rng.permutation(fast.tiles) for _ in range(8)])
    for eng in (fast, ref):
        eng.reset(walls=walls)
        rng = np.random.default_rng(1)
        while not eng.done.all():
            eng.step(_no_win(eng.mask, rng))
    drawn = [b for b in range(8) if list.__getitem__(fast.results, b) is core._UNREAD]
    assert drawn  # drawn hands ended in the kernel, results not built yet
    for b in drawn:
        assert fast.results[b] == ref.results[b]
        assert fast.results[b]["how"] == "draw" and fast.results[b]["transfers"] == []
        assert fast.events[b][-1] == {"type": "end", **fast.results[b]} == ref.events[b][-1]
    assert list(fast.sessions) == ref.sessions and all(s.hands == 1 for s in fast.sessions)


def _no_win(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    acts = np.zeros(len(mask), np.int64)
    for t in np.flatnonzero(mask.any(1)):
        legal = np.flatnonzero(mask[t])
        legal = legal[legal != A.WIN] if len(legal) > 1 else legal
        acts[t] = legal[rng.integers(len(legal))]
    return acts


def test_kong_money_under_a_nearly_busted_bankroll():
    """A concealed kong's money is limited by each payer's balance: a busted payer pays nothing, a poor one all
    it has, and the kong event read later lists what was paid."""
    from mjenv.rules.scoring import diedaohu as D

    eng = Engine("diedaohu", 1, options={"bankroll": 5.0})
    # seat 0 deals and holds four 1m: it may kong at once
    wall = _wall_with_four(eng)
    eng.reset(walls=[wall], dealer=0)
    eng.balance[0] = [5.0, 0.0, 0.25, 3.0]
    assert eng.mask[0, A.KONG_SELF + 0]
    eng.step(np.array([A.KONG_SELF + 0]))
    want = D.settle_kong("concealed", 0, None, eng.opts, [5.0, 0.0, 0.25, 3.0]).transfers
    assert [float(x) for x in eng.state.money[0]] == [1.25, 0.0, -0.25, -1.0]
    kong = [e for e in eng.events[0] if e["type"] == "kong"][0]
    assert kong["transfers"] == [core._transfer_dict(t) for t in want]
    assert [t["amount"] for t in kong["transfers"]] == [0.25, 1.0]


def _wall_with_four(eng: Engine) -> list[int]:
    tiles = list(eng.tiles)
    for _ in range(4):
        tiles.remove(0)
    rest = np.random.default_rng(0).permutation(tiles).tolist()
    return [0, 0, 0, 0] + rest[:9] + rest[9:48] + rest[48:]


def test_sessions_read_as_session_objects_and_assignments_reach_the_rows():
    import copy
    import pickle

    from mjenv.rules.scoring import diedaohu as D
    from mjenv.rules.scoring import liuwei as L

    for variant, scorer in (("diedaohu", D), ("liuwei", L)):
        eng = Engine(variant, 6, record_events=False)
        eng.reset(seed=2, dealer=[0, 1, 2, 3, 0, 1])
        assert [list.__getitem__(eng.sessions, b) for b in range(6)] == [core._UNREAD] * 6  # made when read
        want = [scorer.new_session(eng.opts, d) for d in [0, 1, 2, 3, 0, 1]]
        assert eng.sessions == want and list(eng.sessions) == want and repr(eng.sessions) == repr(want)
        assert type(eng.sessions[0]) is D.Session and eng.sessions[0] is eng.sessions[0]
        assert pickle.loads(pickle.dumps(eng.sessions)) == want and copy.deepcopy(eng.sessions) == want
        moved = D.Session(2, 4, 9, 11, False)
        eng.sessions[3] = moved
        assert eng._ses[3].tolist() == [2, 4, 9, 11, 0] and eng.sessions[3] is moved
        rng = np.random.default_rng(0)
        while not eng.done.all():
            eng.step(_no_win(eng.mask, rng))
        before = [want[0], want[1], want[2], moved, want[4], want[5]]
        for b in range(6):
            if eng.results[b]["how"] == "draw":
                assert eng.sessions[b] == scorer.next_hand(before[b], [], eng.opts)
                assert eng.session_over[b] == eng.sessions[b].over
