"""Belief over sampled worlds: weights from how likely each opponent's latest discard is in a world.

:meth:`mjenv.engine.core.Engine.sample_worlds` deals the unseen tiles uniformly, conditioned on the rules only: a
world does not agree with what the opponents' *play* reveals.  This module owns the cheap likelihood the search
agent (:mod:`agents.players.search`, ``belief=EPS``) uses to weight worlds:

* :func:`last_discards`: the opponents whose latest discard was made from exactly the hand they hold now plus that
  tile — public facts of the source table: the opponent is not the acting seat, has not declared 亮倒, its latest
  discard is the last tile of its river, and every discard since is still in a river (nothing was claimed since)
  and fewer than ``n − 1`` were made since (it has not drawn since);
* :func:`discard_weights`: for every world, each such opponent's hand before that discard (its world hand plus the
  tile, the rivers without that discard and the later ones) is put back on its turn in a scratch engine, its legal
  moves derived afresh (``legal``; or every held tile's discard only), and the compiled player decides; the world's
  likelihood is the product over those opponents of 1 where the player makes the plain discard it did, ``eps``
  where it does not — so a world in which an opponent that did not declare 亮倒 would have declared it is
  unlikely.

* :func:`history_discards` and :func:`past_hands` (``belief_depth=K``): up to ``K`` discards per opponent since
  the latest claim, each judged as the latest is, with the opponent's hand then rebuilt from its world hand, its
  discards since and as many tiles drawn since (drawn per world, a later discard :data:`TSUMO` times likelier to
  be one than a held tile).

The search samples more worlds than it rolls out and keeps ``worlds`` of them in proportion to their weights:
:func:`resample` (systematic, with repeats) or :func:`distinct` (``keep=distinct``: weighted sampling without
replacement, so no world is rolled out twice).  The learned beliefs (``belief_net``) are :class:`LearnedBelief`
(a classifier of true against sampled hands), :class:`ReadinessBelief` (a head predicting each opponent's
shanten class) and :class:`HoldingsBelief` (a head predicting each opponent's share of each kind's unseen copies).  docs/experiments/expert-iteration.md measures them all against hands-true records.
Reading only the acting seat's view: the opponents' hands used are the *world's* hands, never the true table's.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine import state as S

TSUMO = 64.0
"""How much likelier a later discard is than a held tile to have been drawn since (:func:`past_hands`)."""

__all__ = ["last_discards", "history_discards", "past_hands", "discard_weights", "distinct", "resample"]


def _river_times(st, b: int, n: int) -> set[int]:
    """The times of table ``b``'s discards still lying in a river (a claimed discard's time is missing)."""
    present: set[int] = set()
    for o in range(n):
        present.update(int(x) for x in st.river_time[b, o, : int(st.river_len[b, o])])
    return present


def last_discards(engine, table: int, seat: int) -> list[tuple[int, int, int]]:
    """``[(opponent, tile, time)]``: the opponents of ``seat`` at ``table`` whose hand now is their hand before their
    latest discard less that tile (module docstring); public facts, the same in every world of the table."""
    st = engine.state
    b = int(table)
    n = engine.n
    latest = int(st.n_discards[b]) - 1
    if latest < 0:
        return []
    present = _river_times(st, b, n)
    out = []
    for o in range(n):
        if o == seat or bool(st.revealed[b, o]):
            continue
        k = int(st.river_len[b, o])
        if k == 0:
            continue
        tau = int(st.river_time[b, o, k - 1])
        if latest - tau > n - 2:
            continue  # it has drawn since
        if any(x not in present for x in range(tau + 1, latest + 1)):
            continue  # a discard since was claimed: hands changed
        out.append((o, int(st.river[b, o, k - 1]), tau))
    return out


def discard_weights(worlds, rows, facts, player, scratch, eps: float, legal: bool = True, seed=0,
                    tsumo: float = TSUMO) -> np.ndarray:
    """float64 [len(rows)]: each world's likelihood of the opponents' discards ``facts`` (from
    :func:`last_discards` or :func:`history_discards`) under ``player`` (``decide(engine, tables)``), ``eps`` per
    discard it would not make; ``scratch`` is an engine of the same rules with at least ``len(rows)`` tables
    (overwritten).  ``legal``: the player chooses among every move the rules allowed then (its 亮倒, kongs and a
    self-drawn win included: a plain discard where it would have revealed or won is one it would not make); else
    among the discards only.  A fact with later discards (``history_discards``) puts the opponent back with its
    world hand plus those discards less as many tiles drawn since, drawn per world from ``seed``
    (:func:`past_hands`)."""
    rows = np.asarray(rows, dtype=np.int64)
    m = len(rows)
    w = np.ones(m)
    if not facts:
        return w
    idx = np.arange(m)
    ss = scratch.state
    rng = np.random.default_rng([int(seed) & (2**63 - 1), 7301])
    src = worlds.state
    for fact in facts:
        o, t, tau = fact[:3]
        later = fact[3] if len(fact) > 3 else ()
        scratch._b8[:m] = worlds._b8[rows]  # the packed state is all the players read
        scratch._b16[:m] = worlds._b16[rows]
        ss.hand[idx, o] = past_hands(src.hand[rows, o], t, later, rng, tsumo)
        since = 0
        for a in range(worlds.n):  # the rivers as they were: that discard and the later ones taken back
            k = int(src.river_len[rows[0], a])
            back = int((src.river_time[rows[0], a, :k] >= tau).sum())
            since += back
            if back:
                ss.river[idx, a, k - back : k] = -1
                ss.river_len[idx, a] = k - back
                ss.turns[idx, a] -= back
        if later:  # the live wall as it was: one tile drawn before each discard since (no claim since: facts)
            drew = since - 1 + int(src.phase[rows[0]] == S.TURN)
            ss.front[idx] = np.maximum(src.front[rows] - drew, 0)
        ss.n_discards[idx] = tau
        ss.cur[idx] = o
        ss.actor[idx] = o
        ss.phase[idx] = S.TURN
        ss.drawn[idx] = -1
        ss.claim_tile[idx] = -1
        if m < scratch.batch_size:
            scratch._b8[m:, S.O8_PHASE] = S.DONE
            scratch.mask[m:] = False
        if legal:  # its legal moves then, 亮倒 and kongs included: a world where it would have revealed is unlikely
            scratch.mask[idx] = scratch._compute_masks(idx)
        else:
            scratch.mask[idx] = False
            scratch.mask[idx, A.DISCARD : A.DISCARD + 34] = ss.hand[idx, o] > 0
        choice = player.decide(scratch, idx)[idx]
        w *= np.where(choice == A.DISCARD + t, 1.0, eps)
    return w


def history_discards(engine, table: int, seat: int, depth: int) -> list[tuple[int, int, int, tuple[int, ...]]]:
    """``[(opponent, tile, time, later)]``: up to ``depth`` latest discards of each opponent of ``seat`` at ``table``
    whose hand then follows from its hand now, its discards since (``later``, in order) and as many tiles drawn
    since: public facts, the same in every world of the table.  A fact needs no claim since it (every discard made
    since is still in a river), the opponent not revealed, not drawn since its latest discard, and no concealed or
    added kong of its (made at a time the state does not keep) unless the fact is its latest discard; the discard
    right after a claim is left out (no draw before it).  ``depth`` 1: those of :func:`last_discards`' facts that
    meet these conditions."""
    if int(depth) < 1:
        raise ValueError(f"depth: discards per opponent, at least 1, got {depth}")
    st = engine.state
    b, n = int(table), engine.n
    latest = int(st.n_discards[b]) - 1
    if latest < 0 or int(st.phase[b]) not in (S.TURN, S.CLAIMED, S.CLAIM):
        return []
    present = _river_times(st, b, n)
    gaps = [x for x in range(latest + 1) if x not in present]
    first = gaps[-1] + 2 if gaps else 0  # discards after the latest claim (and not the claimer's first after it)
    out = []
    for o in range(n):
        if o == seat or bool(st.revealed[b, o]):
            continue
        k = int(st.river_len[b, o])
        if k == 0:
            continue
        times = [int(x) for x in st.river_time[b, o, :k]]
        tiles = [int(x) for x in st.river[b, o, :k]]
        if latest - times[-1] > n - 2 or times[-1] < first:
            continue  # it has drawn since its latest discard, or a claim came after it
        kinds = st.meld_kind[b, o, : int(st.n_melds[b, o])]
        deep = 1 if np.isin(kinds, (S.ADDED_KONG, S.CONCEALED_KONG)).any() else int(depth)
        for i in range(k - 1, max(k - 1 - deep, -1), -1):
            if times[i] < first:
                break
            out.append((o, tiles[i], times[i], tuple(tiles[i + 1 :])))
    return out


def past_hands(hands, tile: int, later, rng, tsumo: float = TSUMO) -> np.ndarray:
    """int8 [m, 34]: per world, an opponent's hand before its discard of ``tile``, from its hand now ``hands``
    [m, 34] and its discards since ``later``: the hand now plus ``later``, less ``len(later)`` tiles drawn since,
    plus ``tile``.  The tiles drawn since are drawn per world (``rng``) without replacement from the hand now and
    ``later``, a tile of ``later`` ``tsumo`` times as likely as one of the hand (a drawn tile is often the next
    discard)."""
    h = np.asarray(hands).astype(np.int64)
    if h.ndim != 2 or h.shape[1] != 34 or (h < 0).any():
        raise ValueError("past_hands: hands must be counts [m, 34] >= 0")
    if not tsumo > 0:
        raise ValueError(f"past_hands: tsumo must be > 0, got {tsumo}")
    m, L = len(h), len(later)
    size = int(h[0].sum()) if m else 0
    if (h.sum(1) != size).any():
        raise ValueError("past_hands: every world's hand must hold the same number of tiles")
    out = h.copy()
    out[:, int(tile)] += 1
    if not L or not m:
        return out.astype(np.int8)
    cum = np.cumsum(h, 1)  # position p of a hand holds the first kind whose count sum exceeds p
    kind = np.concatenate([(cum[:, :, None] <= np.arange(size)[None, None, :]).sum(1),
                           np.broadcast_to(np.asarray(later, np.int64), (m, L))], 1)  # [m, size + L]
    wts = np.concatenate([np.ones(size), np.full(L, float(tsumo))])
    keys = np.log(rng.random((m, size + L))) / wts  # weighted sampling without replacement (Efraimidis-Spirakis)
    kept = np.take_along_axis(kind, np.argsort(-keys, 1)[:, L:], 1)  # the tiles not drawn since
    out = np.zeros_like(h)
    np.add.at(out, (np.repeat(np.arange(m), size), kept.ravel()), 1)
    out[:, int(tile)] += 1
    return out.astype(np.int8)


def distinct(weights: np.ndarray, n: int, seed: int) -> np.ndarray:
    """int64 [n]: ``n`` distinct indices drawn without replacement, each draw in proportion to the ``weights`` of
    those left (Efraimidis-Spirakis keys from ``seed``; zero weights come last, in index order): worlds kept by the
    belief without the repeats of :func:`resample`, which cost the search distinct worlds."""
    w = np.asarray(weights, np.float64)
    if w.ndim != 1 or not 0 < int(n) <= len(w) or (w < 0).any() or not np.isfinite(w).all():
        raise ValueError(f"distinct: need 1 <= n <= len(weights) and finite weights >= 0, got n={n}, {len(w)} weights")
    u = np.random.default_rng([int(seed) & (2**63 - 1), 7302]).random(len(w))
    with np.errstate(divide="ignore"):
        keys = np.where(w > 0, np.log(u) / np.where(w > 0, w, 1.0), -np.inf)
    return np.argsort(-keys, kind="stable")[: int(n)].astype(np.int64)


def resample(weights: np.ndarray, n: int, u: float) -> np.ndarray:
    """int64 [n]: systematic resample of ``n`` indices in proportion to ``weights`` (offset ``u`` in [0, 1)); all
    zero weights (``eps`` 0 and no world consistent): the first ``n``."""
    c = np.cumsum(np.asarray(weights, np.float64))
    if not c[-1] > 0:
        return np.arange(n, dtype=np.int64) % len(c)
    c /= c[-1]
    return np.minimum(np.searchsorted(c, (u + np.arange(n)) / n, side="right"), len(c) - 1).astype(np.int64)


# ---------------------------------------------------------------------------------------------- the learned belief
# A classifier told the true table's hidden hands from sampled worlds' hands, given what the seat sees: its logit
# estimates log p(hands | what the seat sees) / p_sampler(hands | what the seat sees), the importance weight that
# turns the sampler's uniform worlds into worlds drawn from the belief.  One shared MLP scores each opponent's
# concealed counts against that opponent's public record; a world's logit is the sum over opponents.

BELIEF_FEATURES = 34 * 7 + 6
"""Inputs per (world, opponent): its river counts, first six discards, last three discards, melded tiles, the
tiles the seat has not seen, the opponent's concealed counts in the world, its face-up concealed tiles (a 亮倒
seat's), then revealed, tiles held, discards made, live wall, and the opponent's place after the seat (2)."""


def public_features(engine, table: int, seat: int) -> np.ndarray:
    """float32 [n - 1, BELIEF_FEATURES]: the public part of each opponent's row (the concealed-count block zero),
    opponents in turn order after ``seat``; what ``seat`` sees of ``table`` only."""
    st = engine.state
    b, n = int(table), engine.n
    unseen = 4.0 - st.hand[b, seat].astype(np.float32) - st.melded[b].sum(0)
    for a in range(n):
        k = int(st.river_len[b, a])
        r = st.river[b, a, :k]
        r = r[r >= 0]
        np.subtract.at(unseen, r, 1.0)
        if a != seat and st.revealed[b, a]:
            unseen -= st.hand[b, a] - 3 * st.hidden[b, a]
    unseen = np.clip(unseen, 0, 4)
    wall = float(st.back[b] - st.front[b])
    out = np.zeros((n - 1, BELIEF_FEATURES), np.float32)
    for i in range(n - 1):
        o = (seat + 1 + i) % n
        k = int(st.river_len[b, o])
        r = st.river[b, o, :k]
        f = out[i]
        for j, t in enumerate(r):
            if t >= 0:
                f[t] += 1
                if j < 6:
                    f[34 + t] += 1
                if j >= k - 3:
                    f[68 + t] += 1
        f[102:136] = st.melded[b, o]
        f[136:170] = unseen / 4.0
        if st.revealed[b, o]:
            f[204:238] = (st.hand[b, o] - 3 * st.hidden[b, o]) / 4.0
        f[238] = float(st.revealed[b, o])
        f[239] = st.hand[b, o].sum() / 14.0
        f[240] = st.turns[b, o] / 20.0
        f[241] = wall / 60.0
        f[242 + min(i, 1)] = 1.0
    return out


def world_features(public: np.ndarray, worlds, rows, seat: int) -> np.ndarray:
    """float32 [len(rows), n - 1, BELIEF_FEATURES]: ``public`` (:func:`public_features`) with each world's concealed
    counts of every opponent filled in."""
    rows = np.asarray(rows, dtype=np.int64)
    n = worlds.n
    x = np.broadcast_to(public, (len(rows),) + public.shape).copy()
    for i in range(n - 1):
        o = (seat + 1 + i) % n
        x[:, i, 170:204] = worlds.state.hand[rows, o] / 4.0
    return x


class LearnedBelief:
    """The fitted classifier (``bench/belief_fit.py`` writes it): :meth:`logits` of worlds, numpy only."""

    def __init__(self, path):
        z = np.load(path)
        self.layers = [(z[f"w{i}"].astype(np.float32), z[f"b{i}"].astype(np.float32)) for i in range(int(z["depth"]))]
        self.path = str(path)

    def logits(self, x: np.ndarray) -> np.ndarray:
        """float64 [W]: the summed per-opponent logits of feature rows ``x`` [W, n - 1, F]."""
        h = x.reshape(-1, x.shape[-1])
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                np.maximum(h, 0, out=h)
        return h.reshape(x.shape[0], x.shape[1]).sum(1).astype(np.float64)

    def weights(self, engine, table: int, seat: int, worlds, rows, cap: float = 50.0, temper: float = 1.0) -> np.ndarray:
        """float64 [len(rows)]: importance weights of the worlds (exp of ``temper`` × the logit, its largest 1, the
        ratio capped at ``cap``; ``temper`` < 1 flattens them: more distinct worlds kept)."""
        x = world_features(public_features(engine, table, seat), worlds, rows, seat)
        lg = temper * self.logits(x)
        return np.exp(np.maximum(lg - lg.max(), -np.log(cap)))


# ------------------------------------------------------------------------------------ the learned readiness belief
# What the values turn on is less the whole hand than how near each opponent is to winning.  A head reads each
# opponent's public row (:func:`public_features`, its concealed block zero) and predicts the class of its true
# shanten (ready or better, 1, 2, 3 or more); a world's weight is, per opponent, the head's probability of the
# world hand's class over that class's share among the pooled worlds (the sampler's own odds): importance weights
# that move the pool's readiness to the head's.

SHANTEN_CLASSES = 4
"""Classes of an opponent's shanten the readiness head predicts: ≤ 0 (ready), 1, 2, ≥ 3."""


