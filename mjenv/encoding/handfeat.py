"""The derived hand features ``mjenv-hand-v1``: the public hand arithmetic of a seat, computed from its v1 observation.

This module owns the feature set ``mjenv-hand-v1`` (docs/observation.md, "Derived hand features"): rows appended
to a ``mjenv-obs-v1`` observation that a player would otherwise have to work out from the planes — the shanten and
the live improving tiles (ukeire) after each discard, per plan (the plain hand, one-suit flush, seven pairs, all
triplets), the tiles that improve or complete the hand as it stands, and the waits of every opponent whose 亮倒
hand is face up (feeding one pays 包胡, docs/rules/kawuxing.md §3.10).  It is a pure function of the v1 rows
``hand``, ``kinds``, ``melds``, ``discards`` and ``reveal`` (so it sees only what the seat sees, and a recorded
v1 dataset serves as it is: :meth:`HandFeatures.extend` derives the rows per minibatch), compiled with numba
(:func:`_derive`, one loop over the observations) over the shanten tables of :mod:`mjenv.encoding.shanten`.

Use: ``HandFeatures(variant, options).extend(obs_v1) -> float32 [K, C + rows, 34]`` (or :meth:`~HandFeatures.derive`
for the rows alone).  ``blocks`` lists ``(name, rows, meaning)`` and ``slices`` the row ranges, as
:class:`mjenv.encoding.observation.ObservationEncoder` does for v1.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding.shanten import standard_one, tables
from mjenv.engine.jit import njit

HAND_FEATURES = "mjenv-hand-v1"
"""Version string of the derived hand features (a checkpoint's ``derived`` key)."""

# Rows of the block (relative to its first row); the opponents' waits follow at R_WAITS.
D_SHANTEN, D_BEST, D_UKEIRE, D_EFFICIENT, D_READY, D_FLUSH, D_PAIRS, D_TRIPLETS = 0, 1, 2, 3, 4, 5, 8, 9
H_IMPROVE, H_PONG_BETTER, H_PONG_SAME, H_LIVE, H_SHANTEN = 10, 11, 12, 13, 14
R_WAITS = 15
UKEIRE_SCALE = 64.0  # live improving tiles / this (a hand rarely accepts more than 60)
SHANTEN_SCALE = 9.0  # (shanten + 1) / this: 0 complete, 1/9 ready, ... 1 at 8 and above (the plan rows' cap too)


def _blocks(n: int) -> list[tuple[str, int, str]]:
    """``(name, rows, meaning)`` of the feature blocks for ``n`` seats (docs/observation.md)."""
    return [
        ("discard_plans", 10, "own turn (3k+2 tiles) only, at each held tile t: (shanten after discarding t + 1) / 9; "
         "1 where that shanten is the best; live improving tiles after discarding t / 64; 1 where t has the best "
         "shanten and among those the most live improving tiles; 1 where discarding t leaves the hand ready; "
         "one-suit flush in m, p, s (3 rows: (plan shanten + 1) / 9 capped at 1, 1 where melds rule it out, 0 for a "
         "suit not in play); seven pairs ((shanten + 1) / 7, variants with seven pairs and no melds); all triplets "
         "((shanten + 1) / 9 capped, 1 with a chi meld)"),
        ("hand_now", 5, "tiles whose draw lowers the shanten of a 3k+1 hand (its waits when ready); 1 where ponging t "
         "and the best discard lower the shanten / keep it (2 rows, 3k+1 hands); live copies / 4 of each kind "
         "in play (4 minus the copies the seat sees: own hand, every meld, discard and face-up tile); the "
         "hand's shanten (+ 1) / 9 as a scalar (0 when complete)"),
        ("revealed_waits", n, "per opponent (relative seats 1 .. n-1): the tiles its face-up 亮倒 hand waits on "
         "(from its face-up tiles, as the rules define waits; seven pairs only with no melds and nothing face "
         "down); then the number of revealed opponents waiting on each tile / (n - 1)"),
    ]


@njit(cache=True)
def _shanten_of(c, nm, sp, suit, honor, acc, nxt):
    """The hand's shanten: standard, or seven pairs where ``sp`` and the hand has no melds (the smaller)."""
    s = standard_one(c, nm, suit, honor, acc, nxt)
    if sp and nm == 0:
        pairs = 0
        for t in range(34):
            pairs += c[t] // 2
        p = 6 - min(pairs, 7)
        if p < s:
            s = p
    return s


@njit(cache=True)
def _triplets(c, nm, nchi):
    """Shanten towards four triplets and a pair (:func:`agents.players.plans.triplets_shanten`'s definition; 99 with
    a chi meld): ``3s + 1`` minus the tiles the ``s + 1`` fullest kinds (capped at 3) give, less one when all of
    them are triplets."""
    if nchi > 0:
        return 99
    s = max(0, min(4, 4 - nm))
    n3 = 0
    n2 = 0
    n1 = 0
    for t in range(34):
        x = min(c[t], 3)
        if x == 3:
            n3 += 1
        elif x == 2:
            n2 += 1
        elif x == 1:
            n1 += 1
    used = 0
    left = s + 1
    last = 0
    for val, cnt in ((3, n3), (2, n2), (1, n1)):
        take = min(cnt, left)
        used += take * val
        left -= take
        if take > 0:
            last = val
    if left > 0:
        last = 0
    if last == 3:
        used -= 1
    return 3 * s + 1 - used


@njit(cache=True)
def _near(c, u):
    """Whether a draw of ``u`` can change the shape of ``c``: ``u`` is held, or (a suit tile) a tile of its suit
    at most two ranks away is."""
    if c[u] > 0:
        return True
    if u >= 27:
        return False
    r = u % 9
    for d in range(-2, 3):
        if 0 <= r + d < 9 and c[u + d] > 0:
            return True
    return False


@njit(cache=True)
def _derive(obs, lay, suit, honor, out):
    """Write the ``mjenv-hand-v1`` rows of each v1 observation ``obs [K, C, 34]`` into ``out [K, R, 34]`` (zeroed
    here).  ``lay``: first rows of ``hand``, ``kinds``, ``melds``, ``discards``, ``reveal``, then ``n``, the
    seven-pairs flag and the flush-with-honors flag (:class:`HandFeatures`)."""
    hand0, kinds0, melds0, disc0, rev0, n, sp, honors = lay[0], lay[1], lay[2], lay[3], lay[4], lay[5], lay[6], lay[7]
    acc = np.empty((2, 5), np.int16)
    nxt = np.empty((2, 5), np.int16)
    h = np.zeros(34, np.int64)
    kept = np.zeros(34, np.int64)
    live = np.zeros(34, np.int64)
    vis = np.zeros(34, np.int64)
    seat_mt = np.zeros((n, 34), np.int64)  # tiles in each seat's melds
    seat_nm = np.zeros(n, np.int64)  # each seat's melds
    shown = np.zeros(34, np.int64)
    kinds = np.zeros(34, np.bool_)
    sa = np.zeros(34, np.int64)
    ua = np.zeros(34, np.int64)
    suit_in_play = np.zeros(3, np.bool_)
    for i in range(obs.shape[0]):
        o = obs[i]
        f = out[i]
        for r in range(f.shape[0]):
            for t in range(34):
                f[r, t] = 0.0
        for s in range(3):
            suit_in_play[s] = False
        for t in range(34):
            x = 0
            for r in range(4):
                if o[hand0 + r, t] > 0.5:
                    x += 1
            h[t] = x
            kinds[t] = o[kinds0, t] > 0.5
            if kinds[t] and t < 27:
                suit_in_play[t // 9] = True
            vis[t] = x
        # melds (pong, chi at its lowest tile, three kongs) and discards of every seat; face-up tiles of the others
        nchi = 0
        for s in range(n):
            seat_nm[s] = 0
            for t in range(34):
                seat_mt[s, t] = 0
            for t in range(34):
                base = melds0 + 5 * s
                pong = int(round(o[base, t]))
                chi = int(round(o[base + 1, t]))
                kongs = int(round(o[base + 2, t])) + int(round(o[base + 3, t])) + int(round(o[base + 4, t]))
                seat_mt[s, t] += 3 * pong + 4 * kongs
                seat_nm[s] += pong + chi + kongs
                if s == 0:
                    nchi += chi
                for d in range(3):
                    if t + d < 34:
                        seat_mt[s, t + d] += chi
                for r in range(4):
                    if o[disc0 + 5 * s + r, t] > 0.5:
                        vis[t] += 1
                if s > 0:
                    for r in range(4):
                        if o[rev0 + 7 * s + 2 + r, t] > 0.5:
                            vis[t] += 1
        nm = seat_nm[0]
        total = 0
        for t in range(34):
            for s in range(n):
                vis[t] += seat_mt[s, t]
            total += h[t]
            live[t] = max(0, 4 - vis[t]) if kinds[t] else 0
            f[H_LIVE, t] = live[t] / 4.0
        s_now = _shanten_of(h, nm, sp, suit, honor, acc, nxt)
        v = min(s_now + 1, 9) / SHANTEN_SCALE
        for t in range(34):
            f[H_SHANTEN, t] = v
        if total % 3 == 2:
            best = 99
            for t in range(34):
                if h[t] == 0:
                    continue
                h[t] -= 1
                s_t = _shanten_of(h, nm, sp, suit, honor, acc, nxt)
                sa[t] = s_t
                if s_t < best:
                    best = s_t
                u_t = 0
                for u in range(34):
                    if kinds[u] and h[u] < 4 and live[u] > 0 and _near(h, u):
                        h[u] += 1
                        if _shanten_of(h, nm, sp, suit, honor, acc, nxt) < s_t:
                            u_t += live[u]
                        h[u] -= 1
                ua[t] = u_t
                f[D_SHANTEN, t] = min(s_t + 1, 9) / SHANTEN_SCALE
                f[D_UKEIRE, t] = min(u_t / UKEIRE_SCALE, 1.0)
                f[D_READY, t] = 1.0 if s_t == 0 else 0.0
                for s in range(3):
                    if not suit_in_play[s]:
                        continue
                    feasible = True
                    off = 0
                    for u in range(34):
                        ok = (u < 27 and u // 9 == s) or (u >= 27 and honors)
                        if ok:
                            kept[u] = h[u]
                        else:
                            kept[u] = 0
                            off += h[u]
                            if seat_mt[0, u] > 0:
                                feasible = False
                    if feasible:
                        p = max(_shanten_of(kept, nm, sp, suit, honor, acc, nxt), off)
                        f[D_FLUSH + s, t] = min(p + 1, 9) / SHANTEN_SCALE
                    else:
                        f[D_FLUSH + s, t] = 1.0
                if sp and nm == 0:
                    pairs = 0
                    for u in range(34):
                        pairs += h[u] // 2
                    f[D_PAIRS, t] = (7 - min(pairs, 7)) / 7.0
                f[D_TRIPLETS, t] = min(_triplets(h, nm, nchi) + 1, 9) / SHANTEN_SCALE
                h[t] += 1
            most = -1
            for t in range(34):
                if h[t] > 0 and sa[t] == best and ua[t] > most:
                    most = ua[t]
            for t in range(34):
                if h[t] > 0 and sa[t] == best:
                    f[D_BEST, t] = 1.0
                    if ua[t] == most:
                        f[D_EFFICIENT, t] = 1.0
        elif total % 3 == 1:
            for u in range(34):
                if kinds[u] and h[u] < 4 and _near(h, u):
                    h[u] += 1
                    if _shanten_of(h, nm, sp, suit, honor, acc, nxt) < s_now:
                        f[H_IMPROVE, u] = 1.0
                    h[u] -= 1
            for t in range(34):
                if not kinds[t] or h[t] < 2:
                    continue
                h[t] -= 2
                bp = 99
                for d in range(34):
                    if h[d] > 0:
                        h[d] -= 1
                        x = _shanten_of(h, nm + 1, sp, suit, honor, acc, nxt)
                        if x < bp:
                            bp = x
                        h[d] += 1
                h[t] += 2
                if bp < s_now:
                    f[H_PONG_BETTER, t] = 1.0
                elif bp == s_now:
                    f[H_PONG_SAME, t] = 1.0
        # the waits of every face-up 亮倒 hand
        for s in range(1, n):
            if o[rev0 + 7 * s, 0] < 0.5:
                continue
            c = 0
            for t in range(34):
                x = 0
                for r in range(4):
                    if o[rev0 + 7 * s + 2 + r, t] > 0.5:
                        x += 1
                shown[t] = x
                c += x
            if c % 3 != 1:
                continue
            face_down = int(round(o[rev0 + 7 * s + 6, 0] * 12.0))
            sp_ok = sp and seat_nm[s] == 0 and face_down == 0 and c == 13
            need = 4 - (c - 1) // 3
            for u in range(34):
                if not kinds[u] or shown[u] >= 4 or shown[u] + seat_mt[s, u] >= 4:
                    continue
                shown[u] += 1
                win = standard_one(shown, need, suit, honor, acc, nxt) == -1
                if not win and sp_ok:
                    win = True
                    for t in range(34):
                        if shown[t] % 2 == 1:
                            win = False
                            break
                shown[u] -= 1
                if win:
                    f[R_WAITS + s - 1, u] = 1.0
                    f[R_WAITS + n - 1, u] += 1.0 / (n - 1)


class HandFeatures:
    """The ``mjenv-hand-v1`` rows of one variant's v1 observations (see the module docstring).

    ``rows`` is the number of derived rows (``15 + n``: 18 for 3 seats, 19 for 4), ``blocks`` their
    ``(name, rows, meaning)`` and ``slices[name]`` their range counted from the first derived row."""

    version = HAND_FEATURES

    def __init__(self, variant="kawuxing3", options=None):
        """``variant``: a variant name (its rules resolved with ``options``) or a :class:`mjenv.rules.Rules`."""
        from mjenv.encoding.observation import ObservationEncoder
        from mjenv.rules.families import rule_family
        from mjenv.rules.value import door_rules

        rules = door_rules(variant, options=options)
        enc = ObservationEncoder(rules)
        self.variant = rules.variant
        self.v1_shape = tuple(enc.shape)
        n = self.n = int(enc.n)
        family = rule_family(rules.family)
        # Kawuxing's only flush is 清一色 (one suit, no dragons: docs/rules/kawuxing.md §3.7); the other families'
        # 混一色 keeps the honors.
        flush_honors = family.name != "kawuxing"
        sl = enc.slices
        self.layout = np.array([sl["hand"].start, sl["kinds"].start, sl["melds"].start, sl["discards"].start,
                                sl["reveal"].start, n, int(family.seven_pairs), int(flush_honors)], np.int64)
        self.blocks = _blocks(n)
        self.rows = sum(r for _, r, _ in self.blocks)
        self.slices, at = {}, 0
        for name, r, _ in self.blocks:
            self.slices[name] = slice(at, at + r)
            at += r
        self.shape = (self.v1_shape[0] + self.rows, self.v1_shape[1])

    def derive(self, obs: np.ndarray) -> np.ndarray:
        """``float32 [K, rows, 34]`` for v1 observations ``obs [K, C, 34]`` (or ``[C, 34]``, giving ``[rows, 34]``)."""
        x = np.asarray(obs, dtype=np.float32)
        single = x.ndim == 2
        if single:
            x = x[None]
        if x.shape[1:] != self.v1_shape:
            raise ValueError(f"{HAND_FEATURES} of {self.variant}: expected mjenv-obs-v1 observations of shape "
                             f"[K, {self.v1_shape[0]}, {self.v1_shape[1]}], got {list(np.shape(obs))}")
        tb = tables()
        out = np.empty((len(x), self.rows, 34), np.float32)
        _derive(np.ascontiguousarray(x), self.layout, tb["suit"], tb["honor"], out)
        return out[0] if single else out

    def extend(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """``float32 [K, C + rows, 34]``: the v1 observations with their derived rows appended (``mask``, the legal
        actions, is not read: the rows depend on the observation alone)."""
        x = np.asarray(obs, dtype=np.float32)
        return np.concatenate([x, self.derive(x)], axis=-2)
