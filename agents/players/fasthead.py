"""The compiled improved player: the compiled heuristic-flush twin plus a checkpoint's departure head, in numba.

This module owns :class:`FastHeadPlayer` ("fast + head"): for a batch of engine tables, in one compiled call, the
compiled player's shortlist (:func:`agents.players.fastplay.candidates_tables`: its choice first, then its next
two), ``candidate-features-v1`` of each candidate (:func:`_features`, the numbers of
:meth:`agents.players.departures.CandidateFeatures.per_candidate`) and the departure head's forward pass
(standardisation, each member's two hidden ReLU layers, the members' mean, the ``tau`` rule of
:func:`agents.players.departures.choose`); it plays the alternative of largest predicted gain where that gain
exceeds ``tau``, and the compiled player's choice elsewhere.  :meth:`FastHeadPlayer.rollout` plays tables to the
end of the hand, so expert iteration can roll out with the improved player (``python -m agents.training.exit label
--rollout_policy CKPT``, docs/experiments/expert-iteration.md, "Round 2").

**What it is a twin of.**  :class:`agents.players.policy.PolicyAgent` on a checkpoint with an advised network and a
``candidate-features-v1`` head (``kawuxing3-default.pt``): its network plays ``heuristic-flush``'s move (the advice
enters its logits with weight 10; it played another at 2 of 125,000 decisions, expert-iteration.md) and its head
departs from ``heuristic-flush``'s Python shortlist.  The compiled player replaces both with the compiled twin
(``fast``, which plays ``heuristic-flush``'s moves at 99.7 % of Kawuxing decisions, tests/test_twins.py).  The
network itself is not evaluated: this player takes only checkpoints whose network reads ``heuristic-advice-v2``.
tests/test_fasthead.py holds the features equal to the Python ones (float32, every decision kind) and the moves
to ``PolicyAgent``'s, explaining each difference.

**What it reads.**  As :mod:`agents.players.fastplay`: for the acting seat only what that seat sees (its own
concealed tiles, every seat's melds and discards, revealed players' face-up tiles, the wall count, the tile under
claim), from the engine's packed state.

**Refusals.**  A checkpoint without a departure head, with another feature set or scope, with a network that does
not play the advice, or whose head the Python features no longer reproduce (the fingerprint check of
:func:`agents.players.departures.check_part`) is refused with a one-line :class:`ValueError`; so is a rule set on
which the compiled features differ from :class:`~agents.players.departures.CandidateFeatures` on fixed positions
(:func:`check_features`, run once per rule set and process).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.departures import CAND_FEATURES, CANDIDATES, DECISION_FEATURES, FEATURES, KINDS, PAIR_FEATURES
from agents.players.fastkernels import PC_KINDS, PC_N, PC_SP, _WS, _EVI, _shanten, _triplets_shanten, _ukeire
from agents.players.fastplay import FastPlayer, _danger, _decide_one, play_out
from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.engine.jit import njit
from mjenv.engine.state import (O8_ACTOR, O8_CLAIM_TILE, O8_HAND, O8_HIDDEN, O8_MELDED, O8_N_MELDS, O8_PHASE,
                                O8_REVEALED, O8_RIVER, O16_BACK, O16_FRONT, O16_RIVER_LEN)

__all__ = ["FastHeadPlayer", "check_features", "features_tables", "head_predict"]

_K = CANDIDATES
_NK = len(KINDS)
_HAND0 = _NK  # first of the 10 hand features
_TILE0 = _NK + 10  # first of the 8 tile features


# ------------------------------------------------------------------------------------------- features


@njit(cache=True)
def _decision(r8, r16, s, cfg, tabs, h, mt, live, visible, danger, shown, dec):
    """The acting seat ``s``'s own hand ``h``, meld tiles ``mt``, unseen copies ``live``, seen copies ``visible``
    and ``danger`` (revealed opponents waiting on each tile), and the decision's features ``dec``; returns
    (own melds, tile under claim or -1)."""
    n = cfg[PC_N]
    kinds = cfg[PC_KINDS]
    for t in range(34):
        h[t] = r8[O8_HAND + 34 * s + t]
        mt[t] = r8[O8_MELDED + 34 * s + t]
        visible[t] = h[t]
    opp_revealed = 0
    opp_melds = 0
    for a in range(n):
        for t in range(34):
            visible[t] += r8[O8_MELDED + 34 * a + t]
        for i in range(r16[O16_RIVER_LEN + a]):
            t = r8[O8_RIVER + S.MAX_RIVER * a + i]
            if t >= 0:
                visible[t] += 1
        if a != s:
            opp_melds += r8[O8_N_MELDS + a]
            if r8[O8_REVEALED + a] != 0:
                opp_revealed += 1
                for t in range(34):
                    x = np.int64(r8[O8_HAND + 34 * a + t])
                    if r8[O8_HIDDEN + 34 * a + t] != 0:
                        x -= 3
                    visible[t] += x
    for t in range(34):
        v = 4 - visible[t]
        if (kinds >> t) & 1 == 0:
            v = 0
        live[t] = min(max(v, 0), 4)
    _danger(r8, s, cfg, tabs, shown, danger)
    n_danger = 0
    for t in range(34):
        if danger[t] > 0:
            n_danger += 1
    nm = np.int64(r8[O8_N_MELDS + s])
    ph = r8[O8_PHASE]
    claim = np.int64(r8[O8_CLAIM_TILE]) if (ph == S.CLAIM or ph == S.ROB) else np.int64(-1)
    left = np.int64(r16[O16_BACK]) - np.int64(r16[O16_FRONT])
    dec[0] = np.float32(left / 40.0)
    dec[1] = opp_revealed
    dec[2] = 1.0 if r8[O8_REVEALED + s] != 0 else 0.0
    dec[3] = opp_melds
    dec[4] = nm
    dec[5] = n_danger
    dec[6] = 1.0 if ph == S.CLAIMED else 0.0
    dec[7] = 1.0 if claim >= 0 else 0.0
    return nm, claim


@njit(cache=True)
def _kind(a):
    """The index in :data:`agents.players.departures.KINDS` of action ``a`` (``candidate_kinds``)."""
    if a >= 0 and a < A.LIANG:
        return 0
    if a >= A.LIANG and a < A.KONG_SELF:
        return 1
    if a >= A.KONG_SELF and a < A.PONG:
        return 2
    if a == A.PONG:
        return 3
    if a == A.KONG_CLAIM:
        return 4
    if a == A.PASS:
        return 5
    return 6


@njit(cache=True)
def _features(r8, r16, cand, ncand, cfg, tab, tabs, ws, wi, per, dec):
    """``candidate-features-v1`` of the acting seat of table row ``(r8, r16)`` for its shortlist ``cand`` (``ncand``
    entries): ``per`` float32 [K, CAND_FEATURES] (zeros past ``ncand``) and ``dec`` float32 [DECISION_FEATURES].
    Work rows: ``wi[0:9]`` (the fast player's ukeire uses ``wi[_EVI + 4]``) and scratch ``ws``."""
    s = np.int64(r8[O8_ACTOR])
    h0 = wi[0]
    mt0 = wi[1]
    live = wi[2]
    visible = wi[3]
    danger = wi[4]
    shown = wi[5]
    h = wi[6]
    mt = wi[7]
    kept = wi[8]
    ones = wi[9]
    nm, claim = _decision(r8, r16, s, cfg, tabs, h0, mt0, live, visible, danger, shown, dec)
    sp = cfg[PC_SP] != 0
    kinds = cfg[PC_KINDS]
    for t in range(34):
        ones[t] = 1
    K = per.shape[0]
    for k in range(K):
        for f in range(CAND_FEATURES):
            per[k, f] = 0.0
        if k >= ncand:
            continue
        a = cand[k]
        kind = _kind(a)
        for t in range(34):
            h[t] = h0[t]
            mt[t] = mt0[t]
        n2 = nm
        tile = -1
        if kind <= 1:
            tile = a % 34
            h[tile] -= 1
        elif kind == 2:
            kt = a - A.KONG_SELF
            if h[kt] == 4:
                h[kt] -= 4
                n2 += 1
                mt[kt] += 4
            else:
                h[kt] -= 1
        elif kind == 3 or kind == 4:
            c = max(claim, 0)
            h[c] -= 2 if kind == 3 else 3
            mt[c] += 3 if kind == 3 else 4
            n2 += 1
        elif a >= A.CHI_LOW and a <= A.CHI_HIGH:
            c = max(claim, 0)
            low = c - (a - A.CHI_LOW)
            for j in range(3):
                if low + j != c:
                    h[low + j] -= 1
                mt[low + j] += 1
            n2 += 1
        total = 0
        for t in range(34):
            h[t] = min(max(h[t], 0), 4)
            total += h[t]
        per[k, kind] = 1.0
        # the hand it leaves
        sh = _shanten(h, n2, sp, tab, ws)
        flush = 99
        for su in range(3):
            feasible = True
            off = 0
            for t in range(34):
                in_suit = t >= 9 * su and t < 9 * su + 9
                if mt[t] > 0 and not (in_suit or t >= 27):
                    feasible = False
                if in_suit:
                    kept[t] = h[t]
                else:
                    kept[t] = 0
                    off += h[t]
            if not feasible:
                continue
            ps = _shanten(kept, n2, sp, tab, ws)
            discarding = 1 if (total + 3 * n2) % 3 == 2 else 0
            flush = min(flush, max(ps, off - discarding))
        trip = _triplets_shanten(h, n2, 0)
        acc = 0
        n_imp = 0
        if (total + 3 * n2) % 3 == 1:
            _, _, bits = _ukeire(h, n2, sp, ones, kinds, ws, wi, tab)
            for t in range(34):
                if (bits >> t) & 1:
                    n_imp += 1
                    acc += live[t]
        held_danger = 0
        honors = 0
        pairs = 0
        trips = 0
        for t in range(34):
            if h[t] > 0 and danger[t] > 0:
                held_danger += 1
            if t >= 27:
                honors += h[t]
            if h[t] >= 2:
                pairs += 1
            if h[t] >= 3:
                trips += 1
        per[k, _HAND0 + 0] = min(sh, 8)
        per[k, _HAND0 + 1] = min(flush, 8)
        per[k, _HAND0 + 2] = min(trip, 12)
        per[k, _HAND0 + 3] = acc
        per[k, _HAND0 + 4] = n_imp
        per[k, _HAND0 + 5] = held_danger
        per[k, _HAND0 + 6] = honors
        per[k, _HAND0 + 7] = pairs
        per[k, _HAND0 + 8] = trips
        per[k, _HAND0 + 9] = acc if sh == 0 else 0
        # the tile it gives away
        if tile >= 0:
            per[k, _TILE0 + 0] = danger[tile]
            per[k, _TILE0 + 1] = live[tile]
            per[k, _TILE0 + 2] = visible[tile]
            if tile >= 27:
                per[k, _TILE0 + 3] = 1.0
            else:
                r = tile % 9
                if r == 0 or r == 8:
                    per[k, _TILE0 + 4] = 1.0
                if r == 4:
                    per[k, _TILE0 + 5] = 1.0
        if k == 0:
            per[k, _TILE0 + 6] = 1.0
        per[k, _TILE0 + 7] = 1.0


@njit(cache=True, fastmath=True)
def _gains(per, dec, ncand, mean, scale, w1, b1, w2, b2, w3, b3, x, z, u, v, pred):
    """The head's predicted gain ``pred[j]`` of alternative ``j + 1`` over the choice (``j + 1 < ncand``), in
    float32 as the torch head: each member's ``relu(W2 relu(W1 z + b1) + b2)`` read out by ``w3``, the members'
    mean, over the standardised inputs ``z = (x - mean) / scale``, which :func:`head_arrays` folds into the first
    layer (``w1`` / scale, ``b1`` less the mean's share) so that the many zero inputs cost nothing.  ``w1`` [M, F, H]
    and ``w2`` [M, H, H] are stored input-major, so each layer is a sum of scaled weight rows, which the compiler
    vectorises.  ``x``, ``z`` [J, F], ``u``, ``v`` [J, H]: scratch, one row per alternative (``z``, ``mean`` and
    ``scale`` are not read: the folded weights hold them)."""
    M = w1.shape[0]
    F = w1.shape[1]
    H = w1.shape[2]
    J = ncand - 1
    for j in range(J):
        k = j + 1
        for f in range(CAND_FEATURES):
            x[j, f] = per[k, f]
            x[j, CAND_FEATURES + f] = per[k, f] - per[0, f]
        for f in range(DECISION_FEATURES):
            x[j, 2 * CAND_FEATURES + f] = dec[f]
        pred[j] = 0.0
    for m in range(M):
        for j in range(J):
            for i in range(H):
                u[j, i] = b1[m, i]
                v[j, i] = b2[m, i]
        for f in range(F):
            for j in range(J):
                xf = x[j, f]
                if xf != 0.0:  # most inputs are 0 (kinds, tile features, differences): the mean is in b1
                    for i in range(H):
                        u[j, i] += w1[m, f, i] * xf
        for j in range(J):
            for i in range(H):
                if u[j, i] < 0.0:
                    u[j, i] = 0.0
        for f in range(H):
            for j in range(J):
                uf = u[j, f]
                if uf != 0.0:
                    for i in range(H):
                        v[j, i] += w2[m, f, i] * uf
        for j in range(J):
            out = b3[m]
            for i in range(H):
                if v[j, i] > 0.0:
                    out += w3[m, i] * v[j, i]
            pred[j] += out
    for j in range(J):
        pred[j] = pred[j] / np.float32(M)


@njit(cache=True)
def _head_work(w1):
    """The head's working rows for a shortlist (:func:`_gains`' ``x``, ``z``: inputs; ``u``, ``v``: hidden units)."""
    F = w1.shape[1]
    H = w1.shape[2]
    return (np.zeros((_K, F), np.float32), np.zeros((_K, F), np.float32), np.zeros((_K, H), np.float32),
            np.zeros((_K, H), np.float32))


@njit(cache=True, nogil=True)
def head_decide_tables(b8, b16, mask, idx, cfg, kc, tab, tabs, best_tab, gain_tab, mean, scale, w1, b1, w2, b2, w3,
                       b3, tau, out, stats):
    """``out[b]`` = the improved player's action at every table ``b`` in ``idx`` whose hand is live (others:
    untouched): the compiled player's shortlist, then the head's alternative where its predicted gain exceeds
    ``tau``.  ``stats[0]`` += decisions made, ``stats[1]`` += decisions the head read, ``stats[2]`` += departures.
    Returns the decisions made."""
    ws = np.empty((_WS, 2, 5), np.int16)
    wi = np.zeros((_EVI + 5, 34), np.int64)
    fws = np.empty((_WS, 2, 5), np.int16)  # the features' own work arrays: no state shared with the decisions
    fwi = np.zeros((_EVI + 5, 34), np.int64)
    full8 = np.zeros(34, np.int8)
    work8 = np.zeros(34, np.int8)
    cand_a = np.empty(160, np.int64)
    cand_v = np.empty(160, np.float64)
    sl = np.empty(_K, np.int64)
    per = np.zeros((_K, CAND_FEATURES), np.float32)
    dec = np.zeros(DECISION_FEATURES, np.float32)
    x, z, u, v = _head_work(w1)
    pred = np.zeros(_K, np.float32)
    n = 0
    for j in range(idx.shape[0]):
        b = idx[j]
        if b8[b, O8_PHASE] == S.DONE:
            continue
        m = mask[b]
        k = _decide_one(b8[b], b16[b], m, cfg, kc, tab, tabs, best_tab, gain_tab, ws, wi, full8, work8, cand_a,
                        cand_v, True)
        kk = 0
        for i in range(k):
            if kk < _K and m[cand_a[i]] and cand_v[i] > -1e299:
                sl[kk] = cand_a[i]
                kk += 1
        n += 1
        out[b] = cand_a[0]
        if kk < 2:
            continue
        _features(b8[b], b16[b], sl, kk, cfg, tab, tabs, fws, fwi, per, dec)
        _gains(per, dec, kk, mean, scale, w1, b1, w2, b2, w3, b3, x, z, u, v, pred)
        stats[1] += 1
        best = -np.inf
        col = 0
        for i in range(kk - 1):
            if np.float64(pred[i]) > best:
                best = np.float64(pred[i])
                col = i + 1
        if best > tau:
            out[b] = sl[col]
            stats[2] += 1
    stats[0] += n
    return n


@njit(cache=True, nogil=True)
def features_tables(b8, b16, idx, cand, ncand, cfg, tab, tabs, per, dec):
    """``candidate-features-v1`` of the acting seat of each table ``idx[j]`` for the shortlist ``cand[j]``
    (``ncand[j]`` entries): ``per[j]`` float32 [K, CAND_FEATURES], ``dec[j]`` float32 [DECISION_FEATURES]."""
    ws = np.empty((_WS, 2, 5), np.int16)
    wi = np.zeros((_EVI + 5, 34), np.int64)
    for j in range(idx.shape[0]):
        b = idx[j]
        _features(b8[b], b16[b], cand[j], ncand[j], cfg, tab, tabs, ws, wi, per[j], dec[j])


@njit(cache=True)
def head_predict(per, dec, ncand, mean, scale, w1, b1, w2, b2, w3, b3, pred):
    """``pred[j, i]``: the head's predicted gain (float32) of alternative ``i + 1`` of decision ``j`` from its features
    ``per[j]``, ``dec[j]`` (:func:`features_tables`); -inf past ``ncand[j] - 1``."""
    x, z, u, v = _head_work(w1)
    for j in range(per.shape[0]):
        for i in range(pred.shape[1]):
            pred[j, i] = -np.inf
        _gains(per[j], dec[j], ncand[j], mean, scale, w1, b1, w2, b2, w3, b3, x, z, u, v, pred[j])


# ------------------------------------------------------------------------------------------- Python side


def head_arrays(part: dict) -> dict[str, np.ndarray]:
    """The tensors of a ``"departures"`` entry as the contiguous float32 arrays :func:`head_decide_tables` reads:
    ``mean``, ``scale`` [F]; ``w1`` [M, F, H] and ``w2`` [M, H, H] (input-major: torch's weights transposed; ``w1``
    and ``b1`` with the input standardisation folded in, :func:`_gains`), ``b1``, ``b2``, ``w3`` [M, H], ``b3`` [M]."""
    st = {k: np.asarray(v.detach().cpu().numpy() if hasattr(v, "detach") else v, np.float32) for k, v in part["state"].items()}
    M = int(part["arch"]["members"])

    def stack(layer, what):
        return np.ascontiguousarray(np.stack([st[f"members.{m}.{layer}.{what}"] for m in range(M)]), np.float32)

    w1 = stack(0, "weight").astype(np.float64)  # [M, H, F]; z = (x - mean) / scale folded in, in float64
    mean, scale = st["mean"].astype(np.float64), st["scale"].astype(np.float64)
    w1 = w1 / scale[None, None, :]
    b1 = stack(0, "bias").astype(np.float64) - (w1 * mean[None, None, :]).sum(2)
    return {"mean": np.ascontiguousarray(st["mean"]), "scale": np.ascontiguousarray(st["scale"]),
            "w1": np.ascontiguousarray(w1.transpose(0, 2, 1), np.float32), "b1": np.ascontiguousarray(b1, np.float32),
            "w2": np.ascontiguousarray(stack(2, "weight").transpose(0, 2, 1)), "b2": stack(2, "bias"),
            "w3": np.ascontiguousarray(stack(4, "weight")[:, 0, :]), "b3": np.ascontiguousarray(stack(4, "bias")[:, 0])}


CHECK_TABLES = 16
CHECK_DECISIONS = 400
CHECK_SEED = 20_261_206


def check_features(rules) -> None:
    """Raise ``ValueError`` unless the compiled features equal :meth:`CandidateFeatures.per_candidate` (float32,
    exactly) on fixed positions of rule set ``rules`` (a :class:`mjenv.rules.Rules`): ``CHECK_DECISIONS`` decisions with
    a shortlist of two or more of the compiled player's self-play on walls ``(CHECK_SEED, i)``.  Cached per process."""
    problem = _feature_problem(rules)
    if problem:
        raise ValueError(problem)


@functools.lru_cache(maxsize=8)
def _feature_problem(rules) -> str:
    from agents.players.departures import CandidateFeatures

    player = FastPlayer(rules)
    py = CandidateFeatures(rules, None, FEATURES)
    for obs, mask, cand, ncand, per, dec in recorded_decisions(player, CHECK_TABLES, CHECK_DECISIONS, CHECK_SEED):
        want_per, want_dec = py.per_candidate(obs, mask, cand, ncand)
        bad = np.flatnonzero(~((want_per == per).all((1, 2)) & (want_dec == dec).all(1)))
        if len(bad):
            j = int(bad[0])
            return (f"the compiled candidate-features-v1 differ from CandidateFeatures on {len(bad)} of {len(mask)} "
                    f"decisions of {rules.variant} (first: shortlist {cand[j].tolist()}); the compiled improved player "
                    "cannot play this rule set")
    return ""


def recorded_decisions(player: FastPlayer, tables: int, decisions: int, seed: int, batches: bool = True):
    """Yield, for batches of decisions with a shortlist of two or more of ``player``'s self-play (walls ``(seed, i)``,
    the dealer rotating), ``(obs, mask, cand, ncand, per, dec)``: the acting seats' ``mjenv-obs-v1`` rows, masks,
    the compiled shortlists and the compiled features (:func:`features_tables`), until ``decisions`` are yielded."""
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine.core import Engine

    eng = Engine(player.rules.variant, tables, options=player.opts, record_events=False)
    enc = encoder_for(eng)
    st = eng.state
    eng.reset(seed=seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    deal = 0
    n = 0
    acts = np.full(tables, -1, np.int64)
    while n < decisions:
        if eng.done.all():
            deal += 1
            eng.reset(seed=seed, table_ids=np.arange(tables) + deal * tables, dealer=np.arange(tables) % eng.n)
        live = np.flatnonzero(~eng.done)
        cand, ncand = player.candidates(eng, live, CANDIDATES)
        sel = np.flatnonzero(ncand >= 2)[: decisions - n]
        if len(sel):
            b = live[sel]
            per = np.zeros((len(b), CANDIDATES, CAND_FEATURES), np.float32)
            dec = np.zeros((len(b), DECISION_FEATURES), np.float32)
            features_tables(eng._b8, eng._b16, b, cand[sel], ncand[sel], player.cfg, player._tab, player._tabs,
                            per, dec)
            obs = enc.encode(st, st.actor[b].astype(np.int64), b, engine=eng)
            yield obs, eng.mask[b].copy(), cand[sel], ncand[sel], per, dec
            n += len(b)
        player.decide(eng, live, out=acts)
        eng.step(acts)


class FastHeadPlayer:
    """The compiled improved player of a checkpoint with a ``candidate-features-v1`` departure head (see the module
    docstring): :meth:`decide` for a batch of engine tables, :meth:`candidates` (the compiled player's shortlist, as
    :class:`~agents.players.fastplay.FastPlayer`), :meth:`rollout` to the end of the hand."""

    def __init__(self, checkpoint, variant: str | None = None, options: Any = None, *, tau: float | None = None):
        """``checkpoint``: a path or a loaded payload; ``variant`` / ``options``: the rules to play (default: the
        checkpoint's own); ``tau``: a threshold in place of the head's."""
        from agents.players.base import resolve_rules
        from agents.players.policy import check_compatible, check_payload, load_checkpoint

        where = "checkpoint" if isinstance(checkpoint, dict) else str(checkpoint)
        if variant is None:
            variant = (checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint)).get("variant", "kawuxing3")
        self.rules = resolve_rules(variant, options)
        ck = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint, self.rules)
        check_payload(ck, where, self.rules)  # includes the departure head's fingerprint against today's features
        part = ck.get("departures")
        if not isinstance(part, dict):
            raise ValueError(f"{where}: no departure head; the compiled improved player plays a checkpoint's head")
        if part.get("features") != FEATURES or part.get("scope", "all") != "all" or part.get("candidates") != CANDIDATES:
            raise ValueError(f"{where}: its departure head reads {part.get('features')!r} (scope "
                             f"{part.get('scope', 'all')!r}); the compiled player computes {FEATURES} over a shortlist "
                             f"of {CANDIDATES}, scope 'all' only")
        if ck.get("features") != "heuristic-advice-v2":
            raise ValueError(f"{where}: its network reads {ck.get('features')!r}, not heuristic-flush's advice "
                             "(heuristic-advice-v2); the compiled player plays the advisor's move in place of the "
                             "network, which only an advised network makes its twin")
        check_compatible(ck, self.rules.variant, self.rules.options, where=where)
        self.fast = FastPlayer(self.rules)
        self.variant = self.fast.variant
        self.opts = self.fast.opts
        self.cfg = self.fast.cfg
        self._tab, self._tabs = self.fast._tab, self.fast._tabs
        check_features(self.rules)
        self.weights = head_arrays(part)
        if self.weights["w1"].shape[1] != PAIR_FEATURES:
            raise ValueError(f"{where}: its departure head reads {self.weights['w1'].shape[1]} inputs, not "
                             f"{PAIR_FEATURES}")
        self.tau = float(part["tau"] if tau is None else tau)
        self.name = "fasthead:" + (Path(where).stem if where != "checkpoint" else "policy")
        self.stats = np.zeros(3, np.int64)
        """decisions made, decisions the head read (a shortlist of two or more), departures."""

    def _args(self, engine, idx, out):
        w = self.weights
        f = self.fast
        return (engine._b8, engine._b16, engine.mask, idx, f.cfg, f.kc, f._tab, f._tabs, f._best, f._gain,
                w["mean"], w["scale"], w["w1"], w["b1"], w["w2"], w["b2"], w["w3"], w["b3"], self.tau, out,
                self.stats)

    def decide(self, engine, tables=None, out: np.ndarray | None = None) -> np.ndarray:
        """int64 [B]: the improved player's action at every live table (``tables``: only those; others keep
        ``out``'s entries, default -1)."""
        self.fast._check(engine)
        idx = engine._all if tables is None else np.ascontiguousarray(tables, dtype=np.int64).reshape(-1)
        if out is None:
            out = np.full(engine.batch_size, -1, np.int64)
        head_decide_tables(*self._args(engine, idx, out))
        return out

    def predict(self, per: np.ndarray, dec: np.ndarray, ncand: np.ndarray) -> np.ndarray:
        """float32 [N, K - 1]: the compiled head's predicted gains from features ``per`` [N, K, CAND_FEATURES] and
        ``dec`` [N, DECISION_FEATURES] (:func:`features_tables`) of shortlists of ``ncand`` entries (-inf past them)."""
        w = self.weights
        per = np.ascontiguousarray(per, np.float32)
        pred = np.empty((len(per), CANDIDATES - 1), np.float32)
        head_predict(per, np.ascontiguousarray(dec, np.float32), np.ascontiguousarray(ncand, np.int64), w["mean"],
                     w["scale"], w["w1"], w["b1"], w["w2"], w["b2"], w["w3"], w["b3"], pred)
        return pred

    def candidates(self, engine, tables, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The compiled player's shortlist (:meth:`agents.players.fastplay.FastPlayer.candidates`)."""
        return self.fast.candidates(engine, tables, k)

    def rollout(self, engine, max_steps: int = 10_000) -> int:
        """Play every live table of ``engine`` to the end of its hand with this player in every seat; returns the
        number of decisions made."""
        self.fast._check(engine)
        acts = np.zeros(engine.batch_size, np.int64)
        return play_out(engine, head_decide_tables, self._args(engine, engine._all, acts), acts, max_steps)

    def act(self, obs, mask, *, engine=None, tables=None) -> np.ndarray:
        """One action per row: the acting seats of ``engine``'s ``tables`` (an agent reading the engine, as
        :class:`agents.players.fastplay.FastAgent`)."""
        if engine is None or tables is None:
            raise ValueError("the compiled improved player plays on the engine's tables: act(obs, mask, engine=, tables=)")
        tables = np.asarray(tables, dtype=np.int64).reshape(-1)
        return self.decide(engine, tables)[tables]

    uses_obs = False
    uses_engine = True
    __call__ = act
