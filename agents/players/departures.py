"""Learned departures from the advisor: a gain model over the advisor's own shortlist, fitted to search values.

This module owns the feature set ``candidate-features-v1``, the departure head a checkpoint may carry
(``"departures"`` in :mod:`agents.players.policy`'s format) and its play; the training stage that fits it
(``train.py --departure_decisions N``, the ``long`` config) is :mod:`agents.training.departures`.

**What it decides.**  At a decision, the advisor (``heuristic-flush``, the player the advised network copies)
ranks its candidates (:meth:`agents.players.heuristic.HeuristicAgent.candidates`: its choice first, then the
alternatives it rates next; at most :data:`CANDIDATES`).  For each alternative the head predicts its **gain**
over the advisor's choice: the seat's expected money from this decision to the end of the hand if it plays
that alternative now and the advisor's moves afterwards, less the same after the advisor's choice.  The policy
plays the alternative of largest predicted gain where that gain exceeds ``tau``, and the advisor's choice
elsewhere.  By the policy improvement theorem a departure whose true gain is positive makes the player better;
``tau`` keeps the departures to those the model is sure enough of.

**What it learns from.**  :func:`agents.training.distill.label_states` without verification: self-play of the compiled
player (:class:`agents.players.fastplay.FastPlayer`, ``heuristic-flush``'s core) in every seat; a decision is labelled
with probability ``label_prob``, each of its candidates played in the same 32 sampled worlds and rolled out to
the end of the hand.  The mean paired difference of an alternative and the choice is an unbiased (noisy)
estimate of that gain, whatever the model; the head is fitted to those differences by least squares, so it
estimates their expectation given the features.

**Features** (:class:`CandidateFeatures`, computed from the observation, the mask and the shortlist alone).
Per candidate (``CAND_FEATURES`` = 25 numbers): its kind (discard, 亮倒, own kong, pong, claimed kong, pass,
other, chi included); the hand it leaves (before any draw) — shanten (standard or seven pairs), the best 清一色 plan's
shanten, the all-triplets shanten, live improving draws and their kinds when it is 13 tiles, held tiles a
revealed opponent waits on, honors, pairs, triplets, and the live waits when ready; the tile it gives away
(danger, live copies, visible copies, honor, terminal, five) and whether it is the choice.  Per decision
(``DECISION_FEATURES`` = 8): live wall, opponents revealed, own 亮倒, opponents' melds, own melds, kinds a
revealed opponent waits on, after a claim, in a claim window.  The head reads, per alternative, its own
features, their difference from the choice's, and the decision's: ``PAIR_FEATURES`` = 58.

**``candidate-features-v2``** (Gejiu only, :data:`FEATURE_SETS`): v1 and, per candidate, what the ready hand it
leaves is worth (:data:`WAIT_FEATURES` = 3, :meth:`CandidateFeatures.wait_values`), with its difference from the
choice's: 64 inputs.  ``heuristic-flush`` ranks Gejiu's ready discards by live waits alone (Kawuxing's weighs
them by hand value), while Gejiu's patterns multiply (七对 or 清一色 is 4× a 平胡, docs/rules/gejiu.md §6.8):
between two ready discards the one whose waits score more can gain although it has fewer, and v1 cannot see it
(docs/experiments/four-player.md, "Gejiu: what the head could not see").

**The advisor** (:data:`ADVISORS`): the advice feature set whose player ranks the shortlist and whose move the
advised network plays — ``heuristic-advice-v2`` (``heuristic-flush``; a head saved without an ``"advisor"`` entry reads
it) or ``heuristic-advice-v3`` (the same player with Gejiu's 七星 wait, :data:`agents.players.advice.ADVISOR_KEYWORDS`).
A head of scope ``all`` or ``ready`` never departs where a win is legal: there v2's shortlist is the win alone, and v3's
passes it to wait for 七星 (the rule its network plays).  A head of scope ``win`` departs only there, between the
advisor's move and the other side of the win (:func:`win_shortlist`: where the advisor takes the win, its own move
without it — a discard that keeps the hand ready, or a pass; where v3's advisor passes it, the win), e.g. passing a
self-drawn six-honor 烂牌 to wait for 七星, which v3's hand-set rule never does.

The head is an ensemble of small MLPs (mean of ``members`` predictions; ``hidden`` units, two layers) over
standardised inputs; its tensors live in the checkpoint with the normalisation, ``tau`` and a fingerprint of the
shortlist and features on fixed positions (:func:`departure_fingerprint`), which the checkpoint is refused
without: a change to the advisor's ranking or to the features would change what the head reads (a v3 head's
fingerprint also hashes the advisor's name; a v2 head's is what it was before v3 heads existed).
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine import state as S

FEATURES = "candidate-features-v1"
CANDIDATES = 3
KINDS = ("discard", "liang", "kong", "pong", "claim_kong", "pass", "other")
CAND_FEATURES = len(KINDS) + 10 + 8
DECISION_FEATURES = 8
PAIR_FEATURES = 2 * CAND_FEATURES + DECISION_FEATURES
FEATURES_V2 = "candidate-features-v2"
WAIT_FEATURES = 3
FEATURE_SETS = {FEATURES: PAIR_FEATURES, FEATURES_V2: PAIR_FEATURES + 2 * WAIT_FEATURES}
"""Input width of the head per feature set (``candidate-features-v2`` is v1 and the wait values, Gejiu only)."""
ADVISORS = ("heuristic-advice-v2", "heuristic-advice-v3")
"""Advice feature sets whose advisor a head may re-rank (:class:`CandidateFeatures`' ``advisor``); the first is the
default, and what a head saved without an ``"advisor"`` entry reads."""
ADVISOR = ADVISORS[0]
SCOPES = ("all", "ready", "win")
"""Where a head may depart (:func:`in_scope`): every alternative, or (``ready``, ``candidate-features-v2`` only) an
alternative that leaves a ready hand where the choice does too; a head is fitted on the alternatives in its scope.
``win`` (``candidate-features-v2`` only) departs only where a win is legal, over :func:`win_shortlist` (the advisor's
move and the other side of the win) instead of the advisor's ranking."""
DEFAULTS = {"members": 5, "hidden": 64, "epochs": 20, "lr": 1e-3, "weight_decay": 1e-4, "tau": 0.1,
            "batch_size": 512, "clip": 20.0}
"""Fit settings of :func:`fit_head` and the departure threshold (money per hand) of a fitted head."""


def candidate_kinds(actions: np.ndarray) -> np.ndarray:
    """int [...]: the index in :data:`KINDS` of each action id (-1 padding counts as ``other``)."""
    a = np.asarray(actions)
    out = np.full(a.shape, KINDS.index("other"), np.int64)
    out[(a >= 0) & (a < A.LIANG)] = 0
    out[(a >= A.LIANG) & (a < A.KONG_SELF)] = 1
    out[(a >= A.KONG_SELF) & (a < A.PONG)] = 2
    out[a == A.PONG] = 3
    out[a == A.KONG_CLAIM] = 4
    out[a == A.PASS] = 5
    return out


class CandidateFeatures:
    """Computes the feature set ``version`` (:data:`FEATURE_SETS`) over the shortlists of the advisor of the advice set
    ``advisor`` (:data:`ADVISORS`) for batches of one variant and rule set (see the module docstring)."""

    def __init__(self, variant: str = "kawuxing3", options: Any = None, version: str = FEATURES,
                 advisor: str = ADVISOR):
        from agents.players.advice import FEATURE_SETS as ADVICE_SETS, advisor_keywords
        from agents.players.heuristic import HeuristicAgent, heuristic_player

        if version not in FEATURE_SETS:
            raise ValueError(f"departure features {version!r} is not one of {', '.join(FEATURE_SETS)}")
        if advisor not in ADVISORS:
            raise ValueError(f"departure advisor {advisor!r} is not one of {', '.join(ADVISORS)}")
        self.version = version
        self.advisor_set = advisor
        self.width = FEATURE_SETS[version]
        self.advisor = heuristic_player(ADVICE_SETS[advisor], variant, options,
                                        **advisor_keywords(advisor, variant, options))
        self.variant = self.advisor.variant
        assert isinstance(self.advisor, HeuristicAgent)
        if version == FEATURES_V2 and self.advisor.family != "gejiu":
            raise ValueError(f"departure features {FEATURES_V2!r} read Gejiu's hand values; {self.variant!r} is not Gejiu")
        self.view = self.advisor.view
        self.kinds = self.view.kinds
        self._sp = self.advisor._sp

    def _hand(self, h, nm, live, meld_tiles, danger) -> np.ndarray:
        """float32 [N, 10]: what a hand ``h`` with ``nm`` melds is worth as a start (module docstring)."""
        from agents.players.plans import SUIT_OF, flush_allowed, plan_shanten, triplets_shanten
        from mjenv.encoding.shanten import shanten, ukeire

        N = len(h)
        s = shanten(h, nm, self._sp)
        allowed, feasible = flush_allowed(meld_tiles)
        allowed = allowed & (SUIT_OF < 3)[None, :]
        flush = np.full(N, 99)
        for suit in range(3):
            if feasible[:, suit].any():
                flush = np.minimum(flush, np.where(feasible[:, suit], plan_shanten(h, nm, allowed[suit], self._sp), 99))
        triplets = triplets_shanten(h, nm, 0)
        acc = np.zeros(N)
        kinds = np.zeros(N)
        thirteen = np.flatnonzero((h.sum(1) + 3 * nm) % 3 == 1)
        if len(thirteen):
            _, a, improving = ukeire(h[thirteen], nm[thirteen], live[thirteen], self.kinds, self._sp)
            acc[thirteen] = a
            kinds[thirteen] = improving.sum(1)
        return np.stack([np.minimum(s, 8), np.minimum(flush, 8), np.minimum(triplets, 12), acc, kinds,
                         ((h > 0) & (danger > 0)).sum(1), h[:, 27:].sum(1), (h >= 2).sum(1), (h >= 3).sum(1),
                         (s == 0) * acc], 1).astype(np.float32)

    def per_candidate(self, obs: np.ndarray, mask: np.ndarray, cand: np.ndarray, ncand: np.ndarray):
        """``(float32 [N, K, CAND_FEATURES], float32 [N, DECISION_FEATURES])`` for observations ``[N, C, 34]``
        (or flat), masks ``[N, 111]`` and shortlists ``cand int [N, K]`` of ``ncand`` entries (-1 padded)."""
        mask = np.asarray(mask, bool)
        N = len(mask)
        obs = np.asarray(obs, np.float32).reshape(N, *self.view.shape)
        cand = np.asarray(cand, np.int64)
        K = cand.shape[1]
        d = self.view.decode(obs)
        rows = np.arange(N)
        danger = self.advisor.danger(d, rows)
        live = d.live()
        visible = d.visible()
        hand = d.hand.astype(np.int16)
        nm = d.n_melds[:, 0].astype(np.int64)
        decision = np.stack([d.wall_left / 40.0, d.revealed[:, 1:].sum(1), d.revealed[:, 0], d.n_melds[:, 1:].sum(1),
                             nm, (danger > 0).sum(1), d.phase == S.CLAIMED, d.claim_tile >= 0], 1).astype(np.float32)
        out = np.zeros((N, K, CAND_FEATURES), np.float32)
        claim = np.clip(d.claim_tile, 0, 33)
        kind_eye = np.eye(len(KINDS), dtype=np.float32)
        for k in range(K):
            a = cand[:, k]
            kind = candidate_kinds(a)
            ok = k < np.asarray(ncand)
            h = hand.copy()
            n2 = nm.copy()
            mt = d.meld_tiles[:, 0].astype(np.int16).copy()
            tile = np.full(N, -1)
            gives = ok & (kind <= 1)
            tile[gives] = a[gives] % 34
            h[gives, tile[gives]] -= 1
            kong_t = np.clip(a - A.KONG_SELF, 0, 33)
            own_kong = ok & (kind == 2)
            concealed = own_kong & (h[rows, kong_t] == 4)
            h[concealed, kong_t[concealed]] -= 4
            n2[concealed] += 1
            mt[concealed, kong_t[concealed]] += 4
            added = own_kong & ~concealed
            h[added, kong_t[added]] -= 1
            for code, used, size in ((3, 2, 3), (4, 3, 4)):  # pong, claimed kong of the discard
                sel = ok & (kind == code)
                h[sel, claim[sel]] -= used
                n2[sel] += 1
                mt[sel, claim[sel]] += size
            chi = ok & (a >= A.CHI_LOW) & (a <= A.CHI_HIGH)  # kind "other": the two held tiles of the run leave
            if chi.any():
                low = claim[chi] - (a[chi] - A.CHI_LOW)
                for j in range(3):
                    t_j = low + j
                    h[chi, t_j] -= t_j != claim[chi]
                    mt[chi, t_j] += 1
                n2[chi] += 1
            h = np.clip(h, 0, 4).astype(np.int8)
            t = np.clip(tile, 0, 33)
            has = tile >= 0
            suited = t < 27
            out[:, k, : len(KINDS)] = kind_eye[kind]
            out[:, k, len(KINDS) : len(KINDS) + 10] = self._hand(h, n2, live, mt, danger)
            out[:, k, len(KINDS) + 10 :] = np.stack([
                has * danger[rows, t], has * live[rows, t], has * visible[rows, t], has & ~suited,
                has & suited & ((t % 9 == 0) | (t % 9 == 8)), has & suited & (t % 9 == 4),
                np.full(N, k == 0), ok], 1)
            out[~ok, k] = 0.0
        return out, decision

    def wait_values(self, obs: np.ndarray, mask: np.ndarray, cand: np.ndarray, ncand: np.ndarray) -> np.ndarray:
        """float32 [N, K, WAIT_FEATURES]: for each discard or pass candidate that leaves a ready 13-tile hand (its
        Gejiu wait set, docs/rules/gejiu.md §6.6, not empty), over its waits that score a legal win: the sum of live
        copies × the discard-win value V / 2 (a 平胡 counts 1 per live copy, as ukeire does), the largest V / 2 of a
        wait with a live copy, and the live-weighted mean V / 2 (0 with no live copy); zeros elsewhere."""
        from mjenv.rules.scoring import gejiu as G

        mask = np.asarray(mask, bool)
        N = len(mask)
        obs = np.asarray(obs, np.float32).reshape(N, *self.view.shape)
        cand = np.asarray(cand, np.int64)
        d = self.view.decode(obs)
        live = d.live()
        hand = d.hand.astype(np.int16)
        nm = d.n_melds[:, 0].astype(np.int64)
        out = np.zeros((N, cand.shape[1], WAIT_FEATURES), np.float32)
        ctx = G.GejiuContext("discard")
        melds_of: dict[int, tuple] = {}
        for k in range(cand.shape[1]):
            a = cand[:, k]
            kind = candidate_kinds(a)
            ok = (k < np.asarray(ncand)) & ((kind == 0) | (kind == 5))
            h = hand.copy()
            disc = np.flatnonzero(ok & (kind == 0))
            h[disc, a[disc]] -= 1
            rows = np.flatnonzero(ok & (h.sum(1) + 3 * nm == 13))
            if not len(rows):
                continue
            hk = np.clip(h[rows], 0, 4).astype(np.int8)
            waits = G.wait_mask(hk, hk + d.meld_tiles[rows, 0].astype(np.int8))
            for j in np.flatnonzero(waits.any(1)):
                r = int(rows[j])
                if r not in melds_of:
                    melds_of[r] = self.advisor._melds(d, r)
                total = weight = top = 0.0
                for t in np.flatnonzero(waits[j]):
                    try:
                        sc = G.score_win(hk[j], melds_of[r], int(t), ctx, self.advisor.opts)
                    except ValueError:  # a wait on a fifth copy
                        continue
                    if not sc.legal or live[r, t] <= 0:
                        continue
                    v = sc.value / 2.0
                    total += float(live[r, t]) * v
                    weight += float(live[r, t])
                    top = max(top, v)
                out[r, k] = (total, top, total / weight if weight else 0.0)
        return out

    def pairwise(self, obs, mask, cand, ncand) -> np.ndarray:
        """float32 [N, K - 1, width]: for each alternative (columns 1..K-1), its features, their difference
        from the choice's (column 0) and the decision's (what :class:`DepartureHead` reads); under
        ``candidate-features-v2`` then its wait values and their difference from the choice's."""
        per, decision = self.per_candidate(obs, mask, cand, ncand)
        K = per.shape[1]
        x = np.concatenate([per[:, 1:], per[:, 1:] - per[:, :1], np.repeat(decision[:, None], K - 1, 1)], 2)
        if self.version == FEATURES_V2:
            w = self.wait_values(obs, mask, cand, ncand)
            x = np.concatenate([x, w[:, 1:], w[:, 1:] - w[:, :1]], 2)
        return x


# ------------------------------------------------------------------------------------------ the head


def _torch():
    try:
        import torch
    except ModuleNotFoundError as exc:  # as agents.players.policy says it: only the policy and its head need torch
        raise ModuleNotFoundError(
            "the policy agent needs torch: pip install torch==2.13.0 (or the project's 'train' extra)") from exc
    return torch


def make_head(members: int = DEFAULTS["members"], hidden: int = DEFAULTS["hidden"], inputs: int = PAIR_FEATURES):
    """A :class:`DepartureHead` torch module: ``members`` MLPs ``inputs -> hidden -> hidden -> 1`` whose mean
    is the predicted gain, over inputs standardised by its ``mean`` / ``scale`` buffers (``inputs``: the feature
    set's width, :data:`FEATURE_SETS`)."""
    torch = _torch()
    nn = torch.nn

    class DepartureHead(nn.Module):
        """Predicted gain ``[N, K - 1]`` of each alternative over the choice, from :meth:`CandidateFeatures.pairwise`."""

        def __init__(self):
            super().__init__()
            self.members = nn.ModuleList([
                nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                              nn.Linear(hidden, 1)) for _ in range(members)])
            self.register_buffer("mean", torch.zeros(inputs))
            self.register_buffer("scale", torch.ones(inputs))

        def forward(self, x):
            z = (x - self.mean) / self.scale
            return torch.stack([m(z).squeeze(-1) for m in self.members], 0).mean(0)

    return DepartureHead()


