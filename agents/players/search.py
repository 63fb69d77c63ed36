"""The search agent: candidate actions judged by rollouts over sampled worlds (perfect-information Monte Carlo).

This module owns :class:`SearchAgent` (registered as ``search``).  At a decision with more than one sensible
choice it

1. lists the candidates: the compiled player's (:class:`agents.players.fastplay.FastPlayer`) ranked actions, at most
   ``candidates`` of them — on its own turn the discards of the lowest plan shanten (the heuristic's own
   shortlist, best first) plus a 亮倒 or kong alternative where the mask offers one; in a claim window pass and
   every legal pong / chi / kong; in Gejiu both face-up kong tiles.  A legal win is always taken, unsearched
   (passing one measured a loss in every family, docs/experiments/heuristic.md);
2. samples ``worlds`` worlds with :meth:`mjenv.engine.core.Engine.sample_worlds` — everything the seat cannot
   see redrawn consistently with what it has seen — and gives **every candidate the same worlds** (common random
   numbers: a candidate's edge is not drowned in the luck of the draw);
3. plays each candidate in each world, then rolls every table out to the end of the hand with the fast player
   in every seat (one batch for all decisions of the call), and takes the candidate with the best mean hand
   money for the seat — the fast player's own choice unless another beats it by ``z`` standard errors.

Everything is batched: the decisions of one ``act`` call (all the tables an ``evaluate.py`` run plays where
this agent acts) share one rollout engine.  The worlds of a decision are drawn from a seed made of the agent's
``seed`` and the arena's per-decision key (:mod:`agents.players.keyrng`), so a tournament is deterministic for a seed
whatever its batch size; without keys (``mjenv play``) a per-agent decision counter takes the key's place.

Parameters (defaults in :data:`DEFAULTS`): ``candidates`` (3), ``worlds`` per candidate (32), ``search`` — which
decisions are searched (``"discard"``: own turn incl. 亮倒 and kongs, ``"claim"``: claim windows, ``"pick"``:
Gejiu's kong tile; default all three), ``z`` (1.0: the fast player's choice is kept unless another candidate's
mean gain over it, paired by world, exceeds ``z`` standard errors), ``min_wall`` (search only while at least this
many live-wall tiles are left, default 0) and ``budget_ms`` (None: off; else the worlds of a call are cut so that
its searched decisions cost about that many CPU milliseconds each, from the cost per rollout table measured so
far — it makes the agent depend on timing, so it is no longer deterministic).  docs/search.md has the measured
strength and cost per budget.

**Search over a policy** (``policy=CHECKPOINT``, a checkpoint with a ``candidate-features-v1`` departure head): the
compiled improved player (:class:`agents.players.fasthead.FastHeadPlayer`) plays the rollouts in every seat and its
own move is the one to beat (candidate 0; the others follow by its head's predicted gain); ``near`` searches only
the decisions where the head's best predicted gain lies within ``near`` of its threshold, and ``margin`` asks a
candidate for that much money beyond ``z`` standard errors (docs/experiments/expert-iteration.md measures them).
``rollout_policy=CHECKPOINT`` rolls out with another checkpoint's compiled improved player (a cheaper head: the root's
candidates, move and ``near`` stay ``policy``'s), and ``near_tau`` centres the ``near`` window on that predicted gain
in place of the head's ``tau``.
A decision at which the sampler finds no consistent world is not searched: the player's move is played and
``stats["unsampled"]`` counts it.

**Plan candidates** (``plans=dama+flush4``, :mod:`agents.players.searchplans`): at the decisions ``plan_at`` names
(``searched``: those searched anyway; ``reveal``: those with a 亮倒 candidate; ``all``: every decision of a searched
kind with two or more legal moves, the player's move then facing the plans alone), each plan whose move now
differs from the player's is a further candidate, rolled out with the seat playing that plan to the end of the hand
(the other seats the player); it must beat the player's move by ``plan_z`` standard errors (default: the
decision's own ``z``); ``stats["planned"]`` counts the plans played.  The agent stays stateless: a plan chosen now
is searched again at the next decision where its move differs.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from agents.players.fastplay import FastPlayer
from agents.players.keyrng import mix, salt_of
from agents.players.searchbelief import discard_weights, distinct, history_discards, last_discards, resample
from agents.players.searchplans import parse_plans, plan_configs, plan_moves, rollout_plans
from mjenv.encoding import actions as A
from mjenv.engine import state as S

__all__ = ["SearchAgent", "DEFAULTS", "copy_tables", "parse_spec"]

DEFAULTS = {"candidates": 3, "worlds": 32, "search": ("discard", "claim", "pick"), "min_wall": 0, "z": 1.0,
            "budget_ms": None, "policy": None, "near": None, "margin": 0.0, "belief": None, "pool": 4, "belief_net": None, "temper": 1.0,
            "liang_z": None, "belief_moves": "legal", "belief_depth": 1, "keep": "resample", "plans": (),
            "plan_z": None, "plan_at": "searched", "rollout_policy": None, "near_tau": None}
_KINDS = ("discard", "claim", "pick")


def copy_tables(src, src_idx, dst, dst_idx) -> None:
    """Copy whole tables ``src_idx`` of engine ``src`` onto tables ``dst_idx`` of ``dst`` (same variant and rules):
    the packed state, masks, pendings, balances, money and session rows — what the next ``step`` reads."""
    si = np.asarray(src_idx, dtype=np.int64)
    di = np.asarray(dst_idx, dtype=np.int64)
    dst._b8[di] = src._b8[si]
    dst._b16[di] = src._b16[si]
    dst._money[di] = src._money[si]
    dst.mask[di] = src.mask[si]
    dst._pend[di] = src._pend[si]
    dst.balance[di] = src.balance[si]
    dst.match_money[di] = src.match_money[si]
    dst.hand_number[di] = src.hand_number[si]
    dst.session_over[di] = src.session_over[si]
    dst._end_kind[di] = src._end_kind[si]
    dst._ses[di] = src._ses[si]
    dst.sessions._stale(di.tolist())
    dst._evn[di] = 0
    for b in di.tolist():
        list.__setitem__(dst.results, b, None)


def true_outcomes(engine, tables, seats, cand, roll, player) -> np.ndarray:
    """Money of seat ``seats[i]`` when table ``tables[i]``'s acting seat plays each candidate ``cand[i, k]`` on the
    real hidden state and ``player`` rolls the hand out on ``roll`` (at least ``len(tables) * K`` tables): float64
    ``[len(tables), K]``, the truth against which sampled-world values are judged (a padding column of -1 plays the
    first candidate again; ignore it)."""
    K = cand.shape[1]
    play = np.where(cand >= 0, cand, cand[:, :1]).reshape(-1)
    n = len(play)
    copy_tables(engine, np.repeat(tables, K), roll, np.arange(n))
    step = np.zeros(roll.batch_size, np.int64)
    step[:n] = play
    roll._b8[n:, S.O8_PHASE] = S.DONE
    roll.mask[n:] = False
    roll.step(step)
    player.rollout(roll)
    return roll.state.money[:n].reshape(len(tables), K, -1)[np.arange(len(tables)), :, seats]


def _number(key: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"search parameter {key}: {value!r} is not a number") from None


def parse_spec(spec: str) -> dict:
    """Keyword arguments of an agent spec ``search:worlds=32,candidates=4,search=discard+claim``."""
    _, sep, rest = spec.partition(":")
    out: dict[str, Any] = {}
    if not sep or not rest:
        return out
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in DEFAULTS:
            raise ValueError(f"search parameter {item!r}: use name=value with name one of {', '.join(DEFAULTS)}")
        if key == "search":
            out[key] = tuple(v for v in value.split("+") if v)
        elif key == "budget_ms":
            out[key] = None if value in ("", "none", "None") else float(value)
        elif key in ("belief_moves", "keep", "plan_at"):
            out[key] = value
        elif key == "plans":
            out[key] = tuple(v for v in value.split("+") if v)
        elif key == "plan_z":
            out[key] = None if value in ("", "none", "None") else _number(key, value)
        elif key in ("policy", "belief_net", "rollout_policy"):
            out[key] = value or None
        elif key in ("near", "liang_z", "near_tau"):
            out[key] = None if value in ("", "none", "None") else _number(key, value)
        elif key == "belief":
            out[key] = None if value in ("", "none", "None") else _number(key, value)
        elif key in ("z", "margin", "temper"):
            out[key] = _number(key, value)
        else:
            try:
                out[key] = int(value)
            except ValueError:
                raise ValueError(f"search parameter {key}: {value!r} is not an integer") from None
    return out


def _checkpoint_path(policy, field: str = "policy") -> str:
    """A checkpoint path as :func:`agents.make_agent` resolves it (a bare name: the shipped checkpoints' folder,
    ``agents/checkpoints``)."""
    from pathlib import Path

    shipped = Path(__file__).resolve().parents[1] / "checkpoints"
    path = Path(str(policy))
    if not path.exists() and (shipped / path.name).exists():
        path = shipped / path.name
    if not path.exists():
        raise ValueError(f"{field}: checkpoint {str(policy)!r} not found")
    return str(path)


def _rules_of(variant, options):
    from agents.players.base import resolve_rules

    return resolve_rules(variant, options)


class SearchAgent:
    """PIMC search over sampled worlds with the compiled player's rollouts (see the module docstring)."""

    uses_obs = False
    uses_engine = True
    takes_keys = True

    def __init__(self, variant: str = "kawuxing3", options: Any = None, *, candidates: int = DEFAULTS["candidates"],
                 worlds: int = DEFAULTS["worlds"], search=DEFAULTS["search"], min_wall: int = DEFAULTS["min_wall"],
                 z: float = DEFAULTS["z"], budget_ms: float | None = DEFAULTS["budget_ms"], seed: int | None = 0, name: str = "search",
                 policy=DEFAULTS["policy"], near: float | None = DEFAULTS["near"], margin: float = DEFAULTS["margin"],
                 belief: float | None = DEFAULTS["belief"], pool: int = DEFAULTS["pool"], belief_net=DEFAULTS["belief_net"],
                 temper: float = DEFAULTS["temper"], liang_z: float | None = DEFAULTS["liang_z"],
                 belief_moves: str = DEFAULTS["belief_moves"], belief_depth: int = DEFAULTS["belief_depth"],
                 keep: str = DEFAULTS["keep"], plans=DEFAULTS["plans"], plan_z: float | None = DEFAULTS["plan_z"],
                 plan_at: str = DEFAULTS["plan_at"], rollout_policy=DEFAULTS["rollout_policy"],
                 near_tau: float | None = DEFAULTS["near_tau"], **player_settings):
        if int(candidates) < 2:
            raise ValueError(f"candidates: need at least 2 to choose between, got {candidates}")
        if int(worlds) < 1:
            raise ValueError(f"worlds: need at least 1, got {worlds}")
        search = (search,) if isinstance(search, str) else tuple(search)
        bad = [x for x in search if x not in _KINDS]
        if bad:
            raise ValueError(f"search: unknown decision kind {bad[0]!r} (kinds: {', '.join(_KINDS)})")
        if budget_ms is not None and not float(budget_ms) > 0:
            raise ValueError(f"budget_ms: a positive number of milliseconds or None, got {budget_ms}")
        if near is not None and not float(near) >= 0:
            raise ValueError(f"near: a predicted-gain distance >= 0 or None, got {near}")
        if not float(margin) >= 0:
            raise ValueError(f"margin: money >= 0 a candidate must gain beyond z standard errors, got {margin}")
        if belief is not None and not 0 <= float(belief) <= 1:
            raise ValueError(f"belief: the likelihood of a discard the player would not make, in [0, 1], got {belief}")
        if int(pool) < 1:
            raise ValueError(f"pool: worlds sampled per world rolled out, at least 1, got {pool}")
        if near is not None and policy is None:
            raise ValueError("near: reads a departure head's predicted gains; give policy=CHECKPOINT too")
        if rollout_policy is not None and policy is None:
            raise ValueError("rollout_policy: a second head for the rollouts; give policy=CHECKPOINT (the root's) too")
        if near_tau is not None and (near is None or not np.isfinite(float(near_tau))):
            raise ValueError(f"near_tau: the centre of the near window, a finite number with near=DISTANCE, got {near_tau}")
        self.name = name
        if policy is None:
            self.player = FastPlayer(variant, options, **player_settings)  # variant: a name or a mjenv.rules.Rules
        else:
            from agents.players.fasthead import FastHeadPlayer

            if player_settings:
                raise ValueError(f"policy: the compiled improved player takes no {', '.join(player_settings)}")
            self.player = FastHeadPlayer(_checkpoint_path(policy), variant if options is None else
                                         _rules_of(variant, options))
        self.policy = None if policy is None else str(policy)
        self.roller = self.player  # the rollouts' player (``rollout_policy``: another checkpoint's improved player)
        if rollout_policy is not None:
            from agents.players.fasthead import FastHeadPlayer

            self.roller = FastHeadPlayer(_checkpoint_path(rollout_policy, "rollout_policy"), self.player.rules)
        self.rollout_policy = None if rollout_policy is None else str(rollout_policy)
        self.near_tau = None if near_tau is None else float(near_tau)
        self.near = None if near is None else float(near)
        self.margin = float(margin)
        self.belief = None if belief is None else float(belief)
        self.pool = int(pool)
        self.belief_net = None
        if not 0 < float(temper) <= 1:
            raise ValueError(f"temper: the power of the learned belief's weights, in (0, 1], got {temper}")
        self.temper = float(temper)
        if liang_z is not None and not float(liang_z) >= 0:
            raise ValueError(f"liang_z: a number of standard errors >= 0 or None, got {liang_z}")
        self.liang_z = None if liang_z is None else float(liang_z)
        if belief_moves not in ("legal", "discard"):
            raise ValueError(f"belief_moves: 'legal' or 'discard', got {belief_moves!r}")
        self.belief_moves = belief_moves
        if int(belief_depth) < 1:
            raise ValueError(f"belief_depth: discards per opponent the belief reads, at least 1, got {belief_depth}")
        self.belief_depth = int(belief_depth)
        if keep not in ("resample", "distinct"):
            raise ValueError(f"keep: 'resample' or 'distinct', got {keep!r}")
        self.keep = keep
        self.plans = parse_plans(plans)
        if plan_z is not None and not float(plan_z) >= 0:
            raise ValueError(f"plan_z: a number of standard errors >= 0 or None, got {plan_z}")
        self.plan_z = None if plan_z is None else float(plan_z)
        if plan_at not in ("reveal", "searched", "all"):
            raise ValueError(f"plan_at: 'reveal', 'searched' or 'all', got {plan_at!r}")
        self.plan_at = plan_at
        self._plan_cfgs = plan_configs(getattr(self.player, "fast", self.player).cfg, self.plans)
        if belief_net is not None:
            from agents.players.searchbelief import HoldingsBelief, LearnedBelief, ReadinessBelief

            path = _checkpoint_path(belief_net, "belief_net")
            with np.load(path) as f:
                kind = str(f["kind"]) if "kind" in f.files else "hands"
            self.belief_net = {"shanten": ReadinessBelief, "holdings": HoldingsBelief}.get(kind, LearnedBelief)(path)
        self._scratch = None  # the belief's scratch engine, grown on demand
        self.rules = self.player.rules
        self.variant = variant = self.rules.variant
        self.opts = self.player.opts
        self.candidates = int(candidates)
        self.worlds = int(worlds)
        self.search = search
        self.min_wall = int(min_wall)
        self.budget_ms = None if budget_ms is None else float(budget_ms)
        if not float(z) >= 0:
            raise ValueError(f"z: a number of standard errors >= 0, got {z}")
        self.z = float(z)
        self._salt = salt_of(0 if seed is None else seed)
        self._counter = 0
        self._roll = None  # the rollout engine, grown on demand
        self._worlds: dict = {}  # the sample_worlds out= engine per number of worlds
        self._cost_per_table = None  # CPU seconds per rollout table, measured (for budget_ms)
        # statistics: decisions seen, searched, CPU seconds spent searching
        self.stats = {"decisions": 0, "searched": 0, "changed": 0, "cpu_s": 0.0, "rollout_tables": 0, "unsampled": 0,
                      "weighted": 0, "planned": 0}
        self.last_unsampled = ""

    # ------------------------------------------------------------------ engines
    def _engine(self, attr: str, src, size: int):
        from mjenv.engine.core import Engine

        eng = getattr(self, attr)
        if eng is None or eng.batch_size < size:
            eng = Engine(src.variant, max(size, 1), options=src.opts, record_events=False)
            eng.reset(seed=0)  # sets the compiled entry points; every table is overwritten before use
            setattr(self, attr, eng)
        return eng

    def _kind_ok(self, phase: int) -> bool:
        if phase in (S.TURN, S.CLAIMED):
            return "discard" in self.search
        if phase in (S.CLAIM, S.ROB):
            return "claim" in self.search
        if phase == S.PICK:
            return "pick" in self.search
        return False

    # ------------------------------------------------------------------ act
    def act(self, obs, mask, *, engine=None, tables=None, keys=None) -> np.ndarray:
        """One action per row: the acting seats of ``engine``'s ``tables`` (``mask`` their legal masks)."""
        if engine is None or tables is None:
            raise ValueError("agent 'search' samples worlds from the engine: call act(obs, mask, engine=, tables=)")
        t0 = time.process_time()
        tables = np.asarray(tables, dtype=np.int64).reshape(-1)
        R = len(tables)
        if self.policy is None:
            cand, ncand = self.player.candidates(engine, tables, self.candidates)
            near = np.ones(R, bool)
        else:
            cand, ncand, near = self._policy_order(engine, tables)
        out = cand[:, 0].copy()
        if keys is None:
            keys = mix(np.arange(self._counter, self._counter + R, dtype=np.uint64))
            self._counter += R
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        st = engine.state
        wall_left = (st.back[tables] - st.front[tables]).astype(np.int64)
        reveal = np.zeros(R, bool)  # a 亮倒 among the candidates: searched whatever ``near`` says, at ``liang_z``
        if self.liang_z is not None:
            lo = (cand >= A.LIANG) & (cand < A.LIANG + 34) & (np.arange(cand.shape[1])[None, :] < ncand[:, None])
            reveal = lo.any(1)
        todo = [j for j in range(R)
                if ncand[j] >= 2 and (near[j] or reveal[j]) and self._kind_ok(int(st.phase[tables[j]]))
                and wall_left[j] >= self.min_wall]
        self.stats["decisions"] += R
        zs = [self.liang_z if reveal[j] else self.z for j in todo]
        plan_of = None
        if self.plans:
            cand, ncand, plan_of, todo, zs = self._add_plans(engine, tables, cand, ncand, todo, zs, reveal, wall_left)
        if todo:
            n = self.worlds
            if self.budget_ms is not None and self._cost_per_table:
                mean_k = float(np.mean([ncand[j] for j in todo]))
                n = int(max(1, min(n, self.budget_ms / 1e3 / (self._cost_per_table * mean_k))))
            out_t = self._search(engine, tables, cand, ncand, todo, keys, n, zs, plan_of)
            for j, a in zip(todo, out_t):
                out[j] = a
            self.stats["searched"] += len(todo)
        self.stats["cpu_s"] += time.process_time() - t0
        return out

    def _add_plans(self, engine, tables, cand, ncand, todo, zs, reveal, wall_left):
        """The plan candidates (``plans``) appended to each decision's candidates where the plan's move now differs
        from the player's (at the decisions ``plan_at`` names); returns the extended ``cand``, ``ncand``, the plan
        of each candidate (``plan_of``, -1: the player's continuation), ``todo`` and the per-candidate ``zs``."""
        st = engine.state
        R, C = cand.shape
        P = len(self.plans)
        if self.plan_at == "all":
            at = [j for j in range(R) if self._kind_ok(int(st.phase[tables[j]])) and wall_left[j] >= self.min_wall
                  and engine.mask[tables[j]].sum() >= 2]
        elif self.plan_at == "reveal":
            at = [j for j in todo if reveal[j]]
        else:
            at = list(todo)
        cand2 = np.concatenate([cand, np.full((R, P), -1, np.int64)], 1)
        plan_of = np.full((R, C + P), -1, np.int64)
        ncand2 = ncand.copy()
        zmap = dict(zip(todo, zs))
        zvec = {j: np.full(C + P - 1, zmap[j], np.float64) for j in todo}
        if at:
            moves = plan_moves(self.player, engine, tables[at], self._plan_cfgs)  # [len(at), P]
            for i, j in enumerate(at):
                if j not in zvec:  # a decision searched for its plans only: the player's move against them
                    ncand2[j] = 1
                    zvec[j] = np.full(C + P - 1, self.z, np.float64)
                k = int(ncand2[j])
                for p in range(P):
                    if moves[i, p] != cand2[j, 0]:
                        cand2[j, k] = moves[i, p]
                        plan_of[j, k] = p
                        if self.plan_z is not None:
                            zvec[j][k - 1] = self.plan_z
                        k += 1
                ncand2[j] = k
        todo2 = sorted(j for j in zvec if ncand2[j] >= 2)
        return cand2, ncand2, plan_of, todo2, [zvec[j][: ncand2[j] - 1] for j in todo2]

    def _policy_order(self, engine, tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """With ``policy``: the compiled shortlist of each table reordered for the search, the improved player's own
        move first and the others by its head's predicted gain (the shortlist's choice counts 0), at most
        ``candidates``; and whether the decision is *near* (its head's best predicted gain within ``near`` of
        its ``tau``; every decision when ``near`` is None)."""
        from agents.players.departures import CAND_FEATURES, CANDIDATES, DECISION_FEATURES
        from agents.players.fasthead import features_tables

        head = self.player
        short, nshort = head.candidates(engine, tables, CANDIDATES)
        base = head.decide(engine, tables)[tables]
        R = len(tables)
        score = np.full((R, CANDIDATES), -np.inf)
        score[:, 0] = 0.0
        near = np.ones(R, bool)
        many = np.flatnonzero(nshort >= 2)
        if len(many):
            per = np.zeros((len(many), CANDIDATES, CAND_FEATURES), np.float32)
            dec = np.zeros((len(many), DECISION_FEATURES), np.float32)
            f = head.fast
            features_tables(engine._b8, engine._b16, tables[many], short[many], nshort[many], f.cfg, f._tab, f._tabs,
                            per, dec)
            pred = head.predict(per, dec, nshort[many]).astype(np.float64)
            score[many, 1:] = pred
            if self.near is not None:
                centre = head.tau if self.near_tau is None else self.near_tau
                near[many] = np.abs(pred.max(1) - centre) <= self.near
        score[short < 0] = -np.inf
        score[short == base[:, None]] = np.inf  # the player's own move first
        order = np.argsort(-score, axis=1, kind="stable")[:, : self.candidates]
        cand = np.take_along_axis(short, order, 1)
        ncand = np.minimum(nshort, self.candidates)
        lost = (cand[:, 0] != base) & (nshort >= 1)  # the head's move outside its shortlist (not met): searched as is
        cand[lost, 0] = base[lost]
        return cand, ncand, near

    def _fill(self, engine, tables, cand, ncand, todo, seeds, n, plan_of=None):
        """The rollout engine with, for decision ``todo[i]`` (an index into ``tables``), ``n`` worlds sampled with
        ``seeds[i]`` copied once per candidate, and the candidate actions to play on those tables; returns
        ``(roll, acts, seats, blocks)`` with ``blocks[i] = (first table, candidates)``: candidate c's worlds are the
        tables ``first + c * n ... first + c * n + n - 1``; None where the sampler found no world consistent with
        what the seat sees (``stats["unsampled"]`` counts them, ``last_unsampled`` keeps the sampler's message).
        With ``plan_of`` (:meth:`_add_plans`), ``self._rplan`` / ``self._rseat`` hold each rollout table's plan and
        committed seat."""
        total = int(sum(int(ncand[j]) * n for j in todo))
        roll = self._engine("_roll", engine, total)
        acts = np.zeros(roll.batch_size, np.int64)
        if plan_of is not None:
            self._rplan = np.full(roll.batch_size, -1, np.int64)
            self._rseat = np.zeros(roll.batch_size, np.int64)
        seats, blocks = [], []
        base = 0
        src = np.arange(n)
        for j, seed in zip(todo, seeds):
            b = int(tables[j])
            s = int(engine.state.actor[b])
            k = int(ncand[j])
            seats.append(s)
            if self.belief is None or self.pool < 2:
                facts = []
            elif self.belief_depth == 1:
                facts = last_discards(engine, b, s)
            else:
                facts = history_discards(engine, b, s, self.belief_depth)
            weigh = self._weighs(facts)
            m = n * self.pool if weigh else n
            try:
                w = engine.sample_worlds(b, s, m, seed=int(seed), out=self._worlds.get(m))
            except RuntimeError as e:  # no consistent world found (a sampler limit): this decision is not searched
                self.stats["unsampled"] += 1
                self.last_unsampled = str(e)
                blocks.append(None)
                continue
            self._worlds[m] = w
            pick = src
            if weigh:  # keep n of the m worlds, in proportion to their weights under the belief
                lik = self._world_weights(engine, b, s, w, m, facts, int(seed))
                pick = (resample(lik, n, (int(seed) >> 11) * 2.0**-53) if self.keep == "resample" else
                        distinct(lik, n, int(seed)))
                self.stats["weighted"] += 1
            for c in range(k):
                rows = np.arange(base + c * n, base + (c + 1) * n)
                copy_tables(w, pick, roll, rows)  # the same worlds for every candidate
                acts[rows] = cand[j, c]
                if plan_of is not None:
                    self._rplan[rows] = plan_of[j, c]
                    self._rseat[rows] = s
            blocks.append((base, k))
            base += k * n
        if base < roll.batch_size:  # tables of an earlier, larger call, or of a decision without worlds: out of play
            roll._b8[base:, S.O8_PHASE] = S.DONE
            roll.mask[base:] = False
        return roll, acts, seats, blocks

    def _weighs(self, facts) -> bool:
        """Whether a decision's worlds are pooled and weighted (a belief with facts to read, or a learned one)."""
        return bool(facts) or (self.belief_net is not None and self.pool >= 2)

    def _world_weights(self, engine, b: int, s: int, w, m: int, facts, seed: int) -> np.ndarray:
        """float64 [m]: the belief's weight of each of the ``m`` worlds ``w`` sampled for seat ``s`` at table ``b``
        (the learned belief's odds times the likelihood of the opponents' discards ``facts``)."""
        lik = np.ones(m)
        if self.belief_net is not None:
            lik *= self.belief_net.weights(engine, b, s, w, np.arange(m), temper=self.temper)
        if facts:
            self._scratch = self._engine("_scratch", engine, m)
            lik *= discard_weights(w, np.arange(m), facts, self._belief_player(), self._scratch, self.belief,
                                   legal=self.belief_moves == "legal", seed=seed)
        return lik

    def _belief_player(self):
        """The player whose discards the belief's likelihood reads: the compiled ``heuristic-flush`` core (the
        policy's own shortlist choice; a third of the improved player's cost per decision)."""
        return getattr(self.player, "fast", self.player)

    def _values(self, engine, tables, cand, ncand, todo, seeds, n, plan_of=None) -> list[np.ndarray]:
        """Per decision ``todo[i]``, float64 [candidates, n]: the seat's hand money after each candidate in each
        world, rolled out to the end of the hand by the fast player (a plan candidate, ``plan_of`` >= 0: the seat
        then plays that plan to the end, :func:`agents.players.searchplans.rollout_plans`); None for a decision
        without worlds (:meth:`_fill`)."""
        t0 = time.process_time()
        roll, acts, seats, blocks = self._fill(engine, tables, cand, ncand, todo, seeds, n, plan_of)
        roll.step(acts)
        if plan_of is not None and (self._rplan >= 0).any():
            rollout_plans(roll, self.roller, self._rseat, self._rplan, self._plan_cfgs)
        else:
            self.roller.rollout(roll)
        money = roll.state.money
        out = [None if blk is None else money[blk[0] : blk[0] + blk[1] * n, s].reshape(blk[1], n).copy()
               for blk, s in zip(blocks, seats)]
        total = sum(blk[1] * n for blk in blocks if blk is not None)
        self.stats["rollout_tables"] += total
        self._cost_per_table = (time.process_time() - t0) / max(total, 1)
        return out

    def _search(self, engine, tables, cand, ncand, todo, keys, n, zs=None, plan_of=None) -> list[int]:
        """The best candidate of each decision ``todo`` (indices into ``tables``) over ``n`` worlds each (``zs``: the
        standard errors each must beat the player's move by, one number per decision or per candidate after the
        first; default ``z``)."""
        seeds = [int(mix(np.asarray([keys[j] ^ self._salt], dtype=np.uint64))[0]) for j in todo]
        values = self._values(engine, tables, cand, ncand, todo, seeds, n, plan_of)
        out = []
        for i, (j, v) in enumerate(zip(todo, values)):
            c = 0 if v is None else self._pick(v, None if zs is None else zs[i])
            self.stats["changed"] += c != 0
            if plan_of is not None and plan_of[j, c] >= 0:
                self.stats["planned"] += 1
            out.append(int(cand[j, c]))
        return out

    def _pick(self, v: np.ndarray, z=None) -> int:
        """The candidate to play from its values ``v [k, n]``: the best mean, but a candidate other than the player's
        choice (row 0) only when its mean gain over it, paired by world, exceeds ``z`` (default the agent's; a number,
        or one per candidate after the first) standard errors plus ``margin``."""
        z = self.z if z is None else np.asarray(z, np.float64)
        d = v[1:] - v[0]
        gain = d.mean(1)
        if (np.any(z > 0) or self.margin > 0) and v.shape[1] > 1:
            se = d.std(1, ddof=1) / np.sqrt(v.shape[1])
            gain = np.where(gain > z * se + self.margin, gain, 0.0)
        best = int(np.argmax(gain))
        return best + 1 if gain[best] > 0 else 0

    def evaluate(self, engine, table: int, actions, *, worlds: int | None = None, seed: int = 0) -> np.ndarray:
        """float64 [len(actions), worlds]: the acting seat's hand money after each of ``actions`` (legal ones) at
        ``table`` in each of the same ``worlds`` sampled worlds (default: the agent's), rolled out to the end."""
        actions = np.asarray(actions, dtype=np.int64).reshape(1, -1)
        if not engine.mask[table, actions[0]].all():
            raise ValueError(f"actions: not all legal at table {table}")
        n = self.worlds if worlds is None else int(worlds)
        return self._values(engine, np.array([table]), actions, np.array([actions.shape[1]]), [0], [seed], n)[0]

    __call__ = act
