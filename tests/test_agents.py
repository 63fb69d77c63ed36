"""Tests of agents/: shanten against a slow reference, observation decoding, the heuristic's decisions, the
random agent, the registry, and the policy agent's checkpoint checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import make_agent
from agents.tournament.arena import pairwise, play_duplicate
from agents.players.base import ObsView
from agents.players.heuristic import HeuristicAgent
from mjenv.encoding.shanten import block_tables, shanten, shanten_reference, shanten_standard, ukeire
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encode
from mjenv.engine import state as S
from mjenv.engine.core import Engine
from mjenv.rules import hand as H
from mjenv.rules.options import load_rules, tile_kinds
from mjenv.tiles import counts_from_ids, parse_tiles

KINDS3 = tile_kinds("kawuxing3", load_rules("kawuxing3"))
KINDS4 = tile_kinds("kawuxing4", load_rules("kawuxing4"))


def counts(text: str) -> np.ndarray:
    return counts_from_ids(parse_tiles(text)).astype(np.int8)


@st.composite
def hands(draw, complete_size: bool | None = None):
    """A concealed hand of a Kawuxing tile set with its number of declared melds (3k+1 or 3k+2 tiles)."""
    kinds = draw(st.sampled_from([KINDS3, KINDS4]))
    melds = draw(st.integers(0, 4))
    extra = draw(st.booleans()) if complete_size is None else complete_size
    size = 13 - 3 * melds + int(extra)
    pool = np.repeat(np.flatnonzero(kinds), 4)
    perm = draw(st.permutations(list(range(len(pool)))))
    # Bias towards connected hands: half the time draw from one suit's neighbourhood.
    if draw(st.booleans()):
        lo = draw(st.sampled_from([9, 18]))
        pool = np.repeat(np.arange(lo, lo + 9), 4)
        perm = draw(st.permutations(list(range(len(pool)))))
    ids = pool[np.asarray(perm[:size])]
    return counts_from_ids(ids).astype(np.int8), melds


# ------------------------------------------------------------------------------------------ shanten


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands())
def test_shanten_equals_slow_reference(hm):
    h, melds = hm
    assert shanten(h, melds) == shanten_reference(h, melds)


def _block_standard(h, melds) -> int:
    """Standard shanten from the blocks-form tables (the compiled player's), combined in Python."""
    tb = block_tables()
    k = 4 - melds
    acc = np.zeros((2, 5), np.int64)  # the identity: every entry 0
    for j in range(4):
        size = 7 if j == 3 else 9
        code = int(sum(int(h[9 * j + x]) * 5**x for x in range(size)))
        part = (tb["honor"] if j == 3 else tb["suit"])[code].astype(np.int64)
        assert (tb["joint"][code + (5**9 if j == 3 else 0)] == part).all()
        nxt = np.full((2, 5), -999, np.int64)
        for n in range(5):
            for i in range(n + 1):
                nxt[0, n] = max(nxt[0, n], acc[0, i] + part[0, n - i])
                nxt[1, n] = max(nxt[1, n], acc[0, i] + part[1, n - i], acc[1, i] + part[0, n - i])
        acc = nxt
    return 2 * k - int(acc[1, k])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands())
def test_block_tables_give_the_standard_shanten(hm):
    h, melds = hm
    assert _block_standard(h, melds) == shanten_standard(h, melds)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hands(), min_size=1, max_size=12))
def test_batched_shanten_equals_one_by_one(batch):
    hs = np.stack([h for h, _ in batch])
    ms = np.array([m for _, m in batch])
    assert shanten(hs, ms).tolist() == [shanten_reference(h, m) for h, m in batch]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(complete_size=True))
def test_minus_one_exactly_when_complete(hm):
    h, melds = hm
    complete = bool(H.is_complete(h, seven_pairs=melds == 0))
    assert (shanten(h, melds) == -1) == complete


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands(complete_size=False))
def test_zero_exactly_when_ready_and_ukeire_is_the_wait_set(hm):
    h, melds = hm
    # owned = 0: a wait on a fifth copy counts, as in the shanten formula
    waits = H.wait_mask(h, seven_pairs=melds == 0, owned=np.zeros(34, np.int8))
    s = shanten(h, melds)
    if waits.any():
        assert s == 0
    elif s == 0:
        # The formula's one blind spot (module docstring): a partial set completed only by a fifth copy.
        assert (h == 4).any()
    base, acc, improving = ukeire(h[None], [melds], np.full((1, 34), 4))
    brute = np.array([h[t] < 4 and shanten_reference(h + np.eye(34, dtype=np.int8)[t], melds) < s for t in range(34)])
    assert base[0] == s
    assert improving[0].tolist() == brute.tolist()
    assert acc[0] == 4 * int(brute.sum())
    if s == 0:
        assert (improving[0] | (h >= 4)).tolist() == (waits | (h >= 4)).tolist()


