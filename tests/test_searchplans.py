"""Plan-committed rollouts (agents/players/searchplans.py) and the search's plan candidates (``plans=``): the committed
seat follows its plan to the end of the hand while the others play the policy, no plan is the policy's own rollout,
and the search adds a plan's move as a candidate only where it differs from the policy's."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.players.search import copy_tables, parse_spec
from agents.players.searchplans import PLANS, parse_plans, plan_configs, plan_moves, rollout_plans
from agents.tournament.arena import play_duplicate
from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.engine.core import Engine
from tests.engine_script import fast_midgame

CK = "kawuxing3-long.pt"  # the head policy-search rolls out with (POLICY_SEARCH_CHECKPOINTS)


def _states(B: int = 48, steps: int = 20, seed: int = 5) -> Engine:
    """``B`` Kawuxing tables after ``steps`` moves of the compiled player."""
    return fast_midgame(B, steps, seed)


def _copy(eng: Engine, reps: int = 1) -> Engine:
    out = Engine("kawuxing3", eng.batch_size * reps, record_events=False)
    out.reset(seed=0)
    copy_tables(eng, np.tile(np.arange(eng.batch_size), reps), out, np.arange(eng.batch_size * reps))
    return out


def _head():
    return make_agent(f"search:policy={CK},worlds=2,candidates=2").player


@pytest.mark.parametrize("player", ["head", "fast"])
def test_no_plan_is_the_players_own_rollout(player):
    """With every table's plan -1, :func:`rollout_plans` plays exactly the player's own rollout (bit-identical
    money and state)."""
    pl = _head() if player == "head" else make_agent("fast").player
    eng = _states()
    a, b = _copy(eng), _copy(eng)
    pl.rollout(a)
    cfgs = plan_configs(getattr(pl, "fast", pl).cfg, ("flush",))
    rollout_plans(b, pl, np.zeros(b.batch_size, np.int64), np.full(b.batch_size, -1), cfgs)
    assert (a.state.money == b.state.money).all() and (a._b8 == b._b8).all()


def test_the_committed_seat_follows_its_plan_and_the_others_play_on():
    """A seat committed to ``dama`` never declares 亮倒 in the rollout, though the same seats declare it in the
    policy's own rollouts of the same tables and the other seats still do; under ``flush`` (the compiled player's)
    and ``triplets`` (the policy's decider) every move of a committed seat is its plan's, every other the policy's."""
    head = _head()
    eng = _states(B=64, steps=12)
    seat = eng.state.actor.astype(np.int64).copy()
    plain, dama = _copy(eng), _copy(eng)
    head.rollout(plain)
    cfgs = plan_configs(head.fast.cfg, ("dama", "flush", "triplets"))
    rollout_plans(dama, head, seat, np.zeros(64, np.int64), cfgs)
    rows = np.arange(64)
    fresh = (eng.state.phase != S.DONE) & ~eng.state.revealed[rows, seat]  # live, not revealed yet
    assert fresh.sum() >= 32
    assert plain.state.revealed[rows, seat][fresh].sum() >= 5  # the policy reveals with these seats
    assert not dama.state.revealed[rows, seat][fresh].any()  # the committed seats never do
    others = np.ones((64, 3), bool)
    others[rows, seat] = False
    assert dama.state.revealed[others].sum() >= 5  # the policy's seats still reveal

    for plan, by in ((1, "fast"), (2, "player")):  # flush by the compiled player, triplets by the policy's decider
        e = _copy(eng)
        e._plan = np.where(fresh, plan, -1)
        checked = _watch(e, head, seat, plan, cfgs[plan], by)
        rollout_plans(e, head, seat, np.where(fresh, plan, -1), cfgs, by=by)
        assert checked[0] >= 100 and checked[1] >= 100


def _watch(e, head, seat, plan, cfg, by):
    """Wrap ``e.step`` to check, before every step, that each committed seat's move is its plan's (``cfg``, played
    ``by`` the compiled player or the policy's decider) and every other move the policy's; returns the counts
    checked [committed, other]."""
    from agents.players.fastplay import decide_tables

    orig = e.step
    checked = [0, 0]
    f = head.fast

    def step(acts):
        live = np.flatnonzero(e.state.phase != S.DONE)
        mine = live[(e.state.actor[live] == seat[live])]
        mine = mine[e._plan[mine] >= 0]
        rest = np.setdiff1d(live, mine)
        want = np.full(e.batch_size, -1, np.int64)
        if by == "fast":
            decide_tables(e._b8, e._b16, e.mask, mine, cfg, f.kc, f._tab, f._tabs, f._best, f._gain, want)
        else:
            want[mine] = plan_moves(head, e, mine, cfg[None, :])[:, 0]
        head.decide(e, rest, want)
        assert (acts[live] == want[live]).all()
        checked[0] += len(mine)
        checked[1] += len(rest)
        return orig(acts)

    e.step = step
    return checked


def test_plan_moves_and_configurations():
    """A plan's configuration overrides only its own settings; its first move is the player's decider under it
    (``dama`` never declares 亮倒, and elsewhere nearly always plays the policy's move: the head re-ranks a shortlist
    without the 亮倒 alternative, which now and then changes its departure)."""
    head = _head()
    cfg = head.fast.cfg
    cf = plan_configs(cfg, tuple(PLANS))
    for i, name in enumerate(PLANS):
        changed = set(np.flatnonzero(cf[i] != cfg))
        assert changed <= set(PLANS[name])
    eng = Engine("kawuxing3", 32, record_events=False)
    eng.reset(seed=11)
    acts = np.zeros(32, np.int64)
    met = same = other = 0
    for _ in range(120):
        live = np.flatnonzero(~eng.done)
        if not len(live):
            break
        pol = head.decide(eng, live)[live]
        dm = plan_moves(head, eng, live, plan_configs(cfg, ("dama",)))[:, 0]
        liang = (pol >= A.LIANG) & (pol < A.LIANG + 34)
        assert not ((dm >= A.LIANG) & (dm < A.LIANG + 34)).any()
        same += int((dm[~liang] == pol[~liang]).sum())
        other += int((~liang).sum())
        met += int(liang.sum())
        head.decide(eng, out=acts)
        eng.step(acts)
    assert met > 0 and same >= 0.95 * other


def test_plan_parameters_are_checked():
    assert parse_spec("search:plans=dama+flush,plan_z=1,plan_at=all") == {"plans": ("dama", "flush"), "plan_z": 1.0,
                                                                          "plan_at": "all"}
    assert parse_plans("") == () and parse_plans(None) == ()
    with pytest.raises(ValueError, match="plans: unknown plan 'sevens'"):
        make_agent(f"search:policy={CK},plans=sevens")
    with pytest.raises(ValueError, match="named twice"):
        make_agent(f"search:policy={CK},plans=dama+dama")
    with pytest.raises(ValueError, match="plan_at"):
        make_agent(f"search:policy={CK},plans=dama,plan_at=never")
    with pytest.raises(ValueError, match="plan_z"):
        make_agent(f"search:policy={CK},plans=dama,plan_z=-1")
    eng = Engine("kawuxing3", 2, record_events=False)
    eng.reset(seed=0)
    with pytest.raises(ValueError, match="one entry per table"):
        rollout_plans(eng, _head(), np.zeros(1, np.int64), np.zeros(2, np.int64), np.zeros((1, 13), np.int64))
    with pytest.raises(ValueError, match="by:"):
        rollout_plans(eng, _head(), np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros((1, 13), np.int64),
                      by="other")


def test_the_search_adds_plan_candidates_where_they_differ_and_rolls_them_out_committed(monkeypatch):
    """``policy-search:plans=dama``: at a decision where the policy declares 亮倒 the plain discard is a further
    candidate whose rollouts keep the seat concealed (``rollout_plans`` with that plan on those tables); without
    ``plans`` the plan rollout is never called (the search's play is the earlier code path)."""
    import agents.players.search as search_mod

    agent = make_agent("policy-search:plans=dama,plan_z=0,worlds=4", seed=3)
    calls = []
    real = search_mod.rollout_plans

    def spy(roll, player, seat, plan, cfgs, **kw):
        calls.append((seat.copy(), plan.copy()))
        out = real(roll, player, seat, plan, cfgs, **kw)
        committed = np.flatnonzero(plan >= 0)
        assert not roll.state.revealed[committed, seat[committed]].any()
        return out

    monkeypatch.setattr(search_mod, "rollout_plans", spy)
    res = play_duplicate([agent, make_agent("heuristic-flush")], "kawuxing3", walls=2, seed=70, batch_size=12)
    assert len(res.records) == 12 and calls and agent.stats["searched"] > 0
    assert sum(int((p >= 0).sum()) for _, p in calls) >= 4 * len(calls)  # 4 worlds per plan candidate

    def boom(*a, **k):
        raise AssertionError("rollout_plans called without plans")

    monkeypatch.setattr(search_mod, "rollout_plans", boom)
    plain = make_agent("policy-search:worlds=4", seed=3)
    play_duplicate([plain, make_agent("heuristic-flush")], "kawuxing3", walls=2, seed=70, batch_size=12)
    assert plain.stats["searched"] > 0 and plain.stats["planned"] == 0


def test_a_plan_search_is_deterministic_whatever_the_batch():
    """The same hands at batch sizes 12 and 5 (the worlds and plans of a decision depend on its key only)."""
    runs = []
    for bs in (12, 5):
        agent = make_agent("policy-search:plans=dama+flush4,plan_at=all,worlds=3", seed=5)
        res = play_duplicate([agent, make_agent("heuristic-flush")], "kawuxing3", walls=2, seed=71, batch_size=bs)
        runs.append(sorted((r.wall, tuple(r.seating), tuple(np.round(r.deltas, 6))) for r in res.records))
        assert agent.stats["planned"] > 0
    assert runs[0] == runs[1]
