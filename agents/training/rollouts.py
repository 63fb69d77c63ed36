"""Counterfactual rollouts: exact one-decision advantages over a deterministic teacher, from duplicate tables.

This module owns :func:`counterfactual_pairs` and its command line.  Tables of one batched
:class:`~mjenv.engine.core.Engine` are dealt the same wall in groups (a reference table A and one twin per
departure tried) and played by the same deterministic teacher (the heuristic) in lockstep.  At one decision of
the learner seat where the teacher's move has an alternative of the twin's kind, table A keeps the teacher's
move and the twin plays the alternative; both then play on with the teacher to the end of the hand.  The
learner's money on the twin minus on A is the advantage of the alternative *given the teacher's continuation*:
the luck of the deal is the same on both tables, so far fewer hands measure it than a policy gradient would need
(rollout policy improvement, Bertsekas & Tsitsiklis 1996; Tesauro & Galperin 1997).  A policy that departs from
the teacher exactly where that advantage is positive is better than the teacher (the policy improvement
theorem), so these numbers say where a learned policy can gain on the heuristic at all (docs/experiments/heuristic.md has the
measured tables).  Until a twin branches it is the same table as A, so the teacher is asked only once for both.

Command line: ``python -m agents.training.rollouts --pairs 2000`` prints the mean advantage of each kind of departure
with its 95 % CI; ``--departures discard2 fold safe_keep flush`` tries the discard departures (one twin each)
and ``--by`` splits them by state features.

Claim departures (``claims``, only where legal): 亮倒 with the advised discard ↔ the same discard without 亮倒;
pong ↔ pass; a direct kong of the discard ↔ pass; a kong on one's own turn ↔ the teacher's best discard
without it.  Discard departures (:func:`discard_alternative`, where the teacher advises a plain discard):
``discard2`` the teacher's second choice (its own ranking with the advised tile removed); ``fold`` the least
dangerous tile by a wall-reading estimate (:func:`tile_danger`), whatever it costs in shanten; ``safe_keep``
the least dangerous tile among those that keep the best shanten; ``flush`` the discard towards 清一色 (×4) in
the suit where it is closest, when that is at most 3 steps behind the plain hand.  ``no_win``
(:func:`no_win_alternative`): pass a win on another player's discard or kong that the teacher takes, to fish for
a self-draw (``--variant`` works for every family).  ``win`` (:func:`win_alternative`): wherever a win is legal, the
other side of it (:func:`agents.players.departures.win_shortlist`: the teacher's move without the win where it takes
it, a self-draw included; the win where it passes it, as Gejiu's ``qixing_wait`` does); ``--qixing-wait N`` gives the
teacher that rule.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from agents.players.base import Decoded
from agents.players.heuristic import _suited_neighbours, wait_ways
from agents.players.plans import SUIT_OF, plan_shanten
from mjenv.encoding.shanten import shanten
from mjenv.encoding import actions as A
from mjenv.encoding.observation import encoder_for
from mjenv.engine import state as S
from mjenv.engine.core import Engine
from mjenv.rules.hand import wait_mask

KINDS = ("liang", "no_liang", "pong", "no_pong", "kong", "no_kong", "discard2", "fold", "safe_keep", "flush",
         "no_win", "win")
"""Names of the departures, by the code :func:`alternative` and :func:`discard_alternative` return."""
DISCARD_KINDS = KINDS[6:10]
"""Discard departures (:func:`discard_alternative`), offered only where the teacher advises a plain discard."""
DEPARTURES = ("claims",) + DISCARD_KINDS + ("no_win", "win")
"""What one twin table of :func:`counterfactual_pairs` may try: ``claims`` (every :func:`alternative`), one
discard kind, ``no_win`` (:func:`no_win_alternative`: let a discard or rob win pass, to fish for a
self-draw), or ``win`` (:func:`win_alternative`: the other side of every legal win, self-draws included)."""
FEATURES = ("wall_left", "opp_revealed", "shanten", "opp_melds", "own_melds", "decision", "flush_gap",
            "live_waits")
"""State features recorded at each branch point (``feat_<name>`` in :func:`counterfactual_pairs`' result):
tiles left in the wall, whether an opponent has declared 亮倒, the learner's shanten (its hand as held, 14 tiles
on its own turn), the most melds an opponent shows, the learner's melds, how many decisions the learner had
made before, (for ``flush``) how many steps the 清一色 plan is behind the plain hand (99 where not offered), and
(for ``no_win``) how many copies of the learner's waits are still unseen (99 where not computed)."""


