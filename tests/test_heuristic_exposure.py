"""The heuristic's deal-in exposure (Diedaohu, Liuwei's 陪冲 table) and 园子 balances, on constructed hands:
visible flush / 风清 threats steer its discard at equal shanten, its own balance caps what it can lose, and a
busted player is exposed to nothing."""

from __future__ import annotations

import numpy as np
import pytest

from agents.players.heuristic import HeuristicAgent, wait_ways
from mjenv.encoding.observation import encode
from mjenv.tiles import parse_tiles
from tests.test_heuristic_families import deal, decide

# 123s 456s 789s 111z plus two lone terminals: throwing either leaves a single wait on the other, same shanten
# and the same live count, so only the tie-breaks choose between 1m and 9p.
HAND = "123s456s789s111z1m9p"
ONE_M, NINE_P = parse_tiles("1m")[0], parse_tiles("9p")[0]


def with_melds(agent: HeuristicAgent, obs: np.ndarray, seat: int, pongs: str) -> np.ndarray:
    """``obs`` with relative seat ``seat`` showing a pong of each tile of ``pongs``."""
    out = obs.copy()
    enc = agent.view.encoder
    melds = out[:, enc.slices["melds"], :].reshape(1, agent.n, 5, 34)
    for t in parse_tiles(pongs):
        melds[0, seat, 0, t] = 1
    out[:, enc.slices["melds"], :] = melds.reshape(1, -1, 34)
    return out


def with_balance(agent: HeuristicAgent, obs: np.ndarray, seat: int, balance: float) -> np.ndarray:
    """``obs`` with relative seat ``seat``'s 园子 balance set (and its busted flag where it is 0)."""
    out = obs.copy()
    enc = agent.view.encoder
    rows = out[:, enc.slices["bankroll"], :]
    rows[:, seat, :] = balance / enc.bankroll
    rows[:, agent.n + seat, :] = 1.0 if balance <= 0 else 0.0
    out[:, enc.slices["bankroll"], :] = rows
    return out


@pytest.mark.parametrize("variant", ["liuwei", "diedaohu"])
def test_visible_flush_steers_the_discard(variant):
    e = deal(variant, HAND)
    agent = HeuristicAgent(variant, exposure_weight=3)
    obs = encode(e, e.state.actor)
    natural = decide(e, agent, obs)
    assert natural in (ONE_M, NINE_P)
    other = NINE_P if natural == ONE_M else ONE_M
    # The next player shows two pongs of the natural discard's suit and nothing else: a flush threat there.
    threat = "25m" if natural == ONE_M else "36p"
    patched = with_melds(agent, obs, 1, threat)
    exp = agent.exposure(agent.view.decode(patched), np.array([0]))
    assert exp[0, natural] > 0 and exp[0, other] == 0
    assert decide(e, agent, patched) == other
    # Off, or with only one meld shown (too far from ready), the tie-break stands.
    assert decide(e, HeuristicAgent(variant, exposure_weight=0), patched) == natural
    assert decide(e, agent, with_melds(agent, obs, 1, threat[0] + threat[-1:])) == natural
    # The family defaults: on in Diedaohu, off in Liuwei (measured, docs/experiments/heuristic.md).
    default = HeuristicAgent(variant)
    assert decide(e, default, patched) == (other if variant == "diedaohu" else natural)


def test_liuwei_exposure_is_the_difference_over_the_peichong_amount():
    """Liuwei's 陪冲: dealing in a 混一色 costs the discarder 12 while each other player pays 6, so the extra is 6
    (at the 50-scale); Diedaohu's discarder pays the whole 2 alone."""
    e = deal("liuwei", HAND)
    agent = HeuristicAgent("liuwei")
    obs = with_melds(agent, encode(e, e.state.actor), 1, "25m1z")  # 混一色 threat: manzu and an honor pong
    d = agent.view.decode(obs)
    exp = agent.exposure(d, np.array([0]))
    ways = wait_ways(d.live()) * agent.kinds
    kinds = (np.arange(34) < 9) | (np.arange(34) >= 27)
    share = min(2.0 * ways[0, ONE_M] / ways[0, kinds].sum(), 1.0)
    assert exp[0, ONE_M] == pytest.approx(0.6 * 6.0 * share)  # three melds: ready with chance 0.6
    de = deal("diedaohu", HAND)
    dagent = HeuristicAgent("diedaohu")
    dd = dagent.view.decode(with_melds(dagent, encode(de, de.state.actor), 1, "25m1z"))
    assert dagent.exposure(dd, np.array([0]))[0, ONE_M] == pytest.approx(0.6 * 2.0 * share)


def test_balances_cap_the_exposure_and_a_busted_player_has_none():
    e = deal("liuwei", HAND)
    agent = HeuristicAgent("liuwei")
    obs = encode(e, e.state.actor)
    d = agent.view.decode(obs)
    assert d.balance is not None and np.allclose(d.balance, 50.0) and not d.busted.any()
    threat = with_melds(agent, obs, 1, "25m1z")
    full = agent.exposure(agent.view.decode(threat), np.array([0]))[0, ONE_M]
    # With 8 left A can lose at most 8 as the discarder and 6 as a 陪冲 player: the extra is 2, not 6.
    low = agent.exposure(agent.view.decode(with_balance(agent, threat, 0, 8.0)), np.array([0]))[0, ONE_M]
    assert low == pytest.approx(full * 2.0 / 6.0)
    # Busted: no one may win on A's discards, so nothing is exposed and the tie-break stands.
    busted = with_balance(agent, threat, 0, 0.0)
    bd = agent.view.decode(busted)
    assert bd.busted[0, 0] and not agent.exposure(bd, np.array([0])).any()
    # In play (Diedaohu under 园子, where the exposure weighs): the visible flush steers the discard while A has
    # money, not once A is busted.
    de = deal("diedaohu", HAND)
    dagent = HeuristicAgent("diedaohu", {"bankroll": 50})
    dobs = encode(de, de.state.actor)
    natural = decide(de, dagent, with_balance(dagent, dobs, 0, 50.0))
    threatened = with_melds(dagent, dobs, 1, "25m" if natural == ONE_M else "36p")
    assert decide(de, dagent, with_balance(dagent, threatened, 0, 50.0)) != natural
    assert decide(de, dagent, with_balance(dagent, threatened, 0, 0.0)) == natural
    # Unlimited money (Diedaohu's default 紧淌) decodes no balances.
    de = deal("diedaohu", HAND)
    assert HeuristicAgent("diedaohu").view.decode(encode(de, de.state.actor)).balance is None


def test_liuwei_fengqing_is_a_liability_like_baopai():
    """A Liuwei 风清 on a discard takes the discarder's whole balance (the others pay 16): with an opponent showing
    three honor pongs and nothing else the player throws no honor while another tile is legal, even at a cost in
    shanten."""
    e = deal("liuwei", "123s456s789s11z2z3m4m")
    agent = HeuristicAgent("liuwei")
    obs = encode(e, e.state.actor)
    assert decide(e, agent, obs) == parse_tiles("2z")[0]  # the lone honor; 34m and the 1z pair make it ready
    patched = with_melds(agent, obs, 2, "567z")
    assert agent.danger(agent.view.decode(patched), np.array([0]))[0, 27:].all()
    assert decide(e, agent, patched) < 27
    # A busted player cannot be won on: no liability.
    assert not agent.danger(agent.view.decode(with_balance(agent, patched, 0, 0.0)), np.array([0])).any()
