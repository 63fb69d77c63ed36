"""The compiled improved player (agents/players/fasthead.py) against its Python twin, ``PolicyAgent`` on kawuxing3-default.pt.

* **Features**: the compiled ``candidate-features-v1`` equal :meth:`CandidateFeatures.per_candidate` exactly (float32)
  on recorded states of the compiled player's self-play, at decisions of every kind the Kawuxing shortlist has
  (discard, 亮倒, own kong, pong, claimed kong, pass).
* **Head**: the compiled forward pass (float32) equals the torch head's within float rounding.
* **Moves**: ``PolicyAgent`` plays every seat of self-play hands; at each decision with two or more legal actions the
  compiled player decides the same engine state.  Agreement must reach :data:`FLOOR` (measured 99.6 % over 4,000
  decisions of seed 7, ``bench/fasthead_twins.py``), and every difference must be of a kind explained here:

  - **advisor** — the compiled player's choice differs from ``heuristic-flush``'s (Python) choice: the two discards
    tie exactly in the ranking both compute (tests/test_twins.py, "tie"), and then the shortlist the head reads
    differs too.  All the differences measured were of this kind.
  - **network** — the advised network's greedy move is not ``heuristic-flush``'s choice (its advice weight makes that
    rare: 2 of 125,000 decisions, docs/experiments/expert-iteration.md); ``PolicyAgent`` then applies no head.
  - **tau** — the same shortlist and features, and one of the two heads' predicted gains lies within float32
    rounding (1e-4) of ``tau`` or of the other alternative's, so the two sides of the rule differ.

  A difference of any other kind fails the test, naming the decision.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.players.departures import CANDIDATES, KINDS, CandidateFeatures, candidate_kinds, predict  # noqa: E402
from agents.players.fasthead import FastHeadPlayer, check_features, recorded_decisions  # noqa: E402
from agents.players.fastplay import FastPlayer  # noqa: E402
from agents.players.heuristic import HeuristicAgent  # noqa: E402
from agents.players.policy import PolicyAgent, load_checkpoint, stamp  # noqa: E402
from mjenv.encoding import actions as A  # noqa: E402
from mjenv.encoding.observation import encoder_for  # noqa: E402
from mjenv.engine import state as S  # noqa: E402
from mjenv.engine.core import Engine  # noqa: E402

CKPT = "agents/checkpoints/kawuxing3-default.pt"
FLOOR = 0.99
ROUNDING = 1e-4


@pytest.fixture(scope="module")
def player():
    return FastHeadPlayer(CKPT)


def test_features_equal_the_python_features_at_every_decision_kind():
    fast = FastPlayer("kawuxing3")
    py = CandidateFeatures("kawuxing3")
    seen = np.zeros(len(KINDS), np.int64)
    total = 0
    for obs, mask, cand, ncand, per, dec in recorded_decisions(fast, 32, 1500, seed=11):
        want_per, want_dec = py.per_candidate(obs, mask, cand, ncand)
        assert per.dtype == want_per.dtype == np.float32
        bad = np.flatnonzero(~((want_per == per).all((1, 2)) & (want_dec == dec).all(1)))
        assert not len(bad), (cand[bad[0]], np.argwhere(want_per[bad[0]] != per[bad[0]]), want_dec[bad[0]], dec[bad[0]])
        kinds = candidate_kinds(cand)
        for k in range(CANDIDATES):
            np.add.at(seen, kinds[ncand > k, k], 1)
        total += len(mask)
    assert total == 1500
    for name in ("discard", "liang", "kong", "pong", "claim_kong", "pass"):
        assert seen[KINDS.index(name)] > 0, (name, seen)


def test_the_compiled_head_is_the_torch_head(player):
    pol_head = PolicyAgent(CKPT, "kawuxing3").departures.head
    fast = FastPlayer("kawuxing3")
    py = CandidateFeatures("kawuxing3")
    for obs, mask, cand, ncand, per, dec in recorded_decisions(fast, 16, 200, seed=12):
        pred = player.predict(per, dec, ncand)
        want = predict(pol_head, py.pairwise(obs, mask, cand, ncand))
        ok = np.arange(1, CANDIDATES)[None, :] < ncand[:, None]
        assert np.isneginf(pred[~ok]).all()
        assert np.abs(pred[ok] - want[ok]).max() < 1e-5


def _explain(pol: PolicyAgent, fh: FastHeadPlayer, heur: HeuristicAgent, eng, table: int, obs, mask, ap: int,
             af: int) -> str:
    """Which explained kind a difference is (module docstring), or ``"unexplained: ..."``."""
    dep = pol.departures
    pc, pn = dep.features.advisor.candidates(obs, mask, CANDIDATES)
    fc, fn = fh.candidates(eng, [table], CANDIDATES)
    if pc[0, 0] != fc[0, 0]:
        _, entries = heur._play(heur.view.decode(obs), mask, True)
        values = {int(a): float(v) for _, acts, vals in entries for a, v in zip(acts, vals)}
        a, b = int(pc[0, 0]), int(fc[0, 0])
        if a < A.LIANG and b < A.LIANG and a in values and b in values and values[a] == values[b]:
            return "advisor"
        return f"unexplained: advisor {A.action_name(a)}, compiled {A.action_name(b)}"
    with torch.no_grad():  # the network's own greedy move, before the head
        x = obs if pol.features is None else pol.features.extend(obs, mask)
        logits = pol.head(pol.trunk(torch.as_tensor(np.asarray(x, np.float32).reshape(1, -1)))).numpy()
    logits[~mask] = -np.inf
    greedy = int(logits.argmax(1)[0])
    if greedy != pc[0, 0]:
        return "network"
    if (pc == fc).all():
        pred = predict(dep.head, dep.features.pairwise(obs, mask, pc, pn))[0][: int(pn[0]) - 1]
        near = np.abs(pred - fh.tau).min() < ROUNDING
        if len(pred) > 1:
            near |= abs(pred[0] - pred[1]) < ROUNDING
        if near:
            return "tau"
    return f"unexplained: shortlist {pc[0].tolist()} / {fc[0].tolist()}, policy {A.action_name(ap)}, compiled {A.action_name(af)}"


def agreement(player: FastHeadPlayer, decisions: int, seed: int = 7, tables: int = 32) -> tuple[int, int, dict]:
    """``(same, decisions, {kind: count})``: ``PolicyAgent`` on :data:`CKPT` plays every seat of self-play hands (walls
    ``(seed, i)``, the dealer rotating); at each of the first ``decisions`` decisions with two or more legal actions
    the compiled ``player`` decides the same engine state; the differences by explained kind (module docstring;
    ``"first unexplained"`` names the first that is none of them)."""
    pol = PolicyAgent(CKPT, "kawuxing3")
    heur = pol.departures.features.advisor
    eng = Engine("kawuxing3", tables, options=player.opts, record_events=False)
    enc = encoder_for(eng)
    st = eng.state
    eng.reset(seed=seed, table_ids=np.arange(tables), dealer=np.arange(tables) % 3)
    deal = n = same = 0
    kinds: dict = {}
    while n < decisions:
        if eng.done.all():
            deal += 1
            eng.reset(seed=seed, table_ids=np.arange(tables) + deal * tables, dealer=np.arange(tables) % 3)
        live = np.flatnonzero(~eng.done)
        obs = enc.encode(st, st.actor[live].astype(np.int64), live, engine=eng)
        mask = eng.mask[live]
        ap = pol.act(obs, mask)
        af = player.decide(eng, live)[live]
        for j in np.flatnonzero(mask.sum(1) >= 2)[: decisions - n]:
            n += 1
            if ap[j] == af[j]:
                same += 1
                continue
            kind = _explain(pol, player, heur, eng, int(live[j]), obs[j : j + 1], mask[j : j + 1], int(ap[j]), int(af[j]))
            if kind.startswith("unexplained"):
                kinds.setdefault("first unexplained", kind)
                kind = "unexplained"
            kinds[kind] = kinds.get(kind, 0) + 1
        acts = np.zeros(tables, np.int64)
        acts[live] = ap
        eng.step(acts)
    return same, n, kinds


def test_the_compiled_player_plays_the_policys_moves(player):
    same, n, kinds = agreement(player, 700)
    assert n == 700
    assert "unexplained" not in kinds, kinds
    assert same / n >= FLOOR, (same, n, kinds)


def test_rollout_plays_hands_to_the_end_and_departs(player):
    eng = Engine("kawuxing3", 24, options=player.opts, record_events=False)
    eng.reset(seed=13, table_ids=np.arange(24), dealer=np.arange(24) % 3)
    before = player.stats.copy()
    made = player.rollout(eng)
    assert (eng.state.phase == S.DONE).all()
    d = player.stats - before
    assert made == d[0] > 24 * 20
    assert 0 < d[2] < d[1] <= d[0]  # it reads the head at most decisions and departs at some
    # at tau = +inf it is the compiled heuristic-flush player, move for move
    plain = FastHeadPlayer(CKPT, tau=float("inf"))
    fast = FastPlayer("kawuxing3")
    for e in (eng,):
        e.reset(seed=14, table_ids=np.arange(24), dealer=np.arange(24) % 3)
        for _ in range(30):
            live = np.flatnonzero(e.state.phase != S.DONE)
            a = plain.decide(e, live)
            assert (a[live] == fast.decide(e, live)[live]).all()
            e.step(a)


def test_refusals():
    ck = load_checkpoint(CKPT)
    with pytest.raises(ValueError, match="no departure head"):
        FastHeadPlayer(stamp({k: v for k, v in ck.items() if k != "departures"} | {"network_only": False}))
    other = dict(ck)
    other["departures"] = {**ck["departures"], "fingerprint": "sha256:" + "0" * 64}
    with pytest.raises(ValueError, match="changed since"):
        FastHeadPlayer(other)
    check_features(FastPlayer("kawuxing3").rules)  # the rule set it plays passes its own check


def test_labels_roll_out_with_the_compiled_improved_player(player):
    from agents.training.distill import label_states

    kw = dict(decisions=6, tables=8, worlds=2, seed=3, policy=player)
    ours = label_states(**kw, rollout_player=player)
    plain = label_states(**kw)  # the same states and shortlists, rolled out by the compiled heuristic-flush player
    assert (ours["cand"] == plain["cand"]).all() and (ours["played"] == plain["played"]).all()
    assert ours["meta"]["rollout_player"] == player.name and plain["meta"]["rollout_player"] is None
    assert not np.array_equal(ours["value"], plain["value"])  # its departures change the hands' money
