"""The search agent (agents/players/search.py): deterministic for a seed, the same worlds for every candidate, the better
action found in a constructed position, parameters checked, and tournaments through the arena."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.tournament.arena import play_duplicate
from agents.players.search import SearchAgent, parse_spec
from mjenv.encoding import actions as A
from mjenv.engine.core import Engine
from mjenv.tiles import parse_tiles
from tests.engine_script import fast_midgame


def _midgame(seed: int = 4, B: int = 6, steps: int = 14) -> Engine:
    """``B`` Kawuxing tables after ``steps`` moves of the compiled player."""
    return fast_midgame(B, steps, seed)


def test_search_is_deterministic_for_a_seed():
    eng = _midgame()
    live = np.flatnonzero(~eng.done)
    keys = np.arange(len(live), dtype=np.uint64) * 7919
    a1 = SearchAgent("kawuxing3", worlds=4, seed=3).act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    agent = SearchAgent("kawuxing3", worlds=4, seed=3)
    a2 = agent.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    a3 = agent.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)  # reused engines, same answers
    assert (a1 == a2).all() and (a2 == a3).all()
    assert agent.stats["searched"] > 0 and eng.mask[live, a1].all()


def test_candidates_see_the_same_worlds():
    eng = _midgame()
    live = np.flatnonzero(~eng.done)
    agent = SearchAgent("kawuxing3", worlds=5, candidates=3)
    cand, ncand = agent.player.candidates(eng, live, 3)
    todo = [j for j in range(len(live)) if ncand[j] >= 2]
    assert todo
    roll, acts, seats, blocks = agent._fill(eng, live, cand, ncand, todo, [11 + j for j in todo], 5)
    for (base, k), j in zip(blocks, todo):
        first = slice(base, base + 5)
        for c in range(1, k):
            other = slice(base + c * 5, base + c * 5 + 5)
            assert (roll._b8[first] == roll._b8[other]).all() and (roll._b16[first] == roll._b16[other]).all()
            assert (acts[other] == cand[j, c]).all()
        # the worlds themselves differ (hidden tiles redrawn)
        assert len({roll._b8[b].tobytes() for b in range(base, base + 5)}) > 1


def _dealer_hand(hand14: str) -> Engine:
    eng = Engine("kawuxing3", 1, record_events=False)
    want = parse_tiles(hand14)
    rest = list(eng.tiles)
    for t in want:
        rest.remove(t)
    rest = list(np.random.default_rng(0).permutation(rest))
    eng.reset(walls=[want[:13] + rest[:26] + [want[13]] + rest[26:]])
    return eng


def test_search_finds_the_clearly_better_action():
    # 5555z 123p 456p 789p 1s: the concealed kong is paid 2 by each opponent at once and keeps the hand ready on
    # 1s; discarding a 5z keeps it ready too but gives the kong money away for good.
    eng = _dealer_hand("5555z123p456p789p1s")
    kong, discard = A.KONG_SELF + parse_tiles("5z")[0], parse_tiles("5z")[0]
    agent = SearchAgent("kawuxing3", worlds=32)
    v = agent.evaluate(eng, 0, [discard, kong])
    assert v.shape == (2, 32)
    assert v[1].mean() > v[0].mean() + 2.0
    # listed second (after the worse one), it is still the choice
    best = agent._search(eng, np.array([0]), np.array([[discard, kong]]), np.array([2]), [0],
                         np.zeros(1, np.uint64), 32)
    assert best == [kong]


def test_search_parameters_are_checked():
    assert parse_spec("search:worlds=32,candidates=4,search=discard+claim") == {
        "worlds": 32, "candidates": 4, "search": ("discard", "claim")}
    with pytest.raises(ValueError, match="worlds"):
        make_agent("search:worlds=x")
    with pytest.raises(ValueError, match="search parameter"):
        make_agent("search:depth=3")
    with pytest.raises(ValueError, match="candidates"):
        SearchAgent("kawuxing3", candidates=1)
    with pytest.raises(ValueError, match="unknown decision kind"):
        SearchAgent("kawuxing3", search=("defence",))


def test_search_plays_a_tournament_deterministically():
    agents = lambda: [make_agent("search:worlds=2", seed=5), make_agent("heuristic-flush")]
    r1 = play_duplicate(agents(), "kawuxing3", walls=1, batch_size=6)
    r2 = play_duplicate(agents(), "kawuxing3", walls=1, batch_size=3)
    assert [r.deltas for r in r1.records] == [r.deltas for r in sorted(r2.records, key=lambda r: r.game)]


def test_mjenv_play_takes_search_opponents(tmp_path):
    import io

    from mjenv.play import play_main
    from tests.test_play import _Player, _args

    out = io.StringIO()
    args = _args(tmp_path, variant="kawuxing3", seed=1, seat=0, opponents="search:worlds=2")
    assert play_main(args, inp=_Player(out), out=out) == 0
    assert "== the hand is over" in out.getvalue()


def test_a_time_budget_cuts_the_worlds():
    eng = _midgame()
    live = np.flatnonzero(~eng.done)
    keys = np.arange(len(live), dtype=np.uint64)
    agent = SearchAgent("kawuxing3", worlds=16, budget_ms=1e-6)
    agent.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)  # measures the cost per rollout table
    first = agent.stats["rollout_tables"]
    agent.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    assert agent.stats["rollout_tables"] - first < first / 8  # one world per candidate instead of 16
    with pytest.raises(ValueError, match="budget_ms"):
        SearchAgent("kawuxing3", budget_ms=0)


def test_a_decision_without_worlds_keeps_the_players_move_and_is_counted(monkeypatch):
    """Where the sampler finds no consistent world (RuntimeError), the search plays its player's choice there, counts
    it and keeps the message; the labeller skips such decisions and counts them in ``meta["skipped"]``."""
    from agents.training.distill import label_states

    eng = _midgame()
    live = np.flatnonzero(~eng.done)
    keys = np.arange(len(live), dtype=np.uint64)
    want = make_agent("fast").act(None, eng.mask[live], engine=eng, tables=live)
    real = Engine.sample_worlds
    refused = []

    def refuse(self, table, seat, n, **kw):
        if not refused:
            refused.append(table)
            raise RuntimeError(f"table {table}, seat {seat}: no world (test)")
        return real(self, table, seat, n, **kw)

    monkeypatch.setattr(Engine, "sample_worlds", refuse)
    agent = SearchAgent("kawuxing3", worlds=3, seed=1)
    got = agent.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    j = int(np.flatnonzero(live == refused[0])[0])
    assert got[j] == want[j] and agent.stats["unsampled"] == 1 and "no world (test)" in agent.last_unsampled
    assert agent.stats["searched"] > 1 and eng.mask[live, got].all()

    calls = {"n": 0}

    def every_fifth(self, table, seat, n, **kw):
        calls["n"] += 1
        if calls["n"] % 5 == 0:
            raise RuntimeError("no world (test)")
        return real(self, table, seat, n, **kw)

    monkeypatch.setattr(Engine, "sample_worlds", every_fifth)
    lines = []
    labels = label_states(decisions=40, tables=8, worlds=2, candidates=3, seed=4, log=lines.append)
    assert labels["meta"]["decisions"] == 40 == len(labels["gain"]) and labels["meta"]["skipped"] >= 7
    assert any("skipped" in line and "no world (test)" in line for line in lines)


def test_search_over_a_policy_puts_its_move_first_and_searches_the_near_decisions():
    """``policy=CHECKPOINT``: the compiled improved player rolls out and its move is the one to beat (column 0);
    ``near`` limits the search to decisions its head finds near its threshold; bad values are refused."""
    from agents.players.fasthead import FastHeadPlayer

    eng = _midgame(steps=20)
    live = np.flatnonzero(~eng.done)
    keys = np.arange(len(live), dtype=np.uint64)
    ck = "kawuxing3-default.pt"
    head = FastHeadPlayer("agents/checkpoints/" + ck)
    base = head.decide(eng, live)[live]
    agent = make_agent(f"search:policy={ck},worlds=3,candidates=2")
    cand, ncand, near = agent._policy_order(eng, live)
    assert (cand[:, 0] == base).all() and near.all() and (ncand <= 2).all()
    got = agent.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    assert eng.mask[live, got].all() and agent.stats["searched"] == int((ncand >= 2).sum())
    strict = make_agent(f"search:policy={ck},worlds=3,near=0,z=1e9")  # searches nothing, plays the policy
    assert (strict.act(None, eng.mask[live], engine=eng, tables=live, keys=keys) == base).all()
    assert strict.stats["searched"] == 0
    with pytest.raises(ValueError, match="near"):
        SearchAgent("kawuxing3", near=0.1)
    with pytest.raises(ValueError, match="margin"):
        make_agent(f"search:policy={ck},margin=-1")
    with pytest.raises(ValueError, match="not found"):
        make_agent("search:policy=nowhere.pt")


def test_a_rollout_policy_plays_the_rollouts_and_near_tau_centres_the_window():
    """``rollout_policy=CKPT``: the root's move and shortlist are ``policy``'s, the rollouts another checkpoint's
    improved player's (the same values as a search over that checkpoint alone); ``near_tau`` moves the centre of the
    ``near`` window off the head's own threshold; bad values are refused, naming the option."""
    eng = _midgame(steps=20)
    live = np.flatnonzero(~eng.done)
    root, roll = "kawuxing3-default.pt", "kawuxing3-long.pt"
    agent = make_agent(f"search:policy={root},rollout_policy={roll},worlds=3,candidates=2,near=0.1")
    alone = make_agent(f"search:policy={roll},worlds=3,candidates=2")
    assert agent.roller is not agent.player and agent.roller.weights["w1"].shape == alone.player.weights["w1"].shape
    b = int(live[0])
    acts = np.flatnonzero(eng.mask[b])[:2]
    assert np.array_equal(agent.evaluate(eng, b, acts, seed=5), alone.evaluate(eng, b, acts, seed=5))
    cand, _, near = agent._policy_order(eng, live)
    assert (cand[:, 0] == agent.player.decide(eng, live)[live]).all()
    same = make_agent(f"search:policy={root},near=0.1,near_tau={agent.player.tau}")
    assert np.array_equal(same._policy_order(eng, live)[2], near)
    far = make_agent(f"search:policy={root},near=0.1,near_tau=100")
    assert not far._policy_order(eng, live)[2][agent.player.candidates(eng, live, 3)[1] >= 2].any()
    for spec, match in ((f"search:rollout_policy={roll}", "rollout_policy: a second head"),
                        (f"search:policy={root},rollout_policy=nowhere.pt", "rollout_policy: checkpoint 'nowhere.pt'"),
                        (f"search:policy={root},near_tau=0.1", "near_tau"),
                        (f"search:policy={root},near=0.1,near_tau=nan", "near_tau")):
        with pytest.raises(ValueError, match=match):
            make_agent(spec)