def alternative(advice: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(alt int64 [B], kind int64 [B])``: the claim departure from each advised action (``-1`` where none
    applies) and its index in :data:`KINDS`."""
    advice = np.asarray(advice, dtype=np.int64)
    B = len(advice)
    rows = np.arange(B)
    alt = np.full(B, -1, dtype=np.int64)
    kind = np.full(B, -1, dtype=np.int64)

    def offer(sel: np.ndarray, target: np.ndarray, k: int) -> None:
        ok = sel & (target >= 0) & mask[rows, np.clip(target, 0, A.N_ACTIONS - 1)]
        alt[ok] = target[ok]
        kind[ok] = k

    is_discard = advice < A.LIANG
    is_liang = (advice >= A.LIANG) & (advice < A.KONG_SELF)
    offer(is_liang, advice - A.LIANG, KINDS.index("no_liang"))
    offer(is_discard, advice + A.LIANG, KINDS.index("liang"))
    offer(advice == A.PASS, np.full(B, A.PONG), KINDS.index("pong"))
    offer(advice == A.PONG, np.full(B, A.PASS), KINDS.index("no_pong"))
    offer(advice == A.KONG_CLAIM, np.full(B, A.PASS), KINDS.index("no_kong"))
    offer((advice == A.PASS) & (alt < 0), np.full(B, A.KONG_CLAIM), KINDS.index("kong"))
    return alt, kind


def _take(d: Decoded, rows: np.ndarray) -> Decoded:
    """The rows ``rows`` of a decoded batch."""
    return Decoded(**{f.name: (getattr(d, f.name) if f.name == "kinds" or getattr(d, f.name) is None
                               else getattr(d, f.name)[rows]) for f in dataclasses.fields(d)})


def tile_danger(d: Decoded) -> np.ndarray:
    """float [B, 34]: :func:`agents.players.heuristic.wait_ways` of what the observer sees (it reads the observation
    only, as a player could)."""
    return wait_ways(d.live())


def _departure_arrays(d: Decoded, mask, advice):
    """``(advice int64, mask bool, alt, aux, own)`` for a departure function: ``alt`` all ``-1``, ``aux`` (its
    recorded feature) all 99, ``own`` the rows on their own turn."""
    advice = np.asarray(advice, dtype=np.int64)
    B = len(advice)
    own = (d.phase == S.TURN) | (d.phase == S.CLAIMED)
    return advice, np.asarray(mask, dtype=bool), np.full(B, -1, np.int64), np.full(B, 99, np.int64), own


def discard_alternative(kind: str, teacher, d: Decoded, mask: np.ndarray, advice: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
    """``(alt int64 [B], flush_gap int64 [B])``: the discard departure ``kind`` (one of :data:`DISCARD_KINDS`)
    from each advised action, ``-1`` where none applies (the advice is not a plain discard, or the departure is
    the advised tile itself); ``flush_gap`` is the 清一色 plan's shanten minus the advised discard's (99 where
    not computed).  ``teacher`` is a :class:`~agents.players.heuristic.HeuristicAgent` (its ranking, danger and
    seven-pairs setting are used)."""
    if kind not in DISCARD_KINDS:
        raise ValueError(f"discard_alternative: kind {kind!r} is not one of {DISCARD_KINDS}")
    advice, mask, alt, gap, own = _departure_arrays(d, mask, advice)
    rows = np.flatnonzero(own & (advice >= 0) & (advice < A.LIANG))
    if not len(rows):
        return alt, gap
    R = len(rows)
    m = mask[rows]
    adv = advice[rows]
    sub = _take(d, rows)
    if kind == "discard2":
        m2 = np.zeros_like(m)
        m2[:, : A.LIANG] = m[:, : A.LIANG]
        m2[np.arange(R), adv] = False
        a2 = np.asarray(teacher.decide(sub, m2), dtype=np.int64)
        ok = (a2 >= 0) & (a2 < A.LIANG) & m2[np.arange(R), np.clip(a2, 0, A.N_ACTIONS - 1)]
        alt[rows[ok]] = a2[ok]
        return alt, gap
    legal = m[:, : A.LIANG]
    r_i, t_i = np.nonzero(legal)
    h = sub.hand.astype(np.int8)
    nm = sub.n_melds[:, 0]
    after = h[r_i].copy()
    after[np.arange(len(r_i)), t_i] -= 1
    sp = teacher._sp
    s_after = shanten(after, nm[r_i], sp).astype(np.float64)
    is_adv = t_i == adv[r_i]
    if kind in ("fold", "safe_keep"):
        bad = teacher.danger(sub, np.arange(R))[r_i, t_i] > 0  # feeding a revealed player: never a departure
        risk = tile_danger(sub)[r_i, t_i]
        if kind == "fold":
            key = 1e6 * bad + 1e3 * risk + s_after
        else:
            best = np.full(R, np.inf)
            np.minimum.at(best, r_i, np.where(bad, np.inf, s_after))
            key = 1e6 * bad + 1e3 * (s_after > best[r_i]) + risk
        key = key - 1e-3 * is_adv  # ties keep the advice: no departure
    else:  # flush: 清一色 (one suit, no honors) in the suit where its shanten is lowest
        fs = np.full(len(r_i), 99.0)
        off = np.zeros(len(r_i), bool)
        suits = [s_ for s_ in range(3) if (d.kinds & (SUIT_OF == s_)).any()]
        mt = sub.meld_tiles[:, 0] > 0
        best_suit = np.full(R, -1)
        best_fs = np.full(R, 99.0)
        for s_ in suits:
            allowed = SUIT_OF == s_
            feasible = ~(mt & ~allowed[None, :]).any(1)
            ps = np.where(feasible[r_i], plan_shanten(after, nm[r_i], allowed, False), 99).astype(np.float64)
            row_best = np.full(R, 99.0)
            np.minimum.at(row_best, r_i, ps)
            better = row_best < best_fs
            best_fs = np.where(better, row_best, best_fs)
            best_suit = np.where(better, s_, best_suit)
        for s_ in suits:
            sel = best_suit[r_i] == s_
            allowed = SUIT_OF == s_
            fs[sel] = plan_shanten(after[sel], nm[r_i[sel]], allowed, False)
            off[sel] = ~allowed[t_i[sel]]
        conn = _suited_neighbours(h)[r_i, t_i]
        key = 1e3 * fs - 10.0 * off + conn - 1e-3 * is_adv
        s_adv = np.full(R, 99.0)
        s_adv[r_i[is_adv]] = s_after[is_adv]
        g = best_fs - s_adv
        gap[rows] = np.clip(g, -99, 99).astype(np.int64)
    order = np.lexsort((key, r_i))
    first = np.ones(len(order), bool)
    first[1:] = r_i[order][1:] != r_i[order][:-1]
    pick = np.full(R, -1, dtype=np.int64)
    pick[r_i[order][first]] = t_i[order][first]
    ok = (pick >= 0) & (pick != adv)
    if kind == "flush":
        ok &= gap[rows] <= 3
    alt[rows[ok]] = pick[ok]
    return alt, gap


def no_win_alternative(teacher, obs: np.ndarray, d: Decoded, mask: np.ndarray, advice: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray]:
    """``(alt int64 [B], live_waits int64 [B])``: where the teacher takes a win on another player's discard or
    kong (a claim window), the teacher's own move with the win removed from the mask (pass, or a pong/kong the
    teacher prefers); ``-1`` elsewhere.  ``live_waits`` counts the unseen copies of the learner's waits there
    (99 elsewhere): a pass keeps the hand ready and fishes for a self-draw, which every family pays more for."""
    advice, mask, alt, live_waits, own = _departure_arrays(d, mask, advice)
    rows = np.flatnonzero(~own & (advice == A.WIN) & mask[:, A.PASS])
    if not len(rows):
        return alt, live_waits
    m2 = mask[rows].copy()
    m2[:, A.WIN] = False
    alt[rows] = np.asarray(teacher.act(obs[rows], m2), dtype=np.int64)
    waits = wait_mask(d.hand[rows].astype(np.int64), seven_pairs=teacher._sp, kinds=teacher.kinds)
    live_waits[rows] = (waits * d.live()[rows]).sum(1).astype(np.int64)
    return alt, live_waits


def win_alternative(teacher, obs: np.ndarray, d: Decoded, mask: np.ndarray, advice: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """``(alt int64 [B], live_waits int64 [B])``: wherever a win is legal, the other side of it
    (:func:`agents.players.departures.win_shortlist` of ``teacher``, whose first entry is ``advice``); ``-1``
    elsewhere.  ``live_waits`` is 99 (not computed)."""
    from agents.players.departures import win_shortlist

    advice, mask, alt, live_waits, own = _departure_arrays(d, mask, advice)
    rows = np.flatnonzero(mask[:, A.WIN])
    if len(rows):
        cand, ncand = win_shortlist(teacher, obs[rows], mask[rows])
        if (cand[:, 0] != advice[rows]).any():  # pragma: no cover - a deterministic teacher repeats its move
            raise RuntimeError("win_alternative: the teacher's move changed between two calls")
        alt[rows] = np.where(ncand >= 2, cand[:, 1], -1)
    return alt, live_waits


def _state_features(teacher, d: Decoded) -> dict[str, np.ndarray]:
    """The :data:`FEATURES` (less ``decision`` and ``flush_gap``) of a decoded batch."""
    return {
        "wall_left": d.wall_left.astype(np.int64),
        "opp_revealed": d.revealed[:, 1:].any(1).astype(np.int64),
        "shanten": shanten(d.hand.astype(np.int8), d.n_melds[:, 0], teacher._sp).astype(np.int64),
        "opp_melds": d.n_melds[:, 1:].max(1).astype(np.int64),
        "own_melds": d.n_melds[:, 0].astype(np.int64),
    }


class DepartureRule:
    """The teacher, departing with discard kind ``kind`` (:data:`DISCARD_KINDS`) wherever the state matches.

    Conditions (``None``: any): at most ``max_wall_left`` tiles in the wall, an opponent revealed or not
    (``opp_revealed``), shanten between ``min_shanten`` and ``max_shanten``, at least ``min_opp_melds`` melds shown
    by some opponent.  Deterministic like its teacher, so it can be played in duplicate tournaments
    (:func:`agents.tournament.arena.play_duplicate`) to check a rule the rollouts suggest over whole hands."""

    def __init__(self, teacher, kind: str, *, max_wall_left: int | None = None, opp_revealed: bool | None = None,
                 min_shanten: int | None = None, max_shanten: int | None = None, min_opp_melds: int | None = None,
                 name: str | None = None):
        if kind not in DISCARD_KINDS:
            raise ValueError(f"DepartureRule: kind {kind!r} is not one of {DISCARD_KINDS}")
        self.teacher = teacher
        self.kind = kind
        self.cond = {"max_wall_left": max_wall_left, "opp_revealed": opp_revealed, "min_shanten": min_shanten,
                     "max_shanten": max_shanten, "min_opp_melds": min_opp_melds}
        self.name = name or f"{teacher.name}+{kind}"
        self.departed = 0

    def applies(self, teacher, d: Decoded) -> np.ndarray:
        """bool [B]: the rows whose state matches the rule's conditions."""
        f = _state_features(teacher, d)
        c = self.cond
        ok = np.ones(len(d.phase), bool)
        if c["max_wall_left"] is not None:
            ok &= f["wall_left"] <= c["max_wall_left"]
        if c["opp_revealed"] is not None:
            ok &= f["opp_revealed"] == int(c["opp_revealed"])
        if c["min_shanten"] is not None:
            ok &= f["shanten"] >= c["min_shanten"]
        if c["max_shanten"] is not None:
            ok &= f["shanten"] <= c["max_shanten"]
        if c["min_opp_melds"] is not None:
            ok &= f["opp_melds"] >= c["min_opp_melds"]
        return ok

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.act(obs, mask)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row: the teacher's, or the departure where the rule applies."""
        mask = np.asarray(mask, dtype=bool)
        d = self.teacher.view.decode(obs)
        advice = self.teacher.decide(d, mask)
        alt, _ = discard_alternative(self.kind, self.teacher, d, mask, advice)
        go = (alt >= 0) & self.applies(self.teacher, d)
        self.departed += int(go.sum())
        return np.where(go, alt, advice)