def predict(head, x: np.ndarray) -> np.ndarray:
    """float64 [N, K - 1]: the head's predicted gains for inputs ``x`` (:meth:`CandidateFeatures.pairwise`)."""
    torch = _torch()
    with torch.no_grad():
        return head(torch.as_tensor(np.asarray(x, np.float32))).double().numpy().reshape(len(x), -1)


def win_shortlist(advisor, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cand int64 [B, CANDIDATES], ncand int64 [B])`` of a ``win`` head: where a win is legal, the advisor's
    move and the other side of the win (the win where the advisor passes it; else the advisor's move with the win
    removed from the mask, where another action is legal); ``ncand`` is 2 there and 1 elsewhere (the advisor's move
    alone), the rest -1 padded."""
    mask = np.asarray(mask, bool)
    B = len(mask)
    obs = np.asarray(obs, np.float32).reshape(B, *advisor.view.shape)
    cand = np.full((B, CANDIDATES), -1, np.int64)
    ncand = np.ones(B, np.int64)
    live = np.flatnonzero(mask.any(1))
    if len(live):
        cand[live, 0] = np.asarray(advisor.act(obs[live], mask[live]), np.int64)
    win = np.flatnonzero(mask[:, A.WIN])
    passes = win[cand[win, 0] != A.WIN]
    cand[passes, 1] = A.WIN
    takes = win[cand[win, 0] == A.WIN]
    m2 = mask[takes].copy()
    m2[:, A.WIN] = False
    takes, m2 = takes[m2.any(1)], m2[m2.any(1)]
    if len(takes):
        cand[takes, 1] = np.asarray(advisor.act(obs[takes], m2), np.int64)
    ncand[cand[:, 1] >= 0] = 2
    return cand, ncand


def shortlist(features: "CandidateFeatures", scope: str, obs: np.ndarray, mask: np.ndarray, k: int = CANDIDATES):
    """``(cand, ncand)`` a head of ``scope`` reads: :func:`win_shortlist` for ``win``, else the advisor's ranking
    (:meth:`agents.players.heuristic.HeuristicAgent.candidates`)."""
    if scope == "win":
        return win_shortlist(features.advisor, obs, mask)
    return features.advisor.candidates(obs, mask, k)


def in_scope(x: np.ndarray, features: str, scope: str) -> np.ndarray:
    """bool [N, K - 1]: which alternatives of the head's inputs ``x`` (:meth:`CandidateFeatures.pairwise` of the set
    ``features``) a head of ``scope`` (:data:`SCOPES`) may play: all, or (``ready``) those whose hand and the choice's
    both have live waits (the v2 wait sum of the alternative and, through its difference, of the choice); ``win``
    (its shortlist, :func:`win_shortlist`, is the restriction): all."""
    x = np.asarray(x)
    if scope in ("all", "win") and (scope == "all" or features == FEATURES_V2):
        return np.ones(x.shape[:2], bool)
    if scope != "ready" or features != FEATURES_V2:
        raise ValueError(f"departure scope {scope!r} is not one of {SCOPES} (ready and win need {FEATURES_V2}, "
                         f"not {features})")
    alt = x[..., PAIR_FEATURES]
    return (alt > 0) & (alt - x[..., PAIR_FEATURES + WAIT_FEATURES] > 0)


def choose(pred: np.ndarray, ncand: np.ndarray, tau: float) -> np.ndarray:
    """int64 [N]: the shortlist column to play — the alternative of largest predicted gain where that gain exceeds
    ``tau``, else 0 (the advisor's choice)."""
    pred = np.asarray(pred, np.float64)
    ok = np.arange(1, pred.shape[1] + 1)[None, :] < np.asarray(ncand)[:, None]
    p = np.where(ok, pred, -np.inf)
    col = p.argmax(1)
    best = p[np.arange(len(p)), col]
    return np.where(best > tau, col + 1, 0).astype(np.int64)


# ------------------------------------------------------------------------------------------ checkpoint part


def head_payload(head, *, tau: float, variant: str, options: Any, meta: dict | None = None,
                 features: str = FEATURES, scope: str = "all", advisor: str = ADVISOR) -> dict:
    """The ``"departures"`` entry of a checkpoint: feature set, shortlist length, ``tau``, scope (:data:`SCOPES`),
    architecture, tensors, the advisor (:data:`ADVISORS`; recorded only when it is not the default, so a v2 head's
    entry is as before) and the fingerprint of the advisor's shortlist and features (:func:`departure_fingerprint`)."""
    if advisor not in ADVISORS:
        raise ValueError(f"departure advisor {advisor!r} is not one of {', '.join(ADVISORS)}")
    return {"features": features, "candidates": CANDIDATES, "tau": float(tau), "scope": scope,
            **({} if advisor == ADVISOR else {"advisor": advisor}),
            "arch": {"members": len(head.members), "hidden": int(head.members[0][0].out_features)},
            "state": {k: v.detach().cpu().clone() for k, v in head.state_dict().items()},
            "fingerprint": departure_fingerprint(variant, options, features, advisor, scope), "meta": meta or {}}


def head_advisor(part: dict) -> str:
    """The advice set whose advisor a checkpoint's ``"departures"`` entry re-ranks (:data:`ADVISOR` when unrecorded)."""
    return part.get("advisor", ADVISOR)


def check_part(part: Any, variant: str, options: Any, where: str) -> list[str]:
    """Problems (strings) with a checkpoint's ``"departures"`` entry: structure, feature set, and whether the
    advisor's shortlist and the features are still those it was fitted on."""
    if not isinstance(part, dict):
        return ["departures is not a dict"]
    problems = []
    features = part.get("features")
    if features not in FEATURE_SETS:
        problems.append(f"departures features {features!r} is not one of {', '.join(FEATURE_SETS)}")
    if part.get("candidates") != CANDIDATES:
        problems.append(f"departures candidates {part.get('candidates')!r} is not {CANDIDATES}")
    if not isinstance(part.get("tau"), float):
        problems.append("departures tau is not a number")
    if head_advisor(part) not in ADVISORS:
        problems.append(f"departures advisor {head_advisor(part)!r} is not one of {', '.join(ADVISORS)}")
    scope = part.get("scope", "all")  # heads saved before scopes depart anywhere
    if scope not in SCOPES or (scope in ("ready", "win") and features != FEATURES_V2):
        problems.append(f"departures scope {scope!r} is not one of {SCOPES} (ready and win need {FEATURES_V2})")
    arch = part.get("arch")
    if not (isinstance(arch, dict) and all(isinstance(arch.get(k), int) and arch[k] > 0 for k in ("members", "hidden"))):
        problems.append(f"departures arch {arch!r} lacks positive integer members and hidden")
    state = part.get("state")
    if not (isinstance(state, dict) and state and all(hasattr(v, "shape") for v in state.values())):
        problems.append("departures state is not a dict of tensors")
    if problems:
        return problems
    width = state.get("mean")
    if width is None or tuple(width.shape) != (FEATURE_SETS[features],):
        return [f"departures state does not read {FEATURE_SETS[features]} inputs ({features})"]
    try:
        now = departure_fingerprint(variant, options, features, head_advisor(part), scope)
    except ValueError as exc:  # v2 outside Gejiu
        return [str(exc)]
    if part.get("fingerprint") != now:
        problems.append(f"its departure head reads {head_advisor(part)}'s shortlist and {features}, which have changed since "
                        f"it was fitted (recorded {str(part.get('fingerprint'))[:19]}…, now {now[:19]}…): retrain it")
    return problems


class Departures:
    """The departure head of a checkpoint at play time: :meth:`apply` turns the network's choices into the policy's."""

    def __init__(self, part: dict, variant: str, options: Any = None):
        self.features = CandidateFeatures(variant, options, part["features"], head_advisor(part))
        self.tau = float(part["tau"])
        self.scope = part.get("scope", "all")
        self.head = make_head(part["arch"]["members"], part["arch"]["hidden"], self.features.width)
        self.head.load_state_dict(part["state"])
        self.head.eval()

    def apply(self, obs: np.ndarray, mask: np.ndarray, choice: np.ndarray) -> np.ndarray:
        """int64 [B]: ``choice`` (the network's greedy actions), replaced by the head's alternative where the
        network plays the advisor's choice, no win is legal (scope ``win``: a win is legal), and an alternative's
        predicted gain exceeds ``tau``."""
        mask = np.asarray(mask, bool)
        choice = np.asarray(choice, np.int64).copy()
        live = np.flatnonzero(mask.sum(1) >= 2)
        if not len(live):
            return choice
        obs = np.asarray(obs, np.float32).reshape(len(mask), *self.features.view.shape)
        cand, ncand = shortlist(self.features, self.scope, obs[live], mask[live])
        at_win = mask[live, A.WIN] if self.scope == "win" else ~mask[live, A.WIN]
        rows = np.flatnonzero((ncand >= 2) & (cand[:, 0] == choice[live]) & at_win)
        if not len(rows):
            return choice
        x = self.features.pairwise(obs[live[rows]], mask[live[rows]], cand[rows], ncand[rows])
        pred = np.where(in_scope(x, self.features.version, self.scope), predict(self.head, x), -np.inf)
        col = choose(pred, ncand[rows], self.tau)
        go = col > 0
        choice[live[rows[go]]] = cand[rows[go], col[go]]
        return choice


# ------------------------------------------------------------------------------------------ fingerprint

FINGERPRINT_TABLES = 32
FINGERPRINT_SEED = 20_261_205


def departure_fingerprint(variant: str, options: Any, features: str = FEATURES, advisor: str = ADVISOR,
                          scope: str = "all") -> str:
    """``"sha256:<hex>"`` of the advisor's shortlists and :class:`CandidateFeatures` (of the set ``features``, over
    the advisor of ``advisor``, :data:`ADVISORS`) on fixed positions: the deals ``0..FINGERPRINT_TABLES-1`` of
    :data:`FINGERPRINT_SEED`, played by that advisor in every seat, every decision's shortlist and pairwise
    features hashed (with the advisor's name unless it is :data:`ADVISOR`; a ``win`` head's with its scope, and
    its :func:`win_shortlist` instead of the ranking).  Cached per process."""
    from agents.players.base import resolve_rules

    return _fingerprint(resolve_rules(variant, options), features, advisor, "win" if scope == "win" else "all")


@functools.lru_cache(maxsize=16)
def _fingerprint(rules, version: str = FEATURES, advisor: str = ADVISOR, scope: str = "all") -> str:
    from agents.players.advice import play_fixed_deals

    variant, opts = rules.variant, rules.options
    options_key = json.dumps(rules.options_dict(), sort_keys=True, default=str)
    features = CandidateFeatures(variant, opts, version, advisor)
    named = ("" if advisor == ADVISOR else f"|{advisor}") + ("|win" if scope == "win" else "")
    digest = hashlib.sha256(f"{version}|{variant}|{options_key}{named}".encode())

    def decide(live, obs, mask):
        cand, ncand = shortlist(features, scope, obs, mask)
        x = features.pairwise(obs, mask, cand, ncand)
        digest.update(live.astype(np.int64).tobytes())
        digest.update(cand.astype(np.int64).tobytes())
        digest.update(np.round(x, 4).astype(np.float32).tobytes())
        return cand[:, 0]

    play_fixed_deals(variant, opts, FINGERPRINT_TABLES, FINGERPRINT_SEED, decide)
    return "sha256:" + digest.hexdigest()