def test_policy_search_is_a_named_agent_that_plays(tmp_path, monkeypatch):
    """``policy-search``: the search over ``kawuxing3-default.pt`` with ``kawuxing3-long.pt``'s rollouts and the declared settings, through the registry
    and the arena; a default checkpoint whose departure head the compiled player cannot read (Gejiu's, of scope win)
    and a variant without a shipped default checkpoint are refused."""
    import agents
    from agents import POLICY_SEARCH

    agent = make_agent("policy-search")
    assert agent.policy.endswith("kawuxing3-default.pt") and agent.rollout_policy.endswith("kawuxing3-long.pt") and (agent.near, agent.worlds, agent.candidates, agent.z) == (
        POLICY_SEARCH["near"], POLICY_SEARCH["worlds"], POLICY_SEARCH["candidates"], POLICY_SEARCH["z"])
    assert agent.liang_z == POLICY_SEARCH["liang_z"] == 0.0
    quick = make_agent("policy-search:worlds=4", seed=2)
    res = play_duplicate([quick, make_agent("heuristic-flush")], "kawuxing3", walls=1, batch_size=6)
    assert len(res.records) == 6 and quick.stats["searched"] > 0
    with pytest.raises(ValueError, match="its departure head reads 'candidate-features-v2' \\(scope 'win'\\)"):
        make_agent("policy-search", "gejiu")
    monkeypatch.setattr(agents, "CHECKPOINT_DIR", tmp_path)
    with pytest.raises(ValueError, match="no shipped kawuxing3-default.pt"):
        make_agent("policy-search")


