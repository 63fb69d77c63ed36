"""Plan-committed rollouts for the search: the searching seat plays a whole-hand plan, the other seats the policy.

This module owns the *plans* a search can commit its seat to (:data:`PLANS`: each a setting of the compiled
player's plan credits or 亮倒 rule, :func:`agents.players.fastplay.player_config`), :func:`plan_moves` (each plan's
move now) and :func:`rollout_plans`, the rollout loop in which, table by table, one seat plays its plan for the rest
of the hand while every other decision is the rollout player's own (the compiled improved player,
:class:`agents.players.fasthead.FastHeadPlayer`, or the compiled player :class:`agents.players.fastplay.FastPlayer`).
No compiled code is new: each step splits the live tables by whether the acting seat is a committed one and calls
the compiled deciders on each part, a plan's with its configuration in place of the player's
(:func:`agents.players.fastplay.play_out`'s contract: the decider returns how many tables it decided for).

Measured (docs/experiments/expert-iteration.md, "Plan-committed candidates"): committing a seat to any of these
plans where its move differs from the improved player's loses 0.4–1.0 per decision on average, and a search over
sampled worlds choosing when to commit gains a few thousandths per seat-hand; ``policy-search:plans=dama,plan_z=1``
was level with ``policy-search`` on 1,000 declared walls (+0.010 ± 0.019 paired).

The plans (Kawuxing's fans: 清一色 ×4, 碰碰胡 ×2; docs/experiments/heuristic.md measured that a plan pays only when it
is played as a plan, for the whole hand):

* ``plain``: no plan credits (the standard shape and seven pairs only);
* ``flush``: the one-suit flush credited 8 shanten steps (forced: the suit of the lowest plan shanten);
* ``flush4``: the flush credited 4 steps (taken when it is at most 4 steps behind the plain hand);
* ``triplets``: all triplets credited 8 steps (forced; pongs follow the plan's cost);
* ``triplets2``: all triplets credited 2 steps;
* ``dama``: never declare 亮倒 (stay concealed, waits hidden, for the rest of the hand);
* ``reveal``: declare 亮倒 at the first ready discard with a live wait (whatever the wall left).

A plan is played by the rollout player's own decider with the plan's configuration (``by="player"``: the
improved player's head still re-ranks the plan's shortlist) or by the compiled player alone (``by="fast"``).
"""

from __future__ import annotations

import numpy as np

from agents.players.fastkernels import PC_FLUSH, PC_LIANG_LIVE, PC_LIANG_WALL, PC_TRIP
from agents.players.fastplay import decide_tables
from mjenv.engine import state as S

__all__ = ["PLANS", "plan_configs", "plan_moves", "rollout_plans", "parse_plans"]

PLANS = {"plain": {PC_FLUSH: -1, PC_TRIP: 0}, "flush": {PC_FLUSH: 8, PC_TRIP: 0}, "flush4": {PC_FLUSH: 4, PC_TRIP: 0},
         "triplets": {PC_FLUSH: -1, PC_TRIP: 8}, "triplets2": {PC_FLUSH: -1, PC_TRIP: 2},
         "dama": {PC_LIANG_WALL: 1 << 40}, "reveal": {PC_LIANG_LIVE: 1, PC_LIANG_WALL: 0}}
"""Plan name -> the compiled player's settings it overrides (``fastkernels.PC_*`` index -> value)."""


def parse_plans(value) -> tuple[str, ...]:
    """The plan names of a spec value (``"flush+plain"``, a sequence, or empty for none); unknown names refused."""
    if value is None:
        return ()
    names = tuple(v for v in (value.split("+") if isinstance(value, str) else value) if v)
    bad = [n for n in names if n not in PLANS]
    if bad:
        raise ValueError(f"plans: unknown plan {bad[0]!r} (plans: {', '.join(PLANS)})")
    if len(set(names)) != len(names):
        raise ValueError(f"plans: a plan named twice in {'+'.join(names)}")
    return names


def plan_configs(cfg: np.ndarray, plans) -> np.ndarray:
    """int64 [len(plans), N_PC]: the compiled player's configuration ``cfg`` with each plan's credits."""
    out = np.repeat(np.asarray(cfg, np.int64)[None, :], len(plans), axis=0)
    for i, name in enumerate(plans):
        for k, v in PLANS[name].items():
            out[i, k] = v
    return out