def shanten_class(hands, n_melds) -> np.ndarray:
    """int64 [N]: the :data:`SHANTEN_CLASSES` class of each concealed hand ``hands`` [N, 34] held with ``n_melds``
    [N] melds (standard and seven-pair shanten, :func:`mjenv.encoding.shanten.shanten`)."""
    from mjenv.encoding.shanten import shanten

    h = np.asarray(hands, np.int8)
    return np.clip(shanten(h, np.asarray(n_melds)), 0, SHANTEN_CLASSES - 1).astype(np.int64)


class ReadinessBelief:
    """The fitted readiness head (``bench/belief_fit.py --target shanten`` writes it; ``kind`` "shanten" in the
    file): :meth:`probs` of each opponent's shanten class from what the seat sees, :meth:`weights` of worlds."""

    def __init__(self, path):
        z = np.load(path)
        if "kind" not in z.files or str(z["kind"]) != "shanten":
            raise ValueError(f"belief_net: {path} is not a readiness head (kind 'shanten')")
        self.layers = [(z[f"w{i}"].astype(np.float32), z[f"b{i}"].astype(np.float32)) for i in range(int(z["depth"]))]
        if self.layers[-1][0].shape[1] != SHANTEN_CLASSES or self.layers[0][0].shape[0] != BELIEF_FEATURES:
            raise ValueError(f"belief_net: {path} has the wrong input or output size for a readiness head")
        self.path = str(path)

    def probs(self, public: np.ndarray) -> np.ndarray:
        """float64 [n - 1, SHANTEN_CLASSES]: the head's class probabilities of each opponent's row of ``public``
        (:func:`public_features`)."""
        h = np.asarray(public, np.float32)
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                np.maximum(h, 0, out=h)
        h = h.astype(np.float64) - h.max(1, keepdims=True)
        e = np.exp(h)
        return e / e.sum(1, keepdims=True)

    def weights(self, engine, table: int, seat: int, worlds, rows, cap: float = 50.0, temper: float = 1.0) -> np.ndarray:
        """float64 [len(rows)]: per world, the product over opponents of the head's probability of the world hand's
        class over that class's share among ``rows`` (add-one smoothed), to the power ``temper``, its largest 1 and
        the ratio capped at ``cap``."""
        rows = np.asarray(rows, dtype=np.int64)
        n = worlds.n
        p = self.probs(public_features(engine, table, seat))
        lw = np.zeros(len(rows))
        for i in range(n - 1):
            o = (seat + 1 + i) % n
            c = shanten_class(worlds.state.hand[rows, o], worlds.state.n_melds[rows, o])
            share = (np.bincount(c, minlength=SHANTEN_CLASSES) + 1.0) / (len(rows) + SHANTEN_CLASSES)
            lw += np.log(p[i, c] / share[c])
        lw *= temper
        return np.exp(np.maximum(lw - lw.max(), -np.log(cap)))


