"""The compiled rollout player (agents/players/fastplay.py): legal play to the end in every variant under the validator,
decisions that depend only on what the acting seat sees, agreement with the Python heuristic, the arena hook."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.tournament.arena import play_duplicate
from agents.players.fastplay import PC_FLUSH, FastPlayer
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encoder_for
from mjenv.engine.core import Engine
from mjenv.engine.validate import validate
from mjenv.tiles import parse_tiles

VARIANTS = ("kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei")


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_player_plays_every_variant_to_the_end(variant):
    eng = Engine(variant, 3, record_events=False)
    eng.reset(seed=5)
    fp = FastPlayer(variant, eng.opts)
    acts = np.zeros(3, np.int64)
    steps = 0
    while not eng.done.all():
        live = np.flatnonzero(~eng.done)
        fp.decide(eng, out=acts)
        assert eng.mask[live, acts[live]].all()
        eng.step(acts)
        validate(eng)
        steps += 1
        assert steps < 2000
    assert all(eng.results[b] is not None for b in range(3))


def test_rollout_plays_a_batch_to_the_end():
    eng = Engine("kawuxing3", 16, record_events=False)
    eng.reset(seed=9)
    n = FastPlayer("kawuxing3", eng.opts).rollout(eng)
    assert eng.done.all() and n > 16 * 10
    validate(eng)
    assert np.allclose(eng.state.money.sum(1), 0.0)


def _hide_swap(eng, b: int, seat: int, rng) -> bool:
    """Swap one concealed tile of an unrevealed opponent of ``seat`` with a different undrawn wall tile (both
    unseen by ``seat``); False when no such pair exists."""
    st = eng.state
    for a in rng.permutation(eng.n):
        if a == seat or st.revealed[b, a]:
            continue
        f, k = int(st.front[b]), int(st.back[b])
        held = np.flatnonzero(st.hand[b, a])
        for i in rng.permutation(np.arange(f, k)):
            u = int(st.wall[b, i])
            for t in rng.permutation(held):
                if t != u and st.hand[b, a, u] < 4:
                    st.hand[b, a, t] -= 1
                    st.hand[b, a, u] += 1
                    st.wall[b, i] = t
                    return True
    return False


def test_decisions_depend_only_on_what_the_seat_sees():
    eng = Engine("kawuxing3", 32, record_events=False)
    eng.reset(seed=21)
    fp = FastPlayer("kawuxing3", eng.opts)
    rng = np.random.default_rng(0)
    acts = np.zeros(32, np.int64)
    checked = 0
    for _ in range(25):
        live = np.flatnonzero(~eng.done)
        if not len(live):
            break
        fp.decide(eng, out=acts)
        saved = (eng._b8.copy(), eng._b16.copy())
        for b in live:
            if _hide_swap(eng, int(b), int(eng.state.actor[b]), rng):
                checked += 1
        again = fp.decide(eng, out=np.zeros(32, np.int64))
        assert (again[live] == acts[live]).all()
        eng._b8[:], eng._b16[:] = saved
        eng.step(acts)
    assert checked > 100


@pytest.mark.parametrize("variant", ["gejiu", "yangzhou"])
def test_fast_player_agrees_with_the_heuristic(variant):
    """Outside Kawuxing (whose wait-value weighting it leaves out) it plays heuristic-flush's moves."""
    eng = Engine(variant, 8, record_events=False)
    eng.reset(seed=2)
    enc = encoder_for(eng)
    heur = make_agent("heuristic-flush", variant, eng.opts)
    fp = FastPlayer(variant, eng.opts)
    same = total = 0
    while not eng.done.all():
        live = np.flatnonzero(~eng.done)
        ah = heur.act(enc.encode(eng.state, eng.state.actor[live], live), eng.mask[live])
        af = fp.decide(eng)[live]
        same += int((ah == af).sum())
        total += len(live)
        acts = np.zeros(8, np.int64)
        acts[live] = ah
        eng.step(acts)
    assert total > 200 and same / total >= 0.97


def test_candidates_rank_the_choice_first():
    # 5555z and a ready rest: the concealed kong is the choice, the discards follow.
    eng = Engine("kawuxing3", 1)
    tiles = parse_tiles("5555z123p456p789p1s")
    rest = list(eng.tiles)
    for t in tiles:
        rest.remove(t)
    rest = list(np.random.default_rng(0).permutation(rest))
    eng.reset(walls=[tiles[:13] + rest[:26] + [tiles[13]] + rest[26:]])
    fp = FastPlayer("kawuxing3", eng.opts)
    cand, n = fp.candidates(eng, [0], 6)
    assert cand[0, 0] == A.KONG_SELF + parse_tiles("5z")[0] == fp.decide(eng)[0]
    assert n[0] >= 2 and eng.mask[0, cand[0, : n[0]]].all()
    # the heuristic ranks the same list from the observation alone (tests/test_heuristic_candidates.py)
    heur = make_agent("heuristic-flush", "kawuxing3", eng.opts)
    obs = encoder_for(eng).encode(eng.state, eng.state.actor, np.arange(1))
    hc, hn = heur.candidates(obs, eng.mask, 6)
    assert hn[0] == n[0] and (hc == cand).all() and hc[0, 0] == heur.act(obs, eng.mask)[0]


def test_fast_agent_plays_in_the_arena():
    res = play_duplicate([make_agent("fast"), make_agent("heuristic-flush")], "kawuxing3", walls=2, batch_size=12)
    assert len(res.records) == 2 * 6
    with pytest.raises(ValueError, match="engine"):
        make_agent("fast").act(None, np.ones((1, A.N_ACTIONS), bool))


def test_fast_player_reads_the_family_parameters(monkeypatch):
    """The flush credit is the family's (agents.players.heuristic.family_params), not a copy: changing it changes the
    player's settings and its moves."""
    from agents.players.heuristic import FAMILY_PARAMS

    eng = Engine("kawuxing3", 16, record_events=False)
    eng.reset(seed=4)
    before = FastPlayer("kawuxing3", eng.opts)
    monkeypatch.setitem(FAMILY_PARAMS, "kawuxing", {**FAMILY_PARAMS["kawuxing"], "flush_variant": {"flush_bonus": 6}})
    after = FastPlayer("kawuxing3", eng.opts)
    assert before.cfg[PC_FLUSH] == 2 and after.cfg[PC_FLUSH] == 6
    differ = 0
    acts = np.zeros(16, np.int64)
    while not eng.done.all() and not differ:
        live = np.flatnonzero(~eng.done)
        a = before.decide(eng, out=acts)
        differ = int((after.decide(eng)[live] != a[live]).sum())
        eng.step(acts)
    assert differ > 0