def counterfactual_pairs(variant: str, options: Any, teacher, pairs: int, *, seed: int = 0, first_wall: int = 0,
                         branch_prob: float = 0.5, batch_pairs: int = 512, departures=("claims",),
                         keep_obs: bool = True, max_wall_left: int | None = None) -> dict:
    """Play ``pairs`` duplicate table groups (wall ``first_wall + i``, learner seat ``i % n``) and branch each
    twin once.

    Each group is a reference table and one twin per entry of ``departures`` (:data:`DEPARTURES`).
    ``teacher`` must be deterministic (an ``act(obs, mask)`` whose move depends on the observation alone), so
    that the tables of a group stay identical until they branch; a :class:`~agents.players.heuristic.HeuristicAgent`
    for the discard departures.  At each learner decision where a twin's departure applies, the unbranched twin
    branches with probability ``branch_prob`` (drawn from ``seed``).  Returns ``obs float32 [N, C, 34]`` (the
    learner's observation where it branched; only with ``keep_obs``), ``mask bool [N, 111]``, ``advice`` and
    ``alt`` (int64 [N]), ``kind`` (int64 [N], index into :data:`KINDS`), ``wall`` (int64 [N]),
    ``feat_<name>`` (int64 [N], :data:`FEATURES`) and ``advantage`` (float64 [N]: the learner's hand money on
    the twin minus on the reference table), for the twins that branched; ``pairs_played`` counts the groups.
    With ``max_wall_left`` the twins branch only where at most that many tiles are left in the wall (to study
    the end of the hand, which branching with a constant probability rarely reaches).
    """
    departures = tuple(departures)
    if pairs < 1 or batch_pairs < 1 or not 0 < branch_prob <= 1:
        raise ValueError("counterfactual_pairs: pairs, batch_pairs >= 1 and 0 < branch_prob <= 1")
    if not departures or any(dep not in DEPARTURES for dep in departures):
        raise ValueError(f"counterfactual_pairs: departures must be some of {DEPARTURES}")
    rng = np.random.default_rng(seed)
    G = len(departures)
    need_decode = any(dep != "claims" for dep in departures)
    keys = ["obs", "mask", "advice", "alt", "kind", "wall", "advantage"] + [f"feat_{f}" for f in FEATURES]
    out: dict[str, list] = {k: [] for k in keys}
    for start in range(0, pairs, batch_pairs):
        P = min(batch_pairs, pairs - start)
        T = (G + 1) * P
        eng = Engine(variant, T, options=options, record_events=False)
        n = eng.n
        enc = encoder_for(eng)
        st = eng.state
        walls = first_wall + start + np.arange(P)
        eng.reset(seed=seed, tables=np.arange(T), table_ids=np.tile(walls, G + 1), dealer=np.tile(walls, G + 1) % n)
        learner = (start + np.arange(P)) % n
        branched = np.zeros((G + 1, P), bool)
        branched[0] = True  # the reference tables always ask the teacher
        decisions = np.zeros(P, dtype=np.int64)
        rec: dict[str, list] = {k: [] for k in ["twin", "pair"] + keys if k not in ("wall", "advantage")}
        while True:
            live = np.flatnonzero(~eng.done)
            if not len(live):
                break
            g_of, p_of = live // P, live % P
            ask = branched[g_of, p_of]
            pos = np.full(T, -1, dtype=np.int64)
            pos[live] = np.arange(len(live))
            rows = live[ask]
            obs = enc.encode(st, st.actor[rows], rows)
            mask_all = eng.mask[live]
            acts = np.zeros(len(live), dtype=np.int64)
            acts[ask] = np.asarray(teacher.act(obs, mask_all[ask]), dtype=np.int64)
            follow = np.flatnonzero(~ask)
            if len(follow):  # an unbranched twin is its reference table: same state, same move
                ref = pos[p_of[follow]]
                if (ref < 0).any():  # pragma: no cover - the reference table is always at the same decision
                    raise RuntimeError("a twin table outlived its reference table")
                acts[follow] = acts[ref]
            # Branch points: reference tables at a learner decision with an unbranched twin.
            obs_row = np.full(len(live), -1, dtype=np.int64)
            obs_row[ask] = np.arange(len(rows))
            at_a = np.flatnonzero((g_of == 0) & (st.actor[live] == learner[p_of]))
            at_a = at_a[(~branched[1:, p_of[at_a]]).any(0)] if len(at_a) else at_a
            if len(at_a):
                pa = p_of[at_a]
                o_a = obs[obs_row[at_a]]
                m_a = mask_all[at_a]
                adv_a = acts[at_a]
                d_a = teacher.view.decode(o_a) if need_decode else None
                feats = _state_features(teacher, d_a if d_a is not None else teacher.view.decode(o_a))
                feats["decision"] = decisions[pa]
                late = feats["wall_left"] <= (max_wall_left if max_wall_left is not None else 10 ** 6)
                for g, dep in enumerate(departures, start=1):
                    gap = np.full(len(at_a), 99, dtype=np.int64)
                    waits = gap
                    if dep == "claims":
                        alt, kind = alternative(adv_a, m_a)
                    elif dep in ("no_win", "win"):
                        fn = no_win_alternative if dep == "no_win" else win_alternative
                        alt, waits = fn(teacher, o_a, d_a, m_a, adv_a)
                        kind = np.where(alt >= 0, KINDS.index(dep), -1)
                    else:
                        alt, gap = discard_alternative(dep, teacher, d_a, m_a, adv_a)
                        kind = np.where(alt >= 0, KINDS.index(dep), -1)
                    go = (alt >= 0) & late & ~branched[g, pa] & (rng.random(len(at_a)) < branch_prob)
                    for j in np.flatnonzero(go):
                        p = int(pa[j])
                        acts[pos[g * P + p]] = alt[j]
                        branched[g, p] = True
                        rec["twin"].append(g)
                        rec["pair"].append(p)
                        if keep_obs:
                            rec["obs"].append(o_a[j])
                        rec["mask"].append(m_a[j])
                        rec["advice"].append(adv_a[j])
                        rec["alt"].append(alt[j])
                        rec["kind"].append(kind[j])
                        for f in FEATURES:
                            rec[f"feat_{f}"].append(gap[j] if f == "flush_gap" else
                                                    waits[j] if f == "live_waits" else feats[f][j])
                decisions[pa] += 1
            full = np.zeros(T, dtype=np.int64)
            full[live] = acts
            eng.step(full)
        if rec["pair"]:
            p = np.asarray(rec["pair"])
            g = np.asarray(rec["twin"])
            money = np.asarray([[eng.results[q]["deltas"][learner[q]], eng.results[gg * P + q]["deltas"][learner[q]]]
                                for q, gg in zip(p, g)], dtype=np.float64)
            out["advantage"].append(money[:, 1] - money[:, 0])
            out["wall"].append(walls[p])
            if keep_obs:
                out["obs"].append(np.stack(rec["obs"]))
            out["mask"].append(np.stack(rec["mask"]))
            for key in ["advice", "alt", "kind"] + [f"feat_{f}" for f in FEATURES]:
                out[key].append(np.asarray(rec[key], dtype=np.int64))
    data = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in out.items()}
    if not keep_obs:
        del data["obs"]
    data["pairs_played"] = pairs
    return data