def test_belief_weights_favour_worlds_that_explain_the_latest_discards():
    """``agents/players/searchbelief.py``: the opponents whose latest discard left the hand they hold now are found
    from public facts; in the true table (dealt its own hidden tiles) the player that made those discards makes
    them again (≥ 95 %: measured 97.7 % here), in uniformly sampled worlds far less often; the resample keeps
    worlds in proportion to their weights."""
    from agents.players.searchbelief import discard_weights, last_discards, resample
    from mjenv.engine.worlds import sample_worlds

    B = 12
    eng = Engine("kawuxing3", B, record_events=False)
    eng.reset(seed=4)
    fast = make_agent("fast").player
    scratch = Engine("kawuxing3", 32, record_events=False)
    scratch.reset(seed=0)
    acts = np.zeros(B, np.int64)
    true_w, world_w = [], []
    for _ in range(40):
        for b in np.flatnonzero(~eng.done):
            s = int(eng.state.actor[b])
            facts = last_discards(eng, int(b), s)
            for o, t, tau in facts:
                k = int(eng.state.river_len[b, o])
                assert o != s and eng.state.river[b, o, k - 1] == t and eng.state.river_time[b, o, k - 1] == tau
            if facts:
                true_w.append(discard_weights(sample_worlds(eng, int(b), s, 1, seed=1, _identity=True), [0], facts,
                                              fast, scratch, 0.0)[0])
                world_w.append(discard_weights(eng.sample_worlds(int(b), s, 32, seed=2), np.arange(32), facts, fast,
                                               scratch, 0.0).mean())
        fast.decide(eng, out=acts)
        eng.step(acts)
    assert len(true_w) > 100
    assert np.mean(true_w) >= 0.95 and np.mean(world_w) < 0.5
    got = resample(np.array([0.0, 3.0, 0.0, 1.0]), 8, 0.5)
    assert np.bincount(got, minlength=4).tolist() == [0, 6, 0, 2]
    assert resample(np.zeros(4), 3, 0.2).tolist() == [0, 1, 2]