@pytest.mark.parametrize(
    "text, melds, expected",
    [
        ("123456789p1234s", 0, 0),  # four sets + 4s: a single wait on 1s or 4s after the discard
        ("11223344556677s", 0, -1),  # complete (seven pairs and standard)
        ("1122334455667s", 0, 0),
        ("147p258s369s567z1p", 0, 4),  # head 1p1p and three two-tile partial sets: 8 - 3 - 1
        ("1111222233334s", 0, 0),  # 111 222 333 + 1234 as 123 + 4: ready
        ("5z", 4, 0),
        ("55z", 4, -1),
        ("19p5z", 3, 2),
    ],
)
def test_shanten_known_values(text, melds, expected):
    assert shanten(counts(text), melds) == expected
    assert shanten_reference(counts(text), melds) == expected


def test_shanten_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        shanten(np.zeros(33, np.int8))
    with pytest.raises(ValueError, match="0..4"):
        shanten(np.full(34, 5, np.int8))


# ------------------------------------------------------------------------------------------ decoding


def _random_game_states(seed: int, tables: int = 24, liang_bias: float = 0.5):
    """Yield (engine, live tables) at every decision of random games that like to declare 亮倒."""
    eng = Engine("kawuxing3", tables, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not eng.done.all():
        live = np.flatnonzero(~eng.done)
        yield eng, live
        m = eng.mask
        a = (rng.random(m.shape) * m).argmax(1)
        for b in live:
            li = np.flatnonzero(m[b, A.LIANG : A.KONG_SELF])
            if len(li) and rng.random() < liang_bias:
                a[b] = A.LIANG + li[0]
        eng.step(a)


def test_obsview_decodes_the_engine_state():
    view = ObsView("kawuxing3")
    seen_reveal = seen_melds = 0
    for eng, live in _random_game_states(5):
        st_ = eng.state
        seats = st_.actor[live].astype(np.int64)
        d = view.decode(encode(eng, seats, live))
        assert (d.hand == st_.hand[live, seats]).all()
        assert (d.phase == st_.phase[live]).all()
        assert (d.wall_left == (st_.back - st_.front)[live]).all()
        for k in range(3):
            abs_seat = (seats + k) % 3
            assert (d.meld_tiles[:, k] == st_.melded[live, abs_seat]).all()
            assert (d.n_melds[:, k] == st_.n_melds[live, abs_seat]).all()
            assert (d.revealed[:, k] == st_.revealed[live, abs_seat]).all()
            assert (d.discards[:, k] == np.stack([np.bincount(r[r >= 0], minlength=34) for r in st_.river[live, abs_seat]])).all()
        # Own hand + what it sees never exceeds four copies, and unseen copies are never negative.
        assert (d.visible() <= 4).all() and (d.live() >= 0).all()
        seen_reveal += int(d.revealed[:, 1:].sum())
        seen_melds += int(d.n_melds.sum())
    assert seen_reveal > 0 and seen_melds > 0  # the decoder was exercised on both


# ------------------------------------------------------------------------------------------ heuristic


def _wall(dealer_hand14: str, seed: int = 0, variant: str = "kawuxing3") -> list[int]:
    """A wall whose dealer (seat 0) is dealt ``dealer_hand14`` (the 14th tile last); the rest shuffled."""
    eng = Engine(variant, 1)
    want = parse_tiles(dealer_hand14)
    rest = list(eng.tiles)
    for t in want:
        rest.remove(t)
    rest = list(np.random.default_rng(seed).permutation(rest))
    n = eng.n
    return want[:13] + rest[: 13 * (n - 1)] + [want[13]] + rest[13 * (n - 1):]


def _first_decision(dealer_hand14: str, agent=None):
    eng = Engine("kawuxing3", 1)
    eng.reset(walls=[_wall(dealer_hand14)])
    agent = agent or HeuristicAgent("kawuxing3")
    obs = encode(eng, eng.state.actor)
    return int(agent.act(obs, eng.mask)[0]), eng


def test_heuristic_declares_liang_with_live_waits():
    # 123p 456p 789p 123s + 5z 7z: discarding either dragon leaves a single wait with three live copies.
    act, eng = _first_decision("123456789p123s5z7z")
    assert A.LIANG <= act < A.KONG_SELF
    assert A.action_name(act) in ("liang:5z", "liang:7z")


def test_heuristic_liang_threshold_counts_live_copies():
    # 123p 456p 789p 46s 55z + 7z: discarding 7z waits on 5s (卡五星, worth 2, so not a 1x hand), 4 live copies.
    act, _ = _first_decision("123456789p46s55z7z")
    assert A.action_name(act) == "liang:7z"
    act, _ = _first_decision("123456789p46s55z7z", HeuristicAgent("kawuxing3", liang_min_live=5))
    assert A.action_name(act) == "discard:7z"


def test_heuristic_takes_a_concealed_kong_that_costs_nothing():
    # Four 5z and a complete rest: the kong keeps the hand ready and is paid 2 by each opponent at once.
    act, _ = _first_decision("5555z123p456p789p1s")
    assert act == A.KONG_SELF + parse_tiles("5z")[0]


def test_heuristic_wins_whenever_the_mask_allows():
    act, _ = _first_decision("123456789p123s55z")
    assert act == A.WIN


def test_heuristic_discards_the_isolated_tile():
    # One tile away from ready except for the lone 9s: it is the only discard that keeps shanten 0.
    act, _ = _first_decision("123456789p12s55z9s")
    assert act in (parse_tiles("9s")[0], A.LIANG + parse_tiles("9s")[0])


def _revealed_waits(eng, b: int, s: int) -> np.ndarray:
    st_ = eng.state
    h = st_.hand[b, s].astype(np.int8)
    return H.wait_mask(h, seven_pairs=st_.n_melds[b, s] == 0, kinds=eng.kinds, owned=(h + st_.melded[b, s]).astype(np.int8))


def test_heuristic_decisions_follow_its_rules_in_play():
    """Over whole games: every action legal; a revealed player's wait is fed only when nothing else is legal;
    discards keep the lowest shanten among safe discards; pongs lower the shanten, passed pongs would not."""
    agent = HeuristicAgent("kawuxing3")
    checked = {"discard": 0, "pong": 0, "pass_pong": 0, "avoided": 0}
    eng = Engine("kawuxing3", 32, record_events=False)
    eng.reset(seed=11)
    rng = np.random.default_rng(3)
    while not eng.done.all():
        st_ = eng.state
        live = np.flatnonzero(~eng.done)
        obs = encode(eng, st_.actor[live], live)
        acts = agent.act(obs, eng.mask[live])
        assert eng.mask[live, acts].all()
        for j, b in enumerate(live):
            s, a, m = int(st_.actor[b]), int(acts[j]), eng.mask[b]
            h = st_.hand[b, s].astype(np.int8)
            nm = int(st_.n_melds[b, s])
            if st_.phase[b] in (S.TURN, S.CLAIMED) and a < A.KONG_SELF and not st_.revealed[b, s]:
                danger = np.zeros(34, bool)
                for o in range(3):
                    if o != s and st_.revealed[b, o]:
                        danger |= _revealed_waits(eng, b, o)
                legal = np.flatnonzero(m[:34] | m[34:68])
                safe = [t for t in legal if not danger[t]]
                t = a % 34
                if safe:
                    assert not danger[t]
                    checked["avoided"] += bool(danger[legal].any())
                    after = np.stack([h - np.eye(34, dtype=np.int8)[u] for u in safe])
                    assert shanten(h - np.eye(34, dtype=np.int8)[t], nm) == shanten(after, nm).min()
                    checked["discard"] += 1
            if st_.phase[b] == S.CLAIM and m[A.PONG] and not m[A.WIN]:
                c = int(st_.claim_tile[b])
                hp = h.copy()
                hp[c] -= 2
                best = min(shanten(hp - np.eye(34, dtype=np.int8)[u], nm + 1) for u in np.flatnonzero(hp))
                if a == A.PONG:
                    assert best < shanten(h, nm)
                    checked["pong"] += 1
                elif a == A.PASS:
                    assert best >= shanten(h, nm)
                    checked["pass_pong"] += 1
        # Mix in random play so that opponents reveal weak hands and feed claims.
        full = np.zeros(eng.batch_size, np.int64)
        full[live] = acts
        rnd = (rng.random(eng.mask.shape) * eng.mask).argmax(1)
        mix = rng.random(eng.batch_size) < 0.5
        full[mix] = rnd[mix]
        eng.step(full)
    assert checked["discard"] > 100 and checked["pong"] + checked["pass_pong"] > 0 and checked["avoided"] > 0


def test_heuristic_beats_random_by_a_clear_margin():
    agents = [make_agent("heuristic"), make_agent("random", seed=4)]
    res = play_duplicate(agents, walls=16, seed=2024, batch_size=96)
    (pair,) = pairwise(res)
    assert pair["a"] == "heuristic"
    # Measured on these 16 walls (96 hands): +5.94 ± 0.86 per hand; random rarely wins and often feeds 包胡.
    assert pair["margin"] > 3.0
    assert pair["margin"] - pair["ci95"] > 2.0


# ------------------------------------------------------------------------------------------ random, registry


def test_random_agent_is_legal_seeded_and_spread():
    mask = np.zeros((4000, A.N_ACTIONS), bool)
    mask[:, [3, 40, 107]] = True
    a1 = make_agent("random", seed=9).act(None, mask)
    a2 = make_agent("random", seed=9).act(None, mask)
    assert (a1 == a2).all()
    counts_ = np.bincount(a1, minlength=A.N_ACTIONS)[[3, 40, 107]]
    assert counts_.sum() == 4000 and counts_.min() > 1200
    with pytest.raises(ValueError, match="at least one legal"):
        make_agent("random").act(None, np.zeros((1, A.N_ACTIONS), bool))


def test_make_agent_rejects_unknown_names():
    with pytest.raises(ValueError, match="unknown agent 'nobody'.*random, heuristic"):
        make_agent("nobody")
    with pytest.raises(ValueError, match="not found"):
        make_agent("missing_checkpoint.pt")


def test_heuristic_plays_kawuxing4():
    agents = [make_agent("heuristic", "kawuxing4"), make_agent("random", "kawuxing4", seed=1)]
    res = play_duplicate(agents, "kawuxing4", load_rules("kawuxing4"), walls=2, seed=1, seat_plan=[(0, 1, 1, 1), (1, 0, 1, 1)])
    assert len(res.records) == 4
    assert all(abs(sum(r.deltas)) < 1e-9 for r in res.records)


# ------------------------------------------------------------------------------------------ policy


def test_policy_agent_refuses_a_mismatched_checkpoint(tmp_path):
    pytest.importorskip("torch")
    from agents.players.policy import CheckpointMismatch, PolicyAgent, checkpoint_payload, make_head, make_trunk, save_checkpoint
    from mjenv.encoding.observation import ObservationEncoder

    opts = load_rules("kawuxing3")
    shape = ObservationEncoder("kawuxing3", opts).shape
    payload = checkpoint_payload(make_trunk(shape, 8, 16), make_head(16), variant="kawuxing3", options=opts,
                                 obs_shape=shape, arch={"channels": 8, "hidden": 16})
    path = save_checkpoint(tmp_path / "tiny.pt", payload)

    with pytest.raises(CheckpointMismatch, match=r"kaikou: trained 'hard', asked 'none'"):
        make_agent(str(path), "kawuxing3", {"kaikou": "none"})
    with pytest.raises(CheckpointMismatch, match=r"variant 'kawuxing3' \(asked for 'kawuxing4'\)"):
        make_agent(str(path), "kawuxing4")
    bad = dict(payload, obs_version="mjenv-obs-v0")
    with pytest.raises(CheckpointMismatch, match="observation encoding 'mjenv-obs-v0'"):
        PolicyAgent(bad, "kawuxing3", opts)
    with pytest.raises(ValueError, match="mjenv-policy-v1 checkpoint"):
        (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
        make_agent(str(tmp_path / "junk.pt"))

    # Options may differ only when asked for; the agent then plays legal moves.
    loose = make_agent(str(path), "kawuxing3", {"kaikou": "none"}, strict_options=False)
    agent = make_agent(str(path), "kawuxing3")
    eng = Engine("kawuxing3", 8)
    eng.reset(seed=3)
    for _ in range(30):
        if eng.done.all():
            break
        obs = encode(eng, eng.state.actor)
        acts = agent.act(obs, eng.mask)
        live = ~eng.done
        assert eng.mask[live, acts[live]].all()
        assert (loose.act(obs, eng.mask)[live] >= 0).all()
        eng.step(np.where(live, acts, 0))