def _mean_ci(a: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % CI half-width (normal) of ``a``."""
    return float(a.mean()), (1.96 * float(a.std(ddof=1)) / np.sqrt(len(a)) if len(a) > 1 else float("nan"))


def summary(data: dict, by: str | None = None, bins=None) -> list[dict]:
    """Per kind of departure (and, with ``by``, per bin of feature ``feat_<by>``): how many branch points, the
    mean advantage with its 95 % CI (normal), and the shares where the departure gained and lost money.

    ``bins`` are the left edges of the feature's bins (default: each value its own bin)."""
    adv = np.asarray(data["advantage"])
    kinds = np.asarray(data["kind"])
    rows = []
    for k, name in enumerate(KINDS):
        sel_k = kinds == k
        if not sel_k.any():
            continue
        if by is None:
            groups = [(None, sel_k)]
        else:
            f = np.asarray(data[f"feat_{by}"])
            edges = sorted(set(f[sel_k].tolist())) if bins is None else list(bins)
            groups = []
            for i, lo in enumerate(edges):
                hi = edges[i + 1] if i + 1 < len(edges) else None
                sel = sel_k & (f >= lo) & ((f < hi) if hi is not None else True)
                groups.append((f"{lo}" if bins is None else f"{lo}..{'' if hi is None else hi - 1}", sel))
        for label, sel in groups:
            a = adv[sel]
            if not len(a):
                continue
            mean, ci = _mean_ci(a)
            row = {"kind": name, "n": int(len(a)), "mean": mean, "ci95": ci,
                   "gained": float((a > 0).mean()), "lost": float((a < 0).mean())}
            if by is not None:
                row[by] = label
            rows.append(row)
    return rows


def print_summary(rows: list[dict], by: str | None = None) -> None:
    """Print :func:`summary` rows as a table."""
    lead = f"{by:>12} " if by else ""
    print(f"{'departure':<10} {lead}{'n':>6} {'mean':>8} {'95% CI':>8} {'gained':>7} {'lost':>6}")
    for r in rows:
        lead = f"{r[by]:>12} " if by else ""
        print(f"{r['kind']:<10} {lead}{r['n']:>6} {r['mean']:>+8.3f} {r['ci95']:>8.3f} {r['gained']:>7.2f} "
              f"{r['lost']:>6.2f}")


_DEFAULT_BINS = {"wall_left": (0, 8, 16, 24, 32, 40), "shanten": (-1, 1, 2), "opp_melds": (0, 1, 2),
                 "decision": (0, 3, 6, 10), "flush_gap": (-9, 1, 2, 3, 4), "live_waits": (0, 1, 3, 5, 8)}


def main(argv=None) -> list[dict]:
    """``python -m agents.training.rollouts``: the advantage of each departure from the heuristic, printed as tables."""
    import argparse
    import time

    from agents import make_agent
    from agents.players.base import resolve_options

    ap = argparse.ArgumentParser(prog="python -m agents.training.rollouts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="kawuxing3")
    ap.add_argument("--pairs", type=int, default=2000, help="duplicate table groups (hands) to branch")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first-wall", type=int, default=0)
    ap.add_argument("--branch-prob", type=float, default=0.5)
    ap.add_argument("--batch-pairs", type=int, default=512, help="groups per engine batch")
    ap.add_argument("--departures", nargs="+", default=["claims"], choices=DEPARTURES,
                    help="one twin table per entry (default: claims)")
    ap.add_argument("--max-wall-left", type=int, default=None, help="branch only with at most this many tiles left")
    ap.add_argument("--by", nargs="*", default=[], choices=FEATURES, help="also split the table by these features")
    ap.add_argument("--teacher", default="heuristic", help="a deterministic built-in agent (heuristic, heuristic-flush)")
    ap.add_argument("--qixing-wait", type=int, default=None,
                    help="Gejiu: the teacher (heuristic or heuristic-flush) with this qixing_wait (heuristic-advice-v3's is 10)")
    ap.add_argument("--save", default=None, help="write the branch points (less observations) to this .npz")
    args = ap.parse_args(argv)
    if args.pairs < 1 or not 0 < args.branch_prob <= 1 or args.seed < 0 or args.first_wall < 0 or args.batch_pairs < 1:
        ap.error("--pairs and --batch-pairs must be >= 1, --branch-prob in (0, 1], --seed and --first-wall >= 0")
    opts = resolve_options(args.variant, None)
    if args.qixing_wait is not None:
        from agents.players.heuristic import heuristic_player

        try:
            teacher = heuristic_player(args.teacher, args.variant, opts, qixing_wait=args.qixing_wait)
        except ValueError as exc:
            ap.error(f"--qixing-wait: {exc}")
    else:
        teacher = make_agent(args.teacher, args.variant, opts)
    cpu = time.process_time()
    data = counterfactual_pairs(args.variant, opts, teacher, args.pairs,
                                seed=args.seed, first_wall=args.first_wall, branch_prob=args.branch_prob,
                                batch_pairs=args.batch_pairs, departures=args.departures, keep_obs=False,
                                max_wall_left=args.max_wall_left)
    rows = summary(data)
    print(f"{args.pairs} groups, {len(data['advantage'])} branch points, {time.process_time() - cpu:.0f} CPU s; "
          "advantage = learner money with the departure minus with the heuristic's move")
    print_summary(rows)
    for f in args.by:
        print()
        print_summary(summary(data, f, _DEFAULT_BINS.get(f)), f)
    if args.save:
        np.savez_compressed(args.save, **{k: v for k, v in data.items() if k != "pairs_played"})
    return rows


if __name__ == "__main__":
    main()