def test_search_with_a_belief_rolls_out_weighted_worlds_deterministically():
    """``belief=EPS``: ``pool`` × ``worlds`` worlds sampled, ``worlds`` of them kept by the likelihood of the opponents'
    latest discards (the same worlds for every candidate); deterministic for a seed; bad values refused."""
    eng = _midgame(steps=20)
    live = np.flatnonzero(~eng.done)
    keys = np.arange(len(live), dtype=np.uint64) * 31
    spec = "search:policy=kawuxing3-default.pt,worlds=4,candidates=2,belief=0.1,pool=4"
    a1 = make_agent(spec, seed=3)
    got1 = a1.act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    got2 = make_agent(spec, seed=3).act(None, eng.mask[live], engine=eng, tables=live, keys=keys)
    assert (got1 == got2).all() and eng.mask[live, got1].all()
    assert a1.stats["weighted"] > 0 and a1.belief == 0.1 and a1.pool == 4
    cand, ncand, _ = a1._policy_order(eng, live)
    todo = [j for j in range(len(live)) if ncand[j] >= 2]
    roll, acts, seats, blocks = a1._fill(eng, live, cand, ncand, todo, [11 + j for j in todo], 4)
    for base, k in (blk for blk in blocks if blk is not None):
        assert (roll._b8[base : base + 4] == roll._b8[base + 4 : base + 8]).all()
    with pytest.raises(ValueError, match="belief"):
        make_agent("search:belief=2")
    with pytest.raises(ValueError, match="pool"):
        SearchAgent("kawuxing3", pool=0)


def test_liang_z_searches_every_decision_with_a_reveal_candidate():
    """``liang_z``: with ``near=0`` (no near decision) exactly the decisions whose candidates include a 亮倒 are
    searched; a negative value is refused."""
    ck = "kawuxing3-default.pt"
    agent = make_agent(f"search:policy={ck},worlds=2,candidates=2,near=0,liang_z=0", seed=1)
    eng = Engine("kawuxing3", 16, record_events=False)
    eng.reset(seed=9)
    fast = make_agent("fast").player
    acts = np.zeros(16, np.int64)
    seen = 0
    for _ in range(80):
        live = np.flatnonzero(~eng.done)
        if not len(live):
            break
        cand, ncand, _ = agent._policy_order(eng, live)
        lo = ((cand >= A.LIANG) & (cand < A.LIANG + 34) & (np.arange(2)[None, :] < ncand[:, None])).any(1)
        want = int((lo & (ncand >= 2)).sum())
        before = agent.stats["searched"]
        agent.act(None, eng.mask[live], engine=eng, tables=live, keys=np.arange(len(live), dtype=np.uint64))
        assert agent.stats["searched"] - before == want
        seen += want
        fast.decide(eng, out=acts)
        eng.step(acts)
    assert seen > 0
    with pytest.raises(ValueError, match="liang_z"):
        make_agent(f"search:policy={ck},liang_z=-1")
