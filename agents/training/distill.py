"""Search distillation (expert iteration): states from self-play labelled by the ``search`` agent's action values,
and the fit of a policy network to those labels.

This module owns the distillation stage of ``train.py`` (``distill_decisions > 0``):

* :func:`label_states` plays self-play hands on ``tables`` engine tables with the compiled player
  (:class:`agents.players.fastplay.FastPlayer`, ``heuristic-flush``'s core) in every seat.  At each decision that has at
  least two candidates (:meth:`FastPlayer.candidates`: the player's ranked shortlist, its own choice first), with
  probability ``label_prob``, the decision is **labelled**: ``worlds`` worlds are sampled for the acting seat
  (:meth:`mjenv.engine.core.Engine.sample_worlds`), every candidate is played in the **same** worlds and rolled
  out to the end of the hand (:class:`agents.players.search.SearchAgent`'s machinery), and the seat's money after each
  candidate in each world is summarised as its mean (the candidate's value, money from the decision on) and its
  mean gain over the player's own choice with the paired standard error.  The table then plays the player's own
  move, so the states are those of ``heuristic-flush``'s games — the states an advised policy reaches;
* :func:`search_targets` turns the values into targets: a candidate other than the player's choice is the target
  only where its gain exceeds ``z`` paired standard errors and ``min_gain`` (the search agent's own rule, with a
  stricter ``z`` to keep noise out of the labels); elsewhere the target is the advice (``heuristic-flush``'s move);
* :func:`fit_distill` fits a :class:`agents.training.ppo.SeatNet` to those targets: masked cross-entropy to the target
  action (the departures weighted by ``departure_weight``) plus ``vf_coef`` × the squared error of the value head to
  the target candidate's searched value × ``reward_scale``;
* :func:`departure_table` counts, per decision kind (discard, 亮倒, kong, pong, chi …), how many labelled decisions
  there were and how often and by how much the search departs from the player — what docs/experiments/distillation.md and four-player.md report;
* :func:`run_stage` labels (or reads labels) and fits; :func:`distill_stage` is that stage with ``train.py``'s
  ``distill_*`` arguments (``distill.json`` in the run folder).

Labels are deterministic for a seed (the worlds of decision ``i`` are drawn from ``mix(seed, i)``) and can be
saved (:func:`save_labels`, a ``.npz`` with the observations bit-packed as :mod:`mjenv.dataset` packs them) and
fitted again without re-searching (``train.py --distill_labels FILE``).  Torch is imported on use only.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from mjenv.encoding import actions as A

KINDS = ("discard", "liang", "kong", "pong", "claim_kong", "chi", "pick")
"""Decision kinds of :func:`decision_kinds` (index = the stored code)."""

LABEL_FORMAT = "mjenv-distill-labels-v1"


def decision_kinds(cand: np.ndarray, ncand: np.ndarray) -> np.ndarray:
    """int8 [N]: the kind of each decision (:data:`KINDS`) from its candidates: a turn whose shortlist holds a kong
    is ``kong``, else one with a 亮倒 is ``liang``, else ``discard``; a claim window is ``claim_kong``, ``pong`` or
    ``chi`` by the strongest claim offered; a Gejiu kong-tile choice is ``pick``."""
    cand = np.asarray(cand)
    valid = np.arange(cand.shape[1])[None, :] < np.asarray(ncand)[:, None]
    has = lambda lo, hi: ((cand >= lo) & (cand < hi) & valid).any(1)  # noqa: E731
    out = np.zeros(len(cand), np.int8)
    out[has(A.LIANG, A.KONG_SELF)] = KINDS.index("liang")
    out[has(A.KONG_SELF, A.PONG)] = KINDS.index("kong")
    out[has(A.CHI_LOW, A.CHI_HIGH + 1)] = KINDS.index("chi")
    out[has(A.PONG, A.PONG + 1)] = KINDS.index("pong")
    out[has(A.KONG_CLAIM, A.KONG_CLAIM + 1)] = KINDS.index("claim_kong")
    out[has(A.KONGTILE_0, A.KONGTILE_1 + 1)] = KINDS.index("pick")
    return out


def ready_pair_decisions(hand: np.ndarray, n_melds: np.ndarray, cand: np.ndarray, ncand: np.ndarray) -> np.ndarray:
    """bool [N]: which Gejiu decisions (concealed counts ``hand int [N, 34]``, the seat's melds ``n_melds [N]``, the
    shortlists ``cand [N, K]`` of ``ncand`` entries) have a choice (column 0) and at least one other candidate that
    are discards leaving a 13-tile hand with a non-empty Gejiu wait set (docs/rules/gejiu.md §6.6)."""
    from mjenv.rules.scoring import gejiu as G

    cand = np.asarray(cand, np.int64)
    hand = np.asarray(hand, np.int16)
    nm = np.asarray(n_melds, np.int64)
    ready = np.zeros(cand.shape, bool)
    for k in range(cand.shape[1]):
        a = cand[:, k]
        rows = np.flatnonzero((k < np.asarray(ncand)) & (a >= 0) & (a < 34))
        if not len(rows):
            continue
        h = hand[rows].copy()
        h[np.arange(len(rows)), a[rows]] -= 1
        rows, h = rows[h.sum(1) + 3 * nm[rows] == 13], h[h.sum(1) + 3 * nm[rows] == 13]
        if len(rows):
            ready[rows, k] = G.wait_mask(np.clip(h, 0, 4).astype(np.int8)).any(1)
    return ready[:, 0] & ready[:, 1:].any(1)


WORLD_SOURCES = ("sampled", "hands_true")
"""Where :func:`label_states` values the candidates: ``sampled`` worlds (the opponents' hidden tiles and the wall
redrawn uniformly given what the seat sees, :meth:`~mjenv.engine.core.Engine.sample_worlds`) or ``hands_true``
worlds (:func:`hands_true_worlds`: the real table, only the live wall's order reshuffled)."""


def hands_true_worlds(engine, b: int, roll, rows, seed) -> None:
    """Copy table ``b`` of ``engine`` onto tables ``rows`` of ``roll`` as *hands-true worlds*: every hand (the
    opponents' concealed tiles, face-down melds, locks) exactly as it truly is, and only the live wall's order
    (``front .. back``, replacement tiles included) shuffled afresh for each row by a generator seeded with
    ``seed`` (an int, or a sequence of ints as numpy's seed entropy) — so the same ``seed`` and row count give the
    same shuffles (common random numbers across candidates).
    The mean over such worlds of a candidate's money is its value given everything but the wall's order: for the
    real hands an unbiased, low-variance truth (what ``bench/search_truth.py`` judges searches by)."""
    from agents.players.search import copy_tables

    rows = np.asarray(rows, np.int64)
    copy_tables(engine, np.full(len(rows), int(b)), roll, rows)
    f, bk = int(engine.state.front[b]), int(engine.state.back[b])
    live = engine.state.wall[b, f:bk].copy()
    rng = np.random.default_rng([int(x) for x in seed] if np.ndim(seed) else int(seed))
    roll.state.wall[rows, f:bk] = np.stack([rng.permutation(live) for _ in range(len(rows))]) if len(rows) else live


def hands_true_values(search, engine, tables, cand, ncand, todo, seeds, n) -> list[np.ndarray]:
    """Per decision ``todo[i]`` (an index into ``tables``), float64 [candidates, n]: the acting seat's hand money
    after each candidate in the same ``n`` hands-true worlds (:func:`hands_true_worlds` with ``seeds[i]``), rolled
    out to the end of the hand by ``search.player`` — the hands-true counterpart of the search agent's sampled-world
    values (:meth:`agents.players.search.SearchAgent._values`), on its rollout engine."""
    from mjenv.engine import state as S

    total = int(sum(int(ncand[j]) * n for j in todo))
    roll = search._engine("_roll", engine, total)
    acts = np.zeros(roll.batch_size, np.int64)
    blocks, seats, base = [], [], 0
    for j, seed in zip(todo, seeds):
        b, k = int(tables[j]), int(ncand[j])
        seats.append(int(engine.state.actor[b]))
        for c in range(k):
            rows = np.arange(base + c * n, base + (c + 1) * n)
            hands_true_worlds(engine, b, roll, rows, int(seed))  # the same shuffles for every candidate
            acts[rows] = cand[j, c]
        blocks.append(base)
        base += k * n
    if base < roll.batch_size:  # tables of an earlier, larger call: out of play
        roll._b8[base:, S.O8_PHASE] = S.DONE
        roll.mask[base:] = False
    roll.step(acts)
    search.player.rollout(roll)
    money = roll.state.money
    return [money[b0 : b0 + int(ncand[j]) * n, s].reshape(int(ncand[j]), n).astype(np.float64)
            for b0, j, s in zip(blocks, todo, seats)]


def add_policy_candidates(cand: np.ndarray, ncand: np.ndarray, logits: np.ndarray, mask: np.ndarray,
                          extra: int) -> tuple[np.ndarray, np.ndarray]:
    """``cand int64 [N, k]`` (-1 padded) and ``ncand`` widened by ``extra`` columns: each row's legal moves by
    descending ``logits`` that are not yet among its candidates, up to ``extra`` of them (the shortlist's order and
    its first column stay as they were)."""
    n, k = cand.shape
    out = np.full((n, k + extra), -1, np.int64)
    out[:, :k] = cand
    count = ncand.astype(np.int64).copy()
    order = np.argsort(-np.where(mask, logits, -np.inf), axis=1, kind="stable")
    for r in range(n):
        have = set(int(a) for a in cand[r, : count[r]])
        added = 0
        for a in order[r]:
            if added == extra or not mask[r, a]:
                break
            if int(a) not in have:
                out[r, count[r]] = a
                count[r] += 1
                added += 1
    return out, count.astype(ncand.dtype)


def label_states(variant: str = "kawuxing3", options: Any = None, *, decisions: int = 1000, tables: int = 64,
                 label_prob: float = 0.25, worlds: int = 32, candidates: int = 3, seed: int = 0,
                 verify_worlds: int = 0, screen_z: float = 0.5, kinds=None, policy=None, rollout_player=None,
                 log: Callable[[str], None] | None = None, scope: str = "all",
                 world_source: str = "sampled", policy_candidates: int = 0) -> dict:
    """Play self-play hands until ``decisions`` decisions are labelled (see the module docstring).

    ``policy``: the player whose moves the tables play in every seat (an agent with ``act(obs, mask)`` on
    ``mjenv-obs-v1`` rows, e.g. a :class:`agents.players.policy.PolicyAgent`; expert iteration labels the states an
    improved player reaches, :mod:`agents.training.exit`), or a player reading the engine's tables (``uses_engine``,
    e.g. :class:`agents.players.fasthead.FastHeadPlayer`); None: the compiled player.  Either way the shortlist is
    the compiled player's; ``played int8 [N]`` stores the shortlist column the tables played (-1: a move outside the
    shortlist).  ``rollout_player``: what plays the rollouts after each candidate, in every seat (an object with
    ``rollout(engine)``, e.g. :class:`~agents.players.fasthead.FastHeadPlayer`: expert iteration's round 2); None:
    the compiled player.

    Returns ``obs float32 [N, C, 34]`` (the acting seat's ``mjenv-obs-v1`` observation), ``mask bool [N, 111]``,
    ``cand int64 [N, candidates]`` (-1 padded, the player's choice first), ``ncand``, ``value float32 [N, k]``
    (mean money of the seat from the decision to the end of the hand after each candidate), ``gain`` and ``se``
    (``float32 [N, k]``: the mean gain over candidate 0, paired by world, and its standard error; 0 in column 0),
    ``kind int8``, ``wall_left int16``, and ``meta`` (sizes, hands played, CPU seconds).  Hands are the seeded
    walls ``(seed, i)`` for i = 0, 1, …; the worlds of the i-th labelled decision are drawn from ``mix(seed, i)``.

    **Verification** (``verify_worlds > 0``): the screen above picks, at each decision, the alternative of largest
    gain; where that gain exceeds ``screen_z`` standard errors it is played again against candidate 0 in
    ``verify_worlds`` fresh worlds (another seed), and ``valt int64 [N]`` (the alternative's column, 0 where
    none was verified), ``vgain`` and ``vse`` (``float32 [N]``: its gain over candidate 0 in the fresh worlds and
    the paired standard error) are stored.  The fresh worlds do not take part in the selection, so ``vgain`` is an
    unbiased estimate of the gain of the departures the screen proposes (the screen's own gains are not: they
    are the largest of noisy estimates).  ``screen_z = -inf`` verifies the best alternative of every decision.
    ``kinds`` (names of :data:`KINDS`): label only decisions of those kinds.  ``scope`` ``"ready"`` (Gejiu only):
    label only decisions where the choice and another candidate are discards that leave a ready hand
    (:func:`ready_pair_decisions`), the only alternatives a departure head of scope ``ready`` is fitted on.
    A decision at which the world sampler finds no world consistent with what the seat sees (``RuntimeError`` of
    :meth:`~mjenv.engine.core.Engine.sample_worlds`) is skipped: ``meta["skipped"]`` counts them, ``log`` names
    the sampler's message.

    ``world_source`` (:data:`WORLD_SOURCES`): ``sampled`` (the default, as above) or ``hands_true``: each candidate
    is valued in ``worlds`` hands-true worlds (:func:`hands_true_values`: the real hands, only the live wall
    reshuffled; the shuffles of decision ``i`` drawn from ``mix(seed, i)``), so a label is an unbiased estimate of the
    candidate's gain for the hands the table really holds, and a head regressed on such labels from public features
    estimates E[true gain | features] with no belief model.  Not with verification.  ``meta["world_source"]``
    records it.

    ``policy_candidates`` (default 0): the ``policy``'s (a network with ``logits(obs, mask)``) most likely legal
    moves that are not in the shortlist, up to that many, are valued as further candidates after the shortlist's
    (``cand`` then has ``candidates + policy_candidates`` columns), so a policy's moves outside the compiled
    player's shortlist (a safe discard that breaks the hand, say) get labels too; a decision is labelled when it
    has two or more candidates in all.  ``meta["policy_candidates"]`` records it."""
    from agents.players.keyrng import mix
    from agents.players.search import SearchAgent
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    for name, v, lo in (("decisions", decisions, 1), ("tables", tables, 1), ("worlds", worlds, 2),
                        ("candidates", candidates, 2)):
        if int(v) < lo:
            raise ValueError(f"{name}: need at least {lo}, got {v}")
    if not 0 < float(label_prob) <= 1:
        raise ValueError(f"label_prob: a probability in (0, 1], got {label_prob}")
    kind_codes = None
    if kinds is not None:
        bad = [k for k in kinds if k not in KINDS]
        if bad or not len(kinds):
            raise ValueError(f"kinds: {bad[0] if bad else 'none'} is not a decision kind ({', '.join(KINDS)})")
        kind_codes = [KINDS.index(k) for k in kinds]
    if scope not in ("all", "ready"):
        raise ValueError(f"scope: {scope!r} is not all or ready")
    if scope == "ready" and variant != "gejiu":
        raise ValueError(f"scope: ready reads Gejiu's wait sets; {variant!r} is not gejiu")
    if int(policy_candidates) < 0:
        raise ValueError(f"policy_candidates: need 0 or more, got {policy_candidates}")
    if int(policy_candidates) and not hasattr(policy, "logits"):
        raise ValueError("policy_candidates: the policy must be a network with logits(obs, mask) (a PolicyAgent)")
    if world_source not in WORLD_SOURCES:
        raise ValueError(f"world_source: {world_source!r} is not one of {', '.join(WORLD_SOURCES)}")
    if world_source != "sampled" and int(verify_worlds) > 0:
        raise ValueError("world_source: verification (verify_worlds > 0) re-values in sampled worlds; "
                         "hands_true labels take verify_worlds 0")
    cpu0 = time.process_time()
    search = SearchAgent(variant, options, candidates=candidates, worlds=worlds, seed=seed)
    player = search.player  # the shortlist (and the tables' moves without a policy)
    if rollout_player is not None:
        if getattr(rollout_player, "variant", search.player.variant) != search.player.variant:
            raise ValueError(f"rollout_player plays {rollout_player.variant!r}, the labels are of {search.player.variant!r}")
        search.player = search.roller = rollout_player  # SearchAgent._values rolls the worlds out with its .roller
    eng = Engine(variant, tables, options=search.opts, record_events=False)
    encoder = encoder_for(eng)
    st = eng.state
    rng = np.random.default_rng([seed, 2121])
    base = mix(np.asarray([seed], dtype=np.uint64))[0]
    next_wall = tables
    eng.reset(seed=seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    parts: dict[str, list] = {k: [] for k in ("obs", "mask", "cand", "ncand", "value", "gain", "se", "wall_left",
                                              "valt", "vgain", "vse", "played")}
    vbase = mix(np.asarray([seed ^ 0x5EED], dtype=np.uint64))[0]
    count = hands = steps = skipped = 0
    acts = np.full(tables, -1, np.int64)
    last_log = time.process_time()
    while count < decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        player.decide(eng, live, out=acts)
        if policy is not None and len(live):
            if getattr(policy, "uses_engine", False):  # a compiled player reading the tables
                acts[live] = policy.act(None, eng.mask[live], engine=eng, tables=live)
            else:
                obs_live = encoder.encode(st, st.actor[live].astype(np.int64), live, engine=eng)
                acts[live] = policy.act(obs_live, eng.mask[live])
        cand, ncand = player.candidates(eng, live, candidates)
        if policy_candidates and len(live):
            cand, ncand = add_policy_candidates(cand, ncand, policy.logits(obs_live, eng.mask[live]), eng.mask[live],
                                                int(policy_candidates))
        ok = (ncand >= 2) & (rng.random(len(live)) < label_prob)
        if kind_codes is not None:
            ok &= np.isin(decision_kinds(cand, ncand), kind_codes)
        if scope == "ready" and ok.any():
            r = np.flatnonzero(ok)
            b, seat = live[r], st.actor[live[r]].astype(np.int64)
            ok[r] = ready_pair_decisions(st.hand[b, seat], st.n_melds[b, seat], cand[r], ncand[r])
        pick = np.flatnonzero(ok)[: decisions - count]
        if len(pick):
            b = live[pick]
            seats = st.actor[b].astype(np.int64)
            seeds = [int(x) for x in mix(base ^ np.arange(count, count + len(b), dtype=np.uint64))]
            money0 = st.money[b, seats].astype(np.float64)
            if world_source == "sampled":
                vals = search._values(eng, live, cand, ncand, list(pick), seeds, worlds)
            else:  # the real hands, the live wall reshuffled: never unsampled
                vals = hands_true_values(search, eng, live, cand, ncand, list(pick), seeds, worlds)
            keep = [i for i, v in enumerate(vals) if v is not None]
            if len(keep) < len(vals):  # no world found for a decision (a sampler limit): skipped, counted, logged
                skipped += len(vals) - len(keep)
                if log:
                    log(f"[distill labels] skipped {len(vals) - len(keep)} decision(s): {search.last_unsampled}")
                pick, b, seats, money0 = pick[keep], b[keep], seats[keep], money0[keep]
                vals = [vals[i] for i in keep]
        if len(pick):
            k = cand.shape[1]
            value = np.zeros((len(b), k), np.float32)
            gain = np.zeros((len(b), k), np.float32)
            se = np.zeros((len(b), k), np.float32)
            for i, v in enumerate(vals):
                kk = v.shape[0]
                value[i, :kk] = v.mean(1) - money0[i]
                d = v[1:] - v[0]
                gain[i, 1:kk] = d.mean(1)
                se[i, 1:kk] = d.std(1, ddof=1) / np.sqrt(v.shape[1])
            valt = np.zeros(len(b), np.int64)
            vgain = np.zeros(len(b), np.float32)
            vse = np.zeros(len(b), np.float32)
            if verify_worlds > 0:
                z1 = np.where(se > 0, gain / np.maximum(se, 1e-12), np.where(gain > 0, np.inf, 0.0))
                z1[:, 0] = -np.inf
                z1[np.arange(k)[None, :] >= ncand[pick][:, None]] = -np.inf
                alt = z1.argmax(1)
                go = np.flatnonzero(z1[np.arange(len(b)), alt] > screen_z)
                if len(go):
                    pair = np.stack([cand[pick[go], 0], cand[pick[go], alt[go]]], 1)
                    vseeds = [int(x) for x in mix(vbase ^ np.arange(count, count + len(b), dtype=np.uint64))[go]]
                    vv = search._values(eng, b[go], pair, np.full(len(go), 2), list(range(len(go))), vseeds,
                                        verify_worlds)
                    for i, v in zip(go, vv):
                        if v is None:
                            continue
                        d = v[1] - v[0]
                        valt[i], vgain[i], vse[i] = alt[i], d.mean(), d.std(ddof=1) / np.sqrt(len(d))
            parts["valt"].append(valt)
            parts["vgain"].append(vgain)
            parts["vse"].append(vse)
            parts["obs"].append(encoder.encode(st, seats, b, engine=eng))
            parts["mask"].append(eng.mask[b].copy())
            parts["cand"].append(cand[pick])
            parts["ncand"].append(ncand[pick])
            parts["value"].append(value)
            parts["gain"].append(gain)
            parts["se"].append(se)
            parts["wall_left"].append((st.back[b] - st.front[b]).astype(np.int16))
            hit = cand[pick] == acts[b][:, None]
            parts["played"].append(np.where(hit.any(1), hit.argmax(1), -1).astype(np.int8))
            count += len(b)
        eng.step(acts)
        steps += 1
        next_wall, ended = eng.deal_next_walls(seed, next_wall)
        hands += ended
        if log and time.process_time() - last_log > 60:
            last_log = time.process_time()
            log(f"[distill labels] {count:,}/{decisions:,} decisions, {hands:,} hands, "
                f"{time.process_time() - cpu0:.0f} CPU s")
    out = {k: np.concatenate(v) for k, v in parts.items()}
    out["kind"] = decision_kinds(out["cand"], out["ncand"])
    out["meta"] = {"format": LABEL_FORMAT, "variant": variant, "decisions": int(count), "hands": int(hands),
                   "steps": int(steps), "tables": int(tables), "label_prob": float(label_prob), "worlds": int(worlds),
                   "candidates": int(candidates), "policy_candidates": int(policy_candidates), "seed": int(seed),
                   "verify_worlds": int(verify_worlds),
                   "skipped": int(skipped),
                   "screen_z": float(screen_z), "kinds": None if kinds is None else list(kinds), "scope": scope,
                   "policy": None if policy is None else str(getattr(policy, "name", type(policy).__name__)),
                   "rollout_player": None if rollout_player is None else str(getattr(rollout_player, "name",
                                                                                       type(rollout_player).__name__)),
                   "cpu_seconds": round(time.process_time() - cpu0, 1)}
    out["meta"]["world_source"] = world_source
    return out


def search_targets(gain: np.ndarray, se: np.ndarray, ncand: np.ndarray, *, z: float = 1.0,
                   min_gain: float = 0.0) -> np.ndarray:
    """int64 [N]: the target candidate of each decision — the candidate ``c >= 1`` of largest mean gain among those
    whose gain over candidate 0 exceeds both ``z`` standard errors and ``min_gain``, else 0 (keep the player's
    choice).  Columns at or beyond ``ncand`` never win."""
    gain = np.asarray(gain, np.float64)
    se = np.asarray(se, np.float64)
    k = gain.shape[1]
    ok = (np.arange(k)[None, :] >= 1) & (np.arange(k)[None, :] < np.asarray(ncand)[:, None])
    ok &= (gain > z * se) & (gain > min_gain)
    g = np.where(ok, gain, -np.inf)
    best = g.argmax(1)
    return np.where(np.isfinite(g[np.arange(len(g)), best]), best, 0).astype(np.int64)


def verified_targets(valt: np.ndarray, vgain: np.ndarray, vse: np.ndarray, *, z: float = 2.0,
                     min_gain: float = 0.0) -> np.ndarray:
    """int64 [N]: the verified alternative ``valt`` where its gain in the fresh worlds exceeds ``z`` standard errors
    and ``min_gain``, else 0 (keep the player's choice)."""
    valt = np.asarray(valt, np.int64)
    vgain = np.asarray(vgain, np.float64)
    ok = (valt > 0) & (vgain > z * np.asarray(vse, np.float64)) & (vgain > min_gain)
    return np.where(ok, valt, 0)


def targets(labels: dict, *, z: float, min_gain: float = 0.0, verified: bool = False) -> np.ndarray:
    """The target column of each labelled decision: :func:`verified_targets` with ``verified`` (the labels must
    have been verified), else :func:`search_targets` on the screening worlds."""
    if verified:
        if not int(labels["meta"].get("verify_worlds", 0)):
            raise ValueError("verified targets: these labels were made without verify_worlds")
        return verified_targets(labels["valt"], labels["vgain"], labels["vse"], z=z, min_gain=min_gain)
    return search_targets(labels["gain"], labels["se"], labels["ncand"], z=z, min_gain=min_gain)


def _kept(labels: dict, advice: np.ndarray) -> np.ndarray:
    """The action kept where the search does not depart: the advice where it is legal, else the player's choice."""
    n = len(labels["cand"])
    advice = np.asarray(advice, np.int64)
    legal = (advice >= 0) & labels["mask"][np.arange(n), np.clip(advice, 0, None)]
    return np.where(legal, advice, labels["cand"][:, 0])


def target_actions(labels: dict, advice: np.ndarray, *, z: float = 1.0, min_gain: float = 0.0,
                   verified: bool = False):
    """``(action int64 [N], departs bool [N], target int64 [N])``: the action each decision is fitted to
    (:func:`targets`).  Where the search keeps the player's choice the action is ``advice`` (the advising
    player's own move, which the network reads), when legal; where it departs, the target candidate."""
    target = targets(labels, z=z, min_gain=min_gain, verified=verified)
    n = len(target)
    chosen = labels["cand"][np.arange(n), target]
    keep = _kept(labels, advice)
    departs = target > 0
    return np.where(departs, chosen, keep).astype(np.int64), departs, target


def _mean_ci(x: np.ndarray) -> tuple[float, float]:
    x = np.asarray(x, np.float64)
    if not len(x):
        return float("nan"), float("nan")
    return float(x.mean()), (float(1.96 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan"))


def soft_targets(labels: dict, advice: np.ndarray):
    """``(keep int64 [N], alt int64 [N], p_alt float32 [N])`` for soft targets from verified labels: at a decision
    whose screened alternative was verified, the target puts ``p_alt = Φ(vgain / vse)`` (how sure the fresh worlds
    are that the alternative gains) on the alternative and the rest on the kept action (the advice, when legal);
    elsewhere all on the kept action.  Where states look alike the network's greedy choice then departs only if
    the alternative gains more often than not."""
    from math import erf, sqrt

    if not int(labels["meta"].get("verify_worlds", 0)):
        raise ValueError("soft targets: these labels were made without verify_worlds")
    keep = _kept(labels, advice)
    n = len(keep)
    valt = np.asarray(labels["valt"], np.int64)
    zz = np.where(labels["vse"] > 0, labels["vgain"] / np.maximum(labels["vse"], 1e-12),
                  np.sign(labels["vgain"]) * 50.0)
    p = np.where(valt > 0, 0.5 * (1.0 + np.vectorize(erf)(zz / sqrt(2.0))), 0.0).astype(np.float32)
    alt = np.where(valt > 0, labels["cand"][np.arange(n), valt], keep).astype(np.int64)
    return keep, alt, p


def departure_table(labels: dict, *, z: float = 1.0, verify_z: float = 2.0) -> list[dict]:
    """Per decision kind (and ``all``): labelled decisions; the search agent's departures (``z`` standard errors on
    the screening worlds) and their gain as the screen measured it (biased upwards: the largest of noisy
    estimates); with verified labels, the decisions screened and verified, the verified gain of the screened
    alternatives with its 95 % interval over decisions (unbiased), and the departures confirmed at ``verify_z``
    with their verified gain per decision of the kind."""
    target = search_targets(labels["gain"], labels["se"], labels["ncand"], z=z)
    n = len(target)
    gain_t = labels["gain"][np.arange(n), target].astype(np.float64)
    verified = bool(int(labels["meta"].get("verify_worlds", 0)))
    vt = verified_targets(labels["valt"], labels["vgain"], labels["vse"], z=verify_z) if verified else None
    rows = []
    for code, name in [(c, k) for c, k in enumerate(KINDS)] + [(-1, "all")]:
        sel = labels["kind"] == code if code >= 0 else np.ones(n, bool)
        m = int(sel.sum())
        if not m:
            continue
        dep = sel & (target > 0)
        row = {"kind": name, "decisions": m, "search_departures": int(dep.sum()), "search_share": float(dep.sum() / m),
               "screen_gain_departed": float(gain_t[dep].mean()) if dep.any() else 0.0}
        if verified:
            scr = sel & (labels["valt"] > 0)
            row["screened"] = int(scr.sum())
            row["verified_gain"], row["verified_ci95"] = _mean_ci(labels["vgain"][scr])
            conf = sel & (vt > 0)
            row["confirmed"] = int(conf.sum())
            row["confirmed_share"] = float(conf.sum() / m)
            g = np.where(conf, labels["vgain"], 0.0)[sel]
            row["confirmed_gain_per_decision"], row["confirmed_ci95"] = _mean_ci(g)
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------------------ storage

_ARRAYS = ("mask", "cand", "ncand", "value", "gain", "se", "kind", "wall_left", "valt", "vgain", "vse")


def save_labels(path, labels: dict) -> Path:
    """Write ``labels`` (from :func:`label_states`) to ``path`` (``.npz``; observations packed losslessly)."""
    import json

    from mjenv.dataset import pack_planes

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: labels[k] for k in _ARRAYS}
    if "played" in labels:
        arrays["played"] = labels["played"]
    arrays.update(pack_planes(labels["obs"]))
    arrays["meta_json"] = np.frombuffer(json.dumps(labels["meta"]).encode(), np.uint8)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)
    return path


def load_labels(path) -> dict:
    """Read a file written by :func:`save_labels`; raises ``ValueError`` naming the file if it is not one."""
    import json

    from mjenv.dataset import unpack_planes

    path = Path(path)
    try:
        with np.load(path) as d:
            out = {k: d[k] for k in _ARRAYS}
            if "played" in d.files:  # labels of a policy's tables (label_states(policy=...))
                out["played"] = d["played"]
            out["obs"] = unpack_planes(d)
            out["meta"] = json.loads(bytes(d["meta_json"]).decode())
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"{path}: not a distillation label file ({exc})") from None
    if out["meta"].get("format") != LABEL_FORMAT:
        raise ValueError(f"{path}: not a distillation label file (format {out['meta'].get('format')!r})")
    return out


def concat_labels(parts: list[dict]) -> dict:
    """Several label sets as one (their ``meta`` summed where it counts); labels valued in different worlds
    (``meta["world_source"]``, files without it are ``sampled``) are refused.  The observation planes are joined
    only where every part has them."""
    sources = sorted({p["meta"].get("world_source", "sampled") for p in parts})
    if len(sources) > 1:
        raise ValueError(f"labels: valued in different worlds ({', '.join(sources)}); join labels of one source")
    keys = ((*_ARRAYS,) + (("obs",) if all("obs" in p for p in parts) else ())  # (lean parts: no planes)
            + (("played",) if all("played" in p for p in parts) else ()))
    out = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    meta = dict(parts[0]["meta"])
    for key in ("decisions", "hands", "steps", "cpu_seconds", "skipped"):
        meta[key] = sum(p["meta"].get(key, 0) for p in parts)
    if all("seat_hands" in p["meta"] for p in parts):  # labels of true-state rollouts (agents.training.departures)
        meta["seat_hands"] = sum(p["meta"]["seat_hands"] for p in parts)
    out["meta"] = meta
    return out


# ------------------------------------------------------------------------------------------ fitting


def fit_distill(net, x: np.ndarray, mask: np.ndarray, action: np.ndarray, value: np.ndarray, departs: np.ndarray, *,
                epochs: int = 4, batch_size: int = 512, lr: float = 3e-4, vf_coef: float = 0.5,
                departure_weight: float = 1.0, holdout: float = 0.1, seed: int = 0, alt: np.ndarray | None = None,
                p_alt: np.ndarray | None = None, log: Callable[[str], None] | None = None) -> dict:
    """Fit ``net`` (``x [N, C*34] -> (logits [N, 111], value [N])``) to the distillation targets: masked
    cross-entropy to ``action`` (rows with ``departs`` weighted ``departure_weight``) plus ``vf_coef`` × the squared
    error of the value to ``value``.  With soft targets (``alt``, ``p_alt``: :func:`soft_targets`) a row's
    cross-entropy is ``(1 - p_alt)`` on ``action`` plus ``p_alt`` on ``alt``, weighted ``1 + (departure_weight - 1)
    p_alt``, and ``departs`` should be ``p_alt > 0.5``.  The last ``holdout`` share of the rows (in a seeded order)
    is held out; returns per-epoch losses and, on the held-out rows, how often the greedy policy plays the
    departure where ``departs`` (``departure_recall``) and ``action`` elsewhere (``keep_agreement``)."""
    import torch

    n = len(action)
    if alt is None:
        alt, p_alt = np.asarray(action), np.zeros(n, np.float32)
    target = np.where(departs, alt, action) if p_alt.any() else np.asarray(action)
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    n_hold = int(round(holdout * n))
    hold, train_rows = order[:n_hold], order[n_hold:]
    xt = torch.as_tensor(np.ascontiguousarray(x, dtype=np.float32).reshape(n, -1))
    mt = torch.as_tensor(np.asarray(mask, bool))
    yt = torch.as_tensor(np.asarray(action, np.int64))
    vt = torch.as_tensor(np.asarray(value, np.float32))
    at = torch.as_tensor(np.asarray(alt, np.int64))
    pt = torch.as_tensor(np.asarray(p_alt, np.float32))
    soft = bool(np.any(p_alt))
    if soft:
        wt = torch.as_tensor((1.0 + (float(departure_weight) - 1.0) * np.asarray(p_alt)).astype(np.float32))
    else:
        wt = torch.as_tensor(np.where(departs, float(departure_weight), 1.0).astype(np.float32))
    opt = torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5)
    report: dict = {"rows": n, "holdout": int(n_hold), "departures": int(np.sum(departs)), "epochs": []}

    def greedy(rows: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits, _ = net(xt[rows])
            return logits.masked_fill(~mt[rows], float("-inf")).argmax(1).numpy()

    for e in range(epochs):
        net.train()
        perm = train_rows[rng.permutation(len(train_rows))]
        pl, vl = [], []
        for i in range(0, len(perm), batch_size):
            idx = torch.as_tensor(perm[i : i + batch_size])
            logits, v = net(xt[idx])
            logits = logits.masked_fill(~mt[idx], -1e8)
            ce = torch.nn.functional.cross_entropy(logits, yt[idx], reduction="none")
            if soft:
                q = pt[idx]
                ce = (1 - q) * ce + q * torch.nn.functional.cross_entropy(logits, at[idx], reduction="none")
            w = wt[idx]
            pol = (ce * w).sum() / w.sum()
            vloss = torch.nn.functional.mse_loss(v, vt[idx])
            loss = pol + vf_coef * vloss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            pl.append(pol.item())
            vl.append(vloss.item())
        net.eval()
        row = {"epoch": e + 1, "policy_loss": float(np.mean(pl)), "value_loss": float(np.mean(vl))}
        if n_hold:
            got = greedy(hold)
            dep = np.asarray(departs)[hold]
            hit = got == target[hold]
            row["departure_recall"] = float(hit[dep].mean()) if dep.any() else float("nan")
            row["keep_agreement"] = float(hit[~dep].mean()) if (~dep).any() else float("nan")
            row["holdout_departures_played"] = int((~hit[~dep]).sum())
        report["epochs"].append(row)
        if log:
            log(f"[distill fit {e + 1}/{epochs}] policy {row['policy_loss']:.4f}  value {row['value_loss']:.4f}  "
                + (f"held-out: departures recalled {100 * row['departure_recall']:.1f}%, advice kept "
                   f"{100 * row['keep_agreement']:.2f}%" if n_hold else ""))
    return report


# ------------------------------------------------------------------------------------------ the train.py stage

CHUNK = 5000
"""Decisions labelled per call of :func:`label_states` in :func:`run_stage` (chunk ``i`` uses seed ``seed + i``)."""


def chunked_labels(variant: str, options: Any, *, decisions: int = 0, label_files=(), seed: int = 2000,
                   tables: int = 64, label_prob: float = 0.25, worlds: int = 32, candidates: int = 3,
                   verify_worlds: int = 128, screen_z: float = 0.5, save_to: Path | None = None, name: str = "labels",
                   policy=None, log: Callable[[str], None] | None = None, scope: str = "all",
                   world_source: str = "sampled") -> dict:
    """The labels of a training stage: ``label_files`` read and joined, or ``decisions`` decisions labelled by
    :func:`label_states` in chunks of :data:`CHUNK` (chunk ``i`` with seed ``seed + i``, so any prefix of chunks is
    the same whatever the total; ``policy`` plays the tables, ``scope`` picks the decisions and ``world_source``
    values them, as there), joined and saved to ``save_to``."""
    if label_files:
        return concat_labels([load_labels(f) for f in label_files])
    parts = []
    for i in range(-(-int(decisions) // CHUNK)):
        parts.append(label_states(variant, options, decisions=min(CHUNK, int(decisions) - i * CHUNK), tables=tables,
                                  label_prob=label_prob, worlds=worlds, candidates=candidates, seed=seed + i,
                                  verify_worlds=verify_worlds, screen_z=screen_z, policy=policy, log=log, scope=scope,
                                  world_source=world_source))
        if log:
            log(f"[{name}] chunk {i + 1}: {parts[-1]['meta']['decisions']:,} decisions, "
                f"{parts[-1]['meta']['cpu_seconds']:.0f} CPU s")
    labels = concat_labels(parts)
    if save_to is not None:
        save_labels(save_to, labels)
    return labels


def run_stage(net, variant: str, options: Any, *, features=None, decisions: int = 0, label_files=(), seed: int = 2000,
              tables: int = 64, label_prob: float = 0.25, worlds: int = 32, candidates: int = 3,
              verify_worlds: int = 128, screen_z: float = 0.5, z: float = 2.0, min_gain: float = 0.0,
              epochs: int = 8, lr: float = 1e-3, batch_size: int = 512, departure_weight: float = 1.0,
              vf_coef: float = 0.5, reward_scale: float = 0.1, folder: Path | None = None, fit_seed: int = 0,
              soft: bool = False, log: Callable[[str], None] | None = None) -> dict:
    """The distillation stage: label ``decisions`` decisions (in chunks of :data:`CHUNK`, chunk ``i`` with seed
    ``seed + i``; saved to ``folder/distill_labels.npz``) or read ``label_files``, build the targets (verified
    ones when the labels were verified, at ``z``), and fit ``net`` (:func:`fit_distill`).  ``features`` (an
    :class:`agents.players.advice.AdviceFeatures`) extends the observations the network reads, and its advice is the
    action kept where the search keeps the player's choice.  Returns a report (label facts, the departure table,
    the fit's losses and held-out figures, CPU seconds)."""
    cpu0 = time.process_time()
    labels = chunked_labels(variant, options, decisions=decisions, label_files=label_files, seed=seed, tables=tables,
                            label_prob=label_prob, worlds=worlds, candidates=candidates, verify_worlds=verify_worlds,
                            screen_z=screen_z, save_to=None if folder is None else Path(folder) / "distill_labels.npz",
                            name="distill labels", log=log)
    label_cpu = time.process_time() - cpu0
    verified = bool(int(labels["meta"].get("verify_worlds", 0)))
    obs, mask = labels["obs"], labels["mask"]
    if features is not None:
        from agents.players.advice import ADVICE_ROWS, advice_vector

        x = np.concatenate([features.extend(obs[i : i + 2048], mask[i : i + 2048]) for i in range(0, len(mask), 2048)])
        row = obs.shape[1]
        advice = advice_vector(x[:, row : row + ADVICE_ROWS]).argmax(1)
    else:
        x, advice = obs, labels["cand"][:, 0]
    action, departs, target = target_actions(labels, advice, z=z, min_gain=min_gain, verified=verified)
    alt = p_alt = None
    if soft:
        action, alt, p_alt = soft_targets(labels, advice)
        departs = p_alt > 0.5
        target = np.where(departs, labels["valt"], 0)
    value = labels["value"][np.arange(len(target)), target] * float(reward_scale)
    table = departure_table(labels, verify_z=z)
    if log:
        log(f"[distill] {len(action):,} labelled decisions ({labels['meta']['hands']:,} hands), "
            f"{int(departs.sum()):,} departures to fit ({'soft, verified' if soft else 'verified' if verified else 'screen'}"
            f"{'' if soft else f', z {z}'})")
    fit = fit_distill(net, x, mask, action, value, departs, epochs=epochs, batch_size=batch_size, lr=lr,
                      vf_coef=vf_coef, departure_weight=departure_weight, seed=fit_seed, alt=alt, p_alt=p_alt, log=log)
    return {"labels": labels["meta"], "label_cpu_seconds": round(label_cpu, 1), "verified": verified, "z": z,
            "soft": bool(soft), "departures": int(departs.sum()), "departure_table": table, "fit": fit,
            "cpu_seconds": round(time.process_time() - cpu0, 1)}


# ------------------------------------------------------------------------------------------ report


def distill_stage(net, args: Any, rules, features, folder: Path) -> dict:
    """Search distillation of ``net`` (:func:`run_stage` with the ``distill_*`` arguments); writes
    ``distill.json`` (and ``distill_labels.npz`` when it labels) in the run folder; returns the report."""
    from agents.players.policy import _torch
    from agents.tournament.arena import json_text

    torch = _torch()
    torch.manual_seed(args.seed)
    report = run_stage(
        net, rules.variant, rules.options, features=features, decisions=args.distill_decisions, label_files=args.distill_labels,
        seed=args.distill_seed, tables=args.distill_tables, label_prob=args.distill_label_prob,
        worlds=args.distill_worlds, candidates=args.distill_candidates, verify_worlds=args.distill_verify_worlds,
        screen_z=args.distill_screen_z, z=args.distill_z, min_gain=args.distill_min_gain, epochs=args.distill_epochs,
        lr=args.distill_lr, departure_weight=args.distill_departure_weight, vf_coef=args.vf_coef,
        reward_scale=args.reward_scale, folder=folder, fit_seed=args.seed, soft=args.distill_soft,
        log=lambda m: print(m, flush=True))
    net.eval()
    (folder / "distill.json").write_text(json_text(report), encoding="utf-8")
    return report


def report_tables(labels: dict) -> str:
    """The departure tables of docs/experiments/distillation.md for verified ``labels`` (markdown): per decision kind
    (:func:`departure_table`), per (player's move → screened alternative), and by the screen's z of the
    alternative; gains in money per decision with 95 % intervals over decisions."""
    if not int(labels["meta"].get("verify_worlds", 0)):
        raise ValueError("report: these labels were made without verify_worlds")

    def fam(a):
        return np.select([a < A.LIANG, a < A.KONG_SELF, a < A.PONG, a == A.PONG, a == A.KONG_CLAIM, a == A.PASS,
                          (a >= A.CHI_LOW) & (a <= A.CHI_HIGH)],
                         ["discard", "亮倒", "kong", "pong", "claim kong", "pass", "chi"], "kong tile")

    def cell(x):
        m, ci = _mean_ci(x)
        return f"{m:+.3f}".replace("-", "−") + ("" if np.isnan(ci) else f" ± {ci:.3f}")

    out = ["| kind | labelled decisions | search departs (z 1, screen) | screen gain of those | screened (z > 0.5) "
           "| verified gain of the screened alternatives ± 95 % CI | verified z > 2 |", "|---|---:|---:|---:|---:|---:|---:|"]
    for r in departure_table(labels, z=1.0, verify_z=2.0):
        out.append(f"| {r['kind']} | {r['decisions']:,} | {r['search_departures']:,} ({100 * r['search_share']:.1f} %) "
                   f"| {r['screen_gain_departed']:+.2f} | {r['screened']:,} | "
                   f"{cell(labels['vgain'][(labels['valt'] > 0) & ((labels['kind'] == KINDS.index(r['kind'])) if r['kind'] in KINDS else True)])} "
                   f"| {r['confirmed']:,} ({100 * r['confirmed_share']:.1f} %) |")
    scr = np.flatnonzero(labels["valt"] > 0)
    alt = labels["valt"][scr]
    f0, f1 = fam(labels["cand"][scr, 0]), fam(labels["cand"][scr, alt])
    v = labels["vgain"][scr].astype(np.float64)
    out += ["", "| player's move → screened alternative | n | verified gain ± 95 % CI |", "|---|---:|---:|"]
    pairs = sorted(set(zip(f0.tolist(), f1.tolist())), key=lambda k: -int(((f0 == k[0]) & (f1 == k[1])).sum()))
    for a, b in pairs:
        s = (f0 == a) & (f1 == b)
        out.append(f"| {a} → {b} | {int(s.sum()):,} | {cell(v[s])} |")
    z1 = (labels["gain"] / np.maximum(labels["se"], 1e-12))[scr, alt]
    out += ["", "| screen z of the alternative | n | verified gain ± 95 % CI |", "|---|---:|---:|"]
    for lo, hi in ((0.5, 1), (1, 1.5), (1.5, 2), (2, 3), (3, np.inf)):
        s = (z1 >= lo) & (z1 < hi)
        out.append(f"| {lo}–{hi if np.isfinite(hi) else '∞'} | {int(s.sum()):,} | {cell(v[s])} |")
    wl = labels["wall_left"][scr]
    out += ["", "| discard → discard, live wall | n | verified gain ± 95 % CI |", "|---|---:|---:|"]
    for lo, hi in ((0, 12), (12, 24), (24, 40), (40, 200)):
        s = (wl >= lo) & (wl < hi) & (f0 == "discard") & (f1 == "discard")
        out.append(f"| {lo}–{hi - 1} | {int(s.sum()):,} | {cell(v[s])} |")
    return "\n".join(out)


PLANS = ("flush", "plain", "seven pairs", "triplets")
"""Hand plans of :func:`decision_plans` (index = the returned code)."""


def decision_plans(obs: np.ndarray, variant: str, options: Any = None, player: str = "heuristic") -> np.ndarray:
    """int8 [N]: the plan (:data:`PLANS`) the hand-written ``player`` (:func:`agents.make_agent` name) is on for the
    acting seat of each observation ``[N, C, 34]``: of the flush in each suit, the plain hand, seven pairs and all
    triplets, the one whose shanten less the player's credit is lowest, ties to the plain hand (the order of
    :meth:`agents.players.heuristic.HeuristicAgent._choose_plan`), judged on the hand as held."""
    from agents import make_agent

    h = make_agent(player, variant, options)
    d = h.view.decode(np.asarray(obs, np.float32))
    rows = np.arange(len(d.hand))
    costs = h._plan_costs(d.hand.astype(np.int8), d.n_melds[:, 0], d.meld_tiles[:, 0], h._n_chi(d, rows)) - h._bonus()
    order = np.array([3, 0, 1, 2, 4, 5])
    plan = order[costs[:, order].argmin(1)]
    return np.select([plan < 3, plan == 3, plan == 4], [0, 1, 2], 3).astype(np.int8)


def plan_table(labels: dict, player: str = "heuristic-flush") -> str:
    """Markdown: the verified gain of the screened alternatives (:func:`report_tables`) split by the plan ``player``
    is on at each decision (:func:`decision_plans`; by default ``heuristic-flush``, whose credits the labelling
    player :class:`agents.players.fastplay.FastPlayer` uses), overall and for the commonest (player's move → alternative)
    pairs."""
    if not int(labels["meta"].get("verify_worlds", 0)):
        raise ValueError("plan table: these labels were made without verify_worlds")
    plan = decision_plans(labels["obs"], labels["meta"]["variant"], player=player)
    scr = labels["valt"] > 0
    n = len(plan)

    def fam(a):
        return np.select([a < A.LIANG, a == A.PASS, (a >= A.CHI_LOW) & (a <= A.CHI_HIGH), a == A.PONG],
                         ["discard", "pass", "chi", "pong"], "other")

    def cell(x):
        m, ci = _mean_ci(x)
        return f"{m:+.3f}".replace("-", "−") + ("" if np.isnan(ci) else f" ± {ci:.3f}")

    out = ["| plan at the decision | decisions | screened | verified gain of the screened alternatives ± 95 % CI |",
           "|---|---:|---:|---:|"]
    for code, name in enumerate(PLANS):
        s = plan == code
        if s.any():
            out.append(f"| {name} | {int(s.sum()):,} | {int((s & scr).sum()):,} | {cell(labels['vgain'][s & scr])} |")
    f0 = fam(labels["cand"][np.arange(n), 0])
    f1 = fam(labels["cand"][np.arange(n), labels["valt"]])
    out += ["", "| player's move → screened alternative, plan | n | verified gain ± 95 % CI |", "|---|---:|---:|"]
    for a, b in (("discard", "discard"), ("chi", "pass"), ("pass", "chi"), ("pong", "pass"), ("pass", "pong")):
        for code, name in enumerate(PLANS):
            s = scr & (f0 == a) & (f1 == b) & (plan == code)
            if s.sum() >= 5:
                out.append(f"| {a} → {b}, {name} | {int(s.sum()):,} | {cell(labels['vgain'][s])} |")
    return "\n".join(out)


def main(argv=None) -> int:
    """``python -m agents.training.distill FILE ...``: the departure tables of verified label files (e.g. a run's
    ``distill_labels.npz``)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m agents.training.distill", description=main.__doc__.splitlines()[0])
    p.add_argument("files", nargs="+", help="label files written by a distillation run")
    p.add_argument("--plans", action="store_true", help="also split the verified gains by the player's plan")
    p.add_argument("--plan_player", default="heuristic-flush",
                   help="whose plan credits --plans reads (default heuristic-flush, the labelling player's)")
    a = p.parse_args(argv)
    try:
        labels = concat_labels([load_labels(f) for f in a.files])
        print(labels["meta"])
        print(report_tables(labels))
        if a.plans:
            print()
            print(plan_table(labels, a.plan_player))
    except ValueError as exc:
        print(f"agents.training.distill: error: {exc}", file=__import__("sys").stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