# ------------------------------------------------------------------------------------- the learned holdings belief
# What the values turn on (docs/experiments/expert-iteration.md, session 15): how many copies of the kinds the seat
# can use are in the opponents' hands (dead to it) rather than in the wall.  A head reads each opponent's public
# row and predicts, per kind, the share ``p`` of its unseen copies that opponent holds; the sampler deals them with
# the share ``p0`` = the opponent's hidden tiles over all unseen tiles.  A world's weight is the product over the
# opponents not revealed and the kinds near the seat's own tiles of the binomial odds (p / p0)^h ((1 - p) /
# (1 - p0))^(u - h) of the world's count ``h`` of the kind's ``u`` unseen copies.


class HoldingsBelief:
    """The fitted holdings head (``bench/belief_fit.py --target holdings``; ``kind`` "holdings" in the file):
    :meth:`shares` of each kind's unseen copies per opponent, :meth:`weights` of worlds."""

    def __init__(self, path):
        z = np.load(path)
        if "kind" not in z.files or str(z["kind"]) != "holdings":
            raise ValueError(f"belief_net: {path} is not a holdings head (kind 'holdings')")
        self.layers = [(z[f"w{i}"].astype(np.float32), z[f"b{i}"].astype(np.float32)) for i in range(int(z["depth"]))]
        if self.layers[-1][0].shape[1] != 34 or self.layers[0][0].shape[0] != BELIEF_FEATURES:
            raise ValueError(f"belief_net: {path} has the wrong input or output size for a holdings head")
        self.path = str(path)

    def shares(self, public: np.ndarray) -> np.ndarray:
        """float64 [n - 1, 34]: per opponent row of ``public`` (:func:`public_features`), the predicted share of each
        kind's unseen copies it holds, in [0.001, 0.999]."""
        h = np.asarray(public, np.float32)
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                np.maximum(h, 0, out=h)
        return np.clip(1.0 / (1.0 + np.exp(-h.astype(np.float64))), 1e-3, 1 - 1e-3)

    def weights(self, engine, table: int, seat: int, worlds, rows, cap: float = 50.0, temper: float = 1.0) -> np.ndarray:
        """float64 [len(rows)]: per world, the binomial odds of the opponents' counts of the kinds near ``seat``'s
        own tiles under the head against the sampler (module comment), to the power ``temper``, its largest 1 and
        the ratio capped at ``cap``."""
        from mjenv.encoding.shanten import _NEAR

        rows = np.asarray(rows, dtype=np.int64)
        st = engine.state
        b, n = int(table), engine.n
        pub = public_features(engine, b, seat)
        p = self.shares(pub)
        unseen = np.rint(pub[0, 136:170] * 4).astype(np.int64)
        places = [int(st.hand[b, o].sum()) - (int((st.hand[b, o] - 3 * st.hidden[b, o]).sum()) if st.revealed[b, o]
                                              else 0) for o in range(n)]
        total = max(int(st.back[b]) - int(st.front[b]) + sum(places[o] for o in range(n) if o != seat), 1)
        kinds = _NEAR[:, st.hand[b, seat] > 0].any(1) & (unseen > 0)
        lw = np.zeros(len(rows))
        for i in range(n - 1):
            o = (seat + 1 + i) % n
            if st.revealed[b, o]:
                continue
            p0 = min(max(places[o] / total, 1e-3), 1 - 1e-3)  # the sampler's share: its hidden places of all
            h = np.minimum(worlds.state.hand[rows, o][:, kinds].astype(np.float64), unseen[kinds])
            u = unseen[kinds].astype(np.float64)
            lw += (h * np.log(p[i, kinds] / p0) + (u - h) * np.log((1 - p[i, kinds]) / (1 - p0))).sum(1)
        lw *= temper
        return np.exp(np.maximum(lw - lw.max(), -np.log(cap)))
