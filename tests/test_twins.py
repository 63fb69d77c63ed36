"""The compiled player (``fast``, agents/players/fastplay.py) against its Python twin ``heuristic-flush``, in all 7 variants.

``heuristic-flush`` plays every seat of self-play hands; at each decision with two or more legal actions the
compiled player decides the same engine state, and the two actions are compared.  The agreement must reach the
variant's floor (``FLOORS``, set a little under what these fixed walls give: ``bench/twins.py`` measures it over
20,000 decisions per variant, docs/search.md), and every difference must be of a kind explained here:

* **tie** — the two discards score exactly the same under the ranking both players compute (plan shanten, then
  live improving tiles, then the least connected tile, then the most visible one; e.g. a lone 5z and a lone 1p
  with 2 and 3 live copies: -0.01 x connection - 0.001 x live is 0.002 - 0.002 against 0.003 - 0.003).  The
  compiled player keeps the lowest tile id; the Python choice breaks the tie in float32, whose rounding picks
  either (its ranking, :meth:`~agents.players.heuristic.HeuristicAgent.candidates`, is float64 like the compiled one).
  Found in every variant, 0.1-0.4 % of the decisions.
* **exposure** (Diedaohu only) — the Python player weighs a discard's deal-in exposure to an opponent's visible
  flush or 风清 against ukeire at equal shanten (``exposure_weight`` 3; Liuwei's is 0); the compiled player leaves
  the exposure model out.  The Python player with ``exposure_weight=0`` then plays the compiled player's move (or
  one that ties with it exactly, as above).
  About 1.4 % of Diedaohu decisions.

Nothing else differs: a difference of any other kind fails the test, naming the decision.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.players.fastplay import FastPlayer
from agents.players.heuristic import HeuristicAgent, flush_variant_kwargs
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encoder_for
from mjenv.engine.core import Engine

# Agreement over decisions with >= 2 legal actions, per variant.  Measured (seed 0, 32 tables) over this test's 2,000
# decisions and by bench/twins.py over 20,000 (docs/search.md, "The compiled player and its twin"): every floor sits
# under both.
FLOORS = {"kawuxing3": 0.99, "kawuxing4": 0.993, "gejiu": 0.995, "diedaohu": 0.975, "yangzhou": 0.996,
          "yangzhou_new": 0.996, "liuwei": 0.99}


def twin_decisions(variant: str, decisions: int, tables: int = 32, seed: int = 0):
    """Yield ``(obs [1, C, 34], mask [1, 111], heuristic-flush's action, the compiled player's action)`` at each of
    the first ``decisions`` decisions with two or more legal actions of ``heuristic-flush`` self-play (walls
    ``(seed, i)``, the dealer rotating; a new batch of walls when every table's hand is over)."""
    heur = make_agent("heuristic-flush", variant)
    fast = FastPlayer(variant, heur.opts)
    eng = Engine(variant, tables, options=heur.opts, record_events=False)
    enc = encoder_for(eng)
    deal = 0
    eng.reset(seed=seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    n = 0
    while n < decisions:
        if eng.done.all():
            deal += 1
            eng.reset(seed=seed, table_ids=np.arange(tables) + deal * tables, dealer=np.arange(tables) % eng.n)
        live = np.flatnonzero(~eng.done)
        obs = enc.encode(eng.state, eng.state.actor[live], live)
        mask = eng.mask[live]
        ah = heur.act(obs, mask)
        af = fast.decide(eng)[live]
        for j in np.flatnonzero(mask.sum(1) >= 2)[: decisions - n]:
            yield obs[j : j + 1], mask[j : j + 1], int(ah[j]), int(af[j])
            n += 1
        acts = np.zeros(tables, np.int64)
        acts[live] = ah
        eng.step(acts)


def _tie(player: HeuristicAgent, obs, mask, choice: int, other: int) -> bool:
    """Whether two discards score exactly the same in ``player``'s float64 ranking (the compiled player's)."""
    _, entries = player._play(player.view.decode(obs), mask, True)
    values = {int(a): float(v) for _, acts, vals in entries for a, v in zip(acts, vals)}
    return choice < A.LIANG and other < A.LIANG and choice in values and other in values and values[choice] == values[other]


def difference_kind(obs, mask, ah: int, af: int, heur: HeuristicAgent, no_exposure) -> str:
    """Which explained kind a difference is (see the module docstring), or ``"unexplained"``."""
    if _tie(heur, obs, mask, ah, af):
        return "tie"
    if no_exposure is not None:
        plain = int(no_exposure.act(obs, mask)[0])
        if plain == af or _tie(no_exposure, obs, mask, plain, af):  # the exposure model (then, maybe, a tie)
            return "exposure"
    return "unexplained"


def agreement(variant: str, decisions: int, seed: int = 0) -> tuple[int, int, dict[str, int]]:
    """``(same, decisions, {kind: count})`` for :func:`twin_decisions` (the kinds of the differences)."""
    heur = make_agent("heuristic-flush", variant)
    params = flush_variant_kwargs(variant)
    no_exposure = None
    if heur._exposure_w:
        no_exposure = HeuristicAgent(variant, heur.opts, **{**params, "exposure_weight": 0.0})
    same = total = 0
    kinds: dict[str, int] = {}
    for obs, mask, ah, af in twin_decisions(variant, decisions, seed=seed):
        total += 1
        if ah == af:
            same += 1
            continue
        kind = difference_kind(obs, mask, ah, af, heur, no_exposure)
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "unexplained":
            kinds.setdefault("first unexplained", f"heuristic-flush {A.action_name(ah)}, fast {A.action_name(af)}")
    return same, total, kinds


@pytest.mark.parametrize("variant", sorted(FLOORS))
def test_the_compiled_player_plays_heuristic_flush_moves(variant):
    same, total, kinds = agreement(variant, 2000)
    assert total == 2000
    assert same / total >= FLOORS[variant], (same, total, kinds)
    assert "unexplained" not in kinds, kinds
    assert set(kinds) <= ({"tie", "exposure"} if variant == "diedaohu" else {"tie"}), kinds