def plan_moves(player, engine, tables, cfgs: np.ndarray) -> np.ndarray:
    """int64 [len(tables), len(cfgs)]: the move ``player``'s decider makes at each of ``engine``'s ``tables`` under
    each plan configuration (a row of ``cfgs``): the first move of each plan candidate."""
    tables = np.ascontiguousarray(tables, dtype=np.int64).reshape(-1)
    acts = np.full(engine.batch_size, -1, np.int64)
    decide, args = _policy_call(player, engine, acts)
    args[3] = tables
    out = np.empty((len(tables), len(cfgs)), np.int64)
    for p in range(len(cfgs)):
        args[4] = np.ascontiguousarray(cfgs[p], np.int64)
        decide(*args)
        out[:, p] = acts[tables]
    return out


def _policy_call(player, engine, acts):
    """(decider, args with the index slot at position 3) of ``player``'s compiled rollout decider on ``engine``."""
    from agents.players.fasthead import FastHeadPlayer, head_decide_tables

    if isinstance(player, FastHeadPlayer):
        return head_decide_tables, list(player._args(engine, engine._all, acts))
    return decide_tables, [engine._b8, engine._b16, engine.mask, engine._all, player.cfg, player.kc, player._tab,
                           player._tabs, player._best, player._gain, acts]


def rollout_plans(engine, player, seat: np.ndarray, plan: np.ndarray, cfgs: np.ndarray, by: str = "player",
                  max_steps: int = 10_000) -> int:
    """Play every live table of ``engine`` to the end of its hand: at table ``b`` seat ``seat[b]`` plays plan
    ``plan[b]`` (a row of ``cfgs``, :func:`plan_configs`; -1: no plan) with the compiled player, every other
    decision is ``player``'s (a :class:`~agents.players.fasthead.FastHeadPlayer` or
    :class:`~agents.players.fastplay.FastPlayer`).  ``by``: the plan's moves are ``player``'s decider's under the
    plan's configuration (``"player"``) or the compiled player's alone (``"fast"``).  Returns the number of
    decisions made."""
    if by not in ("player", "fast"):
        raise ValueError(f"by: 'player' or 'fast', got {by!r}")
    B = engine.batch_size
    seat = np.asarray(seat, np.int64).reshape(-1)
    plan = np.asarray(plan, np.int64).reshape(-1)
    if seat.shape[0] != B or plan.shape[0] != B:
        raise ValueError(f"seat, plan: one entry per table ({B}), got {seat.shape[0]} and {plan.shape[0]}")
    if len(plan) and plan.max(initial=-1) >= len(cfgs):
        raise ValueError(f"plan: index {int(plan.max())} beyond the {len(cfgs)} plan configurations")
    fast = getattr(player, "fast", player)
    fast._check(engine)
    acts = np.zeros(B, np.int64)
    decide, args = _policy_call(player, engine, acts)
    committed = np.flatnonzero(plan >= 0)
    if not len(committed):
        return _loop(engine, lambda: decide(*args), acts, max_steps)
    b8 = engine._b8
    cseat = seat[committed]
    cplan = plan[committed]
    others = np.ones(B, bool)
    by_plan = [(p, committed[cplan == p], cseat[cplan == p]) for p in np.unique(cplan)]
    ocfg = [np.ascontiguousarray(cfgs[p], np.int64) for p, _, _ in by_plan]
    pargs = list(args)  # the same decider under a plan's configuration (slot 4)

    def step() -> int:
        others[:] = True
        n = 0
        for (p, tabs, seats), cfg in zip(by_plan, ocfg):
            mine = tabs[b8[tabs, S.O8_ACTOR] == seats]
            if len(mine):
                others[mine] = False
                if by == "fast":
                    n += decide_tables(b8, engine._b16, engine.mask, mine, cfg, fast.kc, fast._tab, fast._tabs,
                                       fast._best, fast._gain, acts)
                else:
                    pargs[3], pargs[4] = mine, cfg
                    n += decide(*pargs)
        args[3] = np.flatnonzero(others)
        return n + decide(*args)

    return _loop(engine, step, acts, max_steps)


def _loop(engine, decide, acts, max_steps: int) -> int:
    """Step ``engine`` with ``acts`` after each ``decide()`` (tables decided for) until no table is live."""
    total = 0
    for _ in range(max_steps):
        k = decide()
        if not k:
            return total
        total += k
        engine.step(acts)
    raise RuntimeError(f"rollout: hands still live after {max_steps} steps")
