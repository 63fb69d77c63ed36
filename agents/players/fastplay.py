"""The compiled rollout player: the heuristic's core decisions in numba, over the engine's packed state.

This module owns :class:`FastPlayer` (decide for a batch of engine tables in one compiled call, or play them
to the end of the hand: :meth:`FastPlayer.rollout`) and :class:`FastAgent`, the registered agent ``fast``.
The search agent (:mod:`agents.players.search`) rolls its candidate actions out with it.

What it keeps of :class:`agents.players.heuristic.HeuristicAgent` (the ``heuristic-flush`` settings of each family):

* **win** whenever the mask offers it;
* **discard** by plan, then shanten, then ukeire: the plain hand (standard shape, seven pairs where it wins, 烂牌
  in Gejiu), a one-suit **flush** (with honors outside Kawuxing) credited the family's steps (Kawuxing 2 and
  Yangzhou 5 as in ``heuristic-flush``, the others 1) and **all triplets** (Yangzhou 4 as in ``heuristic-flush``,
  Liuwei 1); the plan whose best
  discard has the lowest credited shanten wins, ties to the plain hand; among the discards of the lowest plan
  shanten the most live improving tiles (under the plan: off-plan tiles go first), then the least connected
  tile, then the most visible one; in Kawuxing, between several ready discards, the waits weigh by the capped
  hand value each would score on a discard (:func:`mjenv.engine.kwscore.best_value`: 卡五星, 清一色, 七对 ...);
* **never feed** a revealed (亮倒) player's waits, nor a 包牌 liability (Yangzhou's third chi of the next player's
  flush, a fourth honor set of a 风清 in Yangzhou/Diedaohu ``fengqing_baopai``/Liuwei) while a safe discard exists;
* **亮倒** (Kawuxing) with the chosen ready discard when its waits have at least ``liang_min_live`` live copies and
  at least ``liang_min_wall`` tiles are left, or a single live copy when every wait is a 1× hand that
  ``kaikou: hard`` lets win only by self-draw;
* **kongs** on its own turn when the hand is not worse for it (shanten, and 60 % of the ukeire), always once
  revealed; a **direct kong** of a discard on the same terms; **pong / chi** only when the best plan cost after
  it is lower (pong first on a tie); in Gejiu the **face-up kong tile** whose plan cost is lowest.

What it leaves out: the seven-pairs research plan (``qidui_bonus``, off by default), the deal-in exposure of
Diedaohu/Liuwei and the 园子 balances (a busted player's liabilities).  ``python evaluate.py --agents fast heuristic-flush``
measures what that costs (docs/search.md).

How exactly it is ``heuristic-flush``'s twin: ``tests/test_twins.py`` compares the two players' moves at every
decision with a choice of ``heuristic-flush`` self-play in all seven variants (98.0 % in Diedaohu, 99.6-99.8 %
elsewhere over 20,000 decisions each, ``bench/twins.py``), with a floor per variant, and explains every difference:
an exact tie of the discard ranking, which the compiled player breaks to the lowest tile id and the Python choice
in float32; in Diedaohu also the exposure model it leaves out (Liuwei's weight is 0).

It reads, for the acting seat, only what that seat sees: its own concealed tiles, every seat's melds and
discards, the face-up tiles of revealed players (concealed hand less the face-down triplets), the wall count
and the tile under claim — the blocks of ``mjenv-obs-v1`` — never another seat's concealed tiles or the wall.

Shanten is the one of :mod:`mjenv.encoding.shanten` (the same number, checked with ukeire, the plan shanten and the
per-discard slot numbers on random hands of every variant through :meth:`FastPlayer.hand_numbers`,
``tests/test_fastplay_hands.py``; its tables in "blocks" form,
:func:`mjenv.encoding.shanten.block_tables`, where a component's entry [h, n] is its best score with at most h heads and
n blocks).  A hand is prepared once per plan (its components' products, "evaluation slots"); every one-tile
change after that — each legal discard, each draw of an ukeire scan in the discard's suit — is one table row and
one 2(k + 1)-term max of sums against the product of the other components, and a draw in another suit costs one
product per suit drawn in.  The discards' shanten and the best discards' ukeire share the slots (those kernels, and
the plans', live in :mod:`agents.players.fastkernels`; the decisions and the Python side here).  The hot loops
hold no array views and call no inlined function with array arguments: each of those costs atomic reference
counts, which were a fifth of the player's time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.players.fastkernels import (N_PC, PC_BAO_FENGQING, PC_BAO_FLUSH, PC_CHI, PC_FLUSH, PC_FLUSH_HONORS,
                                        PC_KINDS, PC_LANPAI, PC_LIANG, PC_LIANG_LIVE, PC_LIANG_WALL, PC_N, PC_SP,
                                        PC_TRIP, _EVI, _WS, _allowed_bits, _bonus, _discard_costs, _ev_after,
                                        _ev_prepare, _ev_ukeire, _lanpai_shanten, _lanpai_ukeire, _plan_shanten,
                                        _shanten, _triplets_shanten, _triplets_ukeire, _ukeire, _value_cost)
from agents.players.plans import _BEST as _LANPAI_BEST, _GAIN as _LANPAI_GAIN
from mjenv.encoding.shanten import block_tables as _block_tables
from mjenv.encoding import actions as A
from mjenv.engine import handk, kwscore
from mjenv.engine import state as S
from mjenv.engine.jit import njit
from mjenv.engine.state import (O8_ACTOR, O8_CLAIM_TILE, O8_HAND, O8_HIDDEN, O8_KONG_TILES, O8_MELD_KIND, O8_MELDED,
                                O8_N_MELDS, O8_PHASE, O8_REVEALED, O8_RIVER, O16_BACK, O16_FRONT, O16_RIVER_LEN)
from mjenv.rules.options import get_variant, n_players, tile_kinds

__all__ = ["FastPlayer", "FastAgent", "player_config", "hand_numbers"]


_BIG = 1e6
_SHANTEN_W = 1e4
_OFF_PLAN_W = 100.0


def player_config(variant: str, opts, *, flush_bonus: int | None = None, triplets_bonus: int | None = None,
                  liang_min_live: int = 2, liang_min_wall: int = 4) -> np.ndarray:
    """int64 [N_PC]: the compiled player's settings for ``variant`` under rule options ``opts``; the flush and
    all-triplets credits are ``heuristic-flush``'s, read from :func:`agents.players.heuristic.family_params`, unless
    given."""
    from agents.players.heuristic import family_params  # the one source of the family's credits

    family = get_variant(variant).family
    params = family_params(family)
    flush_kw = params["flush_variant"]  # heuristic-flush's keywords over the family's defaults
    if flush_bonus is None:
        flush_bonus = flush_kw.get("flush_bonus", params["flush_bonus"])
    if triplets_bonus is None:
        triplets_bonus = flush_kw.get("triplets_bonus", params["triplets_bonus"])
    cfg = np.zeros(N_PC, np.int64)
    cfg[PC_N] = n_players(variant)
    cfg[PC_SP] = family in ("kawuxing", "gejiu")
    cfg[PC_LANPAI] = family == "gejiu"
    cfg[PC_FLUSH] = -1 if flush_bonus is None else int(flush_bonus)
    cfg[PC_FLUSH_HONORS] = family != "kawuxing"
    cfg[PC_TRIP] = int(triplets_bonus or 0)
    cfg[PC_LIANG] = family == "kawuxing"
    cfg[PC_LIANG_LIVE] = int(liang_min_live)
    cfg[PC_LIANG_WALL] = int(liang_min_wall)
    bao_flush = family == "yangzhou" and getattr(opts, "baopai", "off") == "on"
    cfg[PC_BAO_FLUSH] = bao_flush
    cfg[PC_BAO_FENGQING] = bao_flush or getattr(opts, "fengqing_baopai", "off") == "on" or family == "liuwei"
    cfg[PC_KINDS] = handk.kinds_bits(tile_kinds(variant, opts))
    cfg[PC_CHI] = family == "yangzhou"
    return cfg


# ------------------------------------------------------------------------------------------- reading a table


@njit(cache=True)
def _read_seat(r8, r16, s, cfg, h, mt, live):
    """Seat ``s``'s concealed counts ``h``, its meld tiles ``mt`` and the copies it has not seen ``live``;
    returns (melds, chi melds)."""
    n = cfg[PC_N]
    kinds = cfg[PC_KINDS]
    for t in range(34):
        h[t] = r8[O8_HAND + 34 * s + t]
        mt[t] = r8[O8_MELDED + 34 * s + t]
        live[t] = 4 - h[t]
    for a in range(n):
        for t in range(34):
            live[t] -= r8[O8_MELDED + 34 * a + t]
        for i in range(r16[O16_RIVER_LEN + a]):
            t = r8[O8_RIVER + S.MAX_RIVER * a + i]
            if t >= 0:
                live[t] -= 1
        if a != s and r8[O8_REVEALED + a] != 0:
            for t in range(34):
                shown = r8[O8_HAND + 34 * a + t]
                if r8[O8_HIDDEN + 34 * a + t] != 0:
                    shown -= 3
                live[t] -= shown
    for t in range(34):
        if (kinds >> t) & 1 == 0 or live[t] < 0:
            live[t] = 0
        elif live[t] > 4:
            live[t] = 4
    nchi = 0
    for i in range(r8[O8_N_MELDS + s]):
        if r8[O8_MELD_KIND + S.MAX_MELDS * s + i] == S.CHI_MELD:
            nchi += 1
    return r8[O8_N_MELDS + s], nchi


@njit(cache=True)
def _danger(r8, s, cfg, tabs, shown, danger):
    """Per tile: how many revealed opponents wait on it, plus the 包牌 liabilities (see the module docstring)."""
    n = cfg[PC_N]
    kinds = cfg[PC_KINDS]
    sp = cfg[PC_SP] != 0
    for t in range(34):
        danger[t] = 0
    for a in range(n):
        if a == s or r8[O8_REVEALED + a] == 0:
            continue
        n_hidden = 0
        owned_bits = np.int64(0)
        for t in range(34):
            x = r8[O8_HAND + 34 * a + t]
            if r8[O8_HIDDEN + 34 * a + t] != 0:
                x -= 3
                n_hidden += 1
            shown[t] = x
            if x + r8[O8_MELDED + 34 * a + t] < 4:
                owned_bits |= np.int64(1) << t
        sp_a = sp and r8[O8_N_MELDS + a] == 0 and n_hidden == 0
        bits = handk.wait_bits(shown, sp_a, tabs) & kinds & owned_bits
        for t in range(34):
            if (bits >> t) & 1:
                danger[t] += 1
    if cfg[PC_BAO_FLUSH]:
        a = (s + 1) % n
        nm = r8[O8_N_MELDS + a]
        nchi = 0
        suit_mask = 0
        for i in range(nm):
            k = r8[O8_MELD_KIND + S.MAX_MELDS * a + i]
            t = r8[S.O8_MELD_TILE + S.MAX_MELDS * a + i]
            if k == S.CHI_MELD:
                nchi += 1
            suit_mask |= 1 << (3 if t >= 27 else t // 9)
        if nchi == 2 and (suit_mask == 1 or suit_mask == 2 or suit_mask == 4):
            su = 0 if suit_mask == 1 else (1 if suit_mask == 2 else 2)
            for t in range(9 * su, 9 * su + 9):
                danger[t] += 1
    if cfg[PC_BAO_FENGQING]:
        for a in range(n):
            if a == s or r8[O8_N_MELDS + a] != 3:
                continue
            honors = True
            for i in range(3):
                if r8[S.O8_MELD_TILE + S.MAX_MELDS * a + i] < 27:
                    honors = False
            if honors:
                for t in range(27, 34):
                    danger[t] += 1


@njit(cache=True)
def _conn(h, t):
    c = 1.5 * max(h[t] - 1, 0)
    if t < 27:
        r = t % 9
        for dr, w in ((1, 1.0), (2, 0.5)):
            if r + dr <= 8:
                c += w * h[t + dr]
            if r - dr >= 0:
                c += w * h[t - dr]
        if r == 0 or r == 8:
            c -= 0.3
    else:
        c -= 0.2
    return c


# ------------------------------------------------------------------------------------------- decisions


@njit(cache=True, inline="always")
def _rows(wi):
    """The work rows every decision reads: hand, meld tiles, live counts, a hand copy, kept tiles, suit codes."""
    return wi[0], wi[1], wi[2], wi[3], wi[4], wi[8]


@njit(cache=True)
def _own_turn(r8, r16, m, s, cfg, kc, tab, tabs, best_tab, gain_tab, ws, wi, full8, work8, cand_a, cand_v,
              all_ukeire):
    """The acting seat's move on its own turn; fills ranked candidates ``cand_a``/``cand_v``, returns their count
    (the first is the choice)."""
    h, mt, live, after, kept, _ = _rows(wi)
    danger = wi[5]
    shown = wi[6]
    costs_all = wi[9:43]  # [34, 6] in rows 9..42 (first 6 columns)
    s_after = wi[43]
    elig = wi[44]
    acc_t = wi[45]
    tmp = ws
    nm, nchi = _read_seat(r8, r16, s, cfg, h, mt, live)
    sp = cfg[PC_SP] != 0
    _danger(r8, s, cfg, tabs, shown, danger)
    any_safe = False
    n_legal = 0
    for t in range(34):
        legal = m[t] or m[A.LIANG + t]
        elig[t] = 1 if legal else 0
        if legal:
            n_legal += 1
            if danger[t] == 0:
                any_safe = True
    if any_safe:
        for t in range(34):
            if elig[t] and danger[t] > 0:
                elig[t] = 0
    _discard_costs(h, nm, mt, nchi, m, cfg, tab, best_tab, ws, wi, kept, costs_all)
    plan = 3
    best_c = 999
    for p in (3, 0, 1, 2, 5):
        for t in range(34):
            if elig[t] and costs_all[t, p] < 99:
                c = costs_all[t, p] - _bonus(p, cfg)
                if c < best_c:
                    best_c = c
                    plan = p
    allowed = _allowed_bits(plan, cfg)
    best_s = 99
    for t in range(34):
        if m[t] or m[A.LIANG + t]:
            s_after[t] = min(costs_all[t, plan], 50)
            if elig[t] and s_after[t] < best_s:
                best_s = s_after[t]
    # ukeire of the best discards (every legal one for the search's candidate list)
    wbits = wi[46]
    metric_t = wi[47]
    cheap_t = wi[48]
    n_ready = 0
    # the plan's kept tiles before the discard, in the slot _discard_costs prepared for them
    for x in range(34):
        kept[x] = h[x] if (allowed >> x) & 1 else 0
    slot = 3 if plan >= 3 else plan
    off_acc = -1  # the ukeire of an off-plan discard: the kept tiles' own, the same for every such discard
    off_bits = np.int64(0)
    for t in range(34):
        acc_t[t] = 0
        metric_t[t] = 0
        wbits[t] = 0
        cheap_t[t] = 0
        if not (m[t] or m[A.LIANG + t]):
            continue
        is_cand = elig[t] and s_after[t] == best_s
        if is_cand or all_ukeire:
            if plan == 5:
                for x in range(34):
                    after[x] = h[x]
                after[t] -= 1
                acc = _triplets_ukeire(after, nm, nchi, live)
            elif (allowed >> t) & 1 == 0:
                if off_acc < 0:
                    _, off_acc, off_bits = _ev_ukeire(kept, -1, nm, sp, live, allowed, tab, ws, wi, slot)
                acc = off_acc
                wbits[t] = off_bits
            else:
                base_u, acc, bits = _ev_ukeire(kept, t, nm, sp, live, allowed, tab, ws, wi, slot)
                wbits[t] = bits
                if cfg[PC_LANPAI] and plan == 3:
                    kept[t] -= 1
                    if _lanpai_shanten(kept, nm, best_tab) < base_u:
                        acc = _lanpai_ukeire(kept, live, gain_tab)
                    kept[t] += 1
            acc_t[t] = acc
            metric_t[t] = acc + (_OFF_PLAN_W if (allowed >> t) & 1 == 0 else 0)
            if is_cand and s_after[t] == 0:
                n_ready += 1
    # Kawuxing: between several ready discards (or for the 1x-hand 亮倒 rule) the waits weigh by hand value
    cheap_best = False
    kaikou_hard = kc[kwscore.KW_KAIKOU] == 2
    if cfg[PC_LIANG] and (n_ready > 1 or kaikou_hard):
        mk = r8[O8_MELD_KIND + S.MAX_MELDS * s : O8_MELD_KIND + S.MAX_MELDS * s + S.MAX_MELDS]
        mtl = r8[S.O8_MELD_TILE + S.MAX_MELDS * s : S.O8_MELD_TILE + S.MAX_MELDS * s + S.MAX_MELDS]
        has_kong = False
        for j in range(nm):
            if mk[j] >= S.DIRECT_KONG:
                has_kong = True
        for t in range(34):
            if not (m[t] or m[A.LIANG + t]) or not (elig[t] and s_after[t] == best_s and best_s == 0):
                continue
            if not (n_ready > 1 or (kaikou_hard and acc_t[t] < cfg[PC_LIANG_LIVE])):
                continue
            for x in range(34):
                full8[x] = h[x]
            full8[t] -= 1
            ev = 0
            cheap = True
            for w in range(34):
                if (wbits[t] >> w) & 1 == 0 or live[w] <= 0:
                    continue
                full8[w] += 1
                value, cap = kwscore.best_value(full8, work8, w, mk, mtl, nm, False, 0, kwscore.HOW_DISCARD, False, kc)
                full8[w] -= 1
                if value > 0:
                    ev += live[w] * kwscore.capped(value, cap)
                    ok = not (kc[kwscore.KW_KAIKOU] != 0 and value < 2 and (kc[kwscore.KW_KAIKOU] == 2 or not has_kong))
                    if ok:
                        cheap = False
            metric_t[t] = ev
            cheap_t[t] = 1 if cheap else 0  # no wait is a hand that may win on a discard (1x under kaikou hard)
    k = 0
    best_score = -1e300
    best_t = -1
    for t in range(34):
        if not (m[t] or m[A.LIANG + t]):
            continue
        is_cand = elig[t] and s_after[t] == best_s
        score = (-_BIG * (1 if (not elig[t]) or danger[t] > 0 else 0) * max(danger[t], 1) - _SHANTEN_W * s_after[t]
                 + metric_t[t] - 0.01 * _conn(h, t) - 0.001 * live[t])
        # the choice is the best among the candidates (heuristic); the rest are ranked for the search
        if is_cand and score > best_score:
            best_score = score
            best_t = t
        a = t if m[t] else A.LIANG + t
        cand_a[k] = a
        cand_v[k] = score + (1e9 if is_cand else 0.0)
        k += 1
    if best_t >= 0 and cfg[PC_LIANG] and kaikou_hard and best_s == 0 and acc_t[best_t] >= 1:
        cheap_best = cheap_t[best_t] == 1
    # 亮倒 with the chosen discard
    revealed = r8[O8_REVEALED + s] != 0
    choice = best_t
    if best_t >= 0:
        choice = best_t if m[best_t] else A.LIANG + best_t
        wall_left = np.int64(r16[O16_BACK]) - np.int64(r16[O16_FRONT])
        if (cfg[PC_LIANG] and not revealed and m[A.LIANG + best_t] and wall_left >= cfg[PC_LIANG_WALL]
                and s_after[best_t] == 0 and (acc_t[best_t] >= cfg[PC_LIANG_LIVE] or cheap_best)):
            choice = A.LIANG + best_t
            # the plain discard stays a candidate next to the 亮倒
            for i in range(k):
                if cand_a[i] == best_t:
                    cand_v[i] = cand_v[i] - 0.5
            cand_a[k] = choice
            cand_v[k] = best_score + 1e9 + 1.0
            k += 1
    # kongs on one's own turn
    for t in range(34):
        if not m[A.KONG_SELF + t]:
            continue
        take = revealed
        if not take:
            for x in range(34):
                after[x] = h[x]
            nmk = nm
            if h[t] == 4:
                after[t] -= 4
                nmk = nm + 1
            else:
                after[t] -= 1
            s_k, acc_k, _ = _ukeire(after, nmk, sp, live, (np.int64(1) << 34) - 1, ws, wi, tab)
            acc_best = acc_t[best_t] if best_t >= 0 else 0
            sb = best_s if best_t >= 0 else 99
            take = s_k < sb or (s_k == sb and acc_k >= 0.6 * acc_best)
        cand_a[k] = A.KONG_SELF + t
        cand_v[k] = (best_score + 1e9 + 2.0) if take else -1e300
        k += 1
        if take and choice < A.KONG_SELF:
            choice = A.KONG_SELF + t
    # rank: the choice first, then by value
    _rank(cand_a, cand_v, k, choice)
    return k


@njit(cache=True)
def _rank(cand_a, cand_v, k, choice):
    """Sort candidates by value, descending, with ``choice`` first (insertion sort: k is small)."""
    for i in range(k):
        if cand_a[i] == choice:
            cand_v[i] = 1e300
    for i in range(1, k):
        a = cand_a[i]
        v = cand_v[i]
        j = i - 1
        while j >= 0 and cand_v[j] < v:
            cand_a[j + 1] = cand_a[j]
            cand_v[j + 1] = cand_v[j]
            j -= 1
        cand_a[j + 1] = a
        cand_v[j + 1] = v


@njit(cache=True)
def _claim(r8, r16, m, s, cfg, tab, tabs, best_tab, ws, wi, cand_a, cand_v):
    """Reply in a claim window: direct kong, pong, chi or pass; ranked candidates, returns their count."""
    h, mt, live, after, kept, _ = _rows(wi)
    mtm = wi[5]
    costs = wi[9]
    tmp = ws
    nm, nchi = _read_seat(r8, r16, s, cfg, h, mt, live)
    sp = cfg[PC_SP] != 0
    c = np.int64(r8[O8_CLAIM_TILE])
    revealed = r8[O8_REVEALED + s] != 0
    k = 0
    choice = A.PASS
    if m[A.PASS]:
        cand_a[k] = A.PASS
        cand_v[k] = 0.0
        k += 1
    if c < 0:
        return k
    if m[A.KONG_CLAIM]:
        s_now = _shanten(h, nm, sp, tab, tmp)
        for x in range(34):
            after[x] = h[x]
        after[c] -= 3
        s_k, acc_k, _ = _ukeire(after, nm + 1, sp, live, (np.int64(1) << 34) - 1, ws, wi, tab)
        ok = revealed or s_k < s_now or (s_k == s_now and (s_now > 0 or acc_k > 0))
        cand_a[k] = A.KONG_CLAIM
        cand_v[k] = 1.0 if ok else -1.0
        k += 1
        if ok:
            choice = A.KONG_CLAIM
    now = _value_cost(h, nm, mt, nchi, cfg, tab, best_tab, tmp, kept, costs)
    best = now
    for action in (A.PONG, A.CHI_LOW, A.CHI_MID, A.CHI_HIGH):
        if not m[action]:
            continue
        for x in range(34):
            after[x] = h[x]
            mtm[x] = mt[x]
        if action == A.PONG:
            after[c] -= 2
            mtm[c] += 3
            lo = c
        else:
            lo = c - (action - A.CHI_LOW)
            for x in range(lo, lo + 3):
                if x != c:
                    after[x] -= 1
                mtm[x] += 1
        cost = _value_cost(after, nm + 1, mtm, nchi + (1 if action != A.PONG else 0), cfg, tab, best_tab, tmp,
                           kept, costs)
        cand_a[k] = action
        cand_v[k] = float(now - cost)
        k += 1
        if cost < best and choice != A.KONG_CLAIM:
            best = cost
            choice = action
    _rank(cand_a, cand_v, k, choice)
    return k


@njit(cache=True)
def _pick(r8, r16, m, s, cfg, tab, best_tab, ws, wi, cand_a, cand_v):
    """Gejiu: the face-up kong tile leaving the lowest plan cost (a completed hand is the lowest)."""
    h, mt, live, _, kept, _ = _rows(wi)
    costs = wi[9]
    nm, nchi = _read_seat(r8, r16, s, cfg, h, mt, live)
    k = 0
    best = 999
    choice = -1
    for slot in range(2):
        action = A.KONGTILE_0 + slot
        t = r8[O8_KONG_TILES + slot]
        if not m[action] or t < 0:
            continue
        h[t] += 1
        cost = _value_cost(h, nm, mt, nchi, cfg, tab, best_tab, ws, kept, costs)
        h[t] -= 1
        cand_a[k] = action
        cand_v[k] = -float(cost)
        k += 1
        if cost < best:
            best = cost
            choice = action
    if choice >= 0:
        _rank(cand_a, cand_v, k, choice)
    return k


@njit(cache=True)
def _decide_one(r8, r16, m, cfg, kc, tab, tabs, best_tab, gain_tab, ws, wi, full8, work8, cand_a, cand_v,
                all_ukeire):
    """Ranked candidate actions of the acting seat of one table (count returned; the first is the choice)."""
    s = np.int64(r8[O8_ACTOR])
    ph = r8[O8_PHASE]
    if m[A.WIN]:
        cand_a[0] = A.WIN
        cand_v[0] = 1e300
        return 1
    k = 0
    if ph == S.TURN or ph == S.CLAIMED:
        k = _own_turn(r8, r16, m, s, cfg, kc, tab, tabs, best_tab, gain_tab, ws, wi, full8, work8, cand_a, cand_v,
                      all_ukeire)
    elif ph == S.PICK:
        k = _pick(r8, r16, m, s, cfg, tab, best_tab, ws, wi, cand_a, cand_v)
    elif ph == S.CLAIM or ph == S.ROB:
        k = _claim(r8, r16, m, s, cfg, tab, tabs, best_tab, ws, wi, cand_a, cand_v)
    if k == 0 or not m[cand_a[0]]:  # a phase this player does not model: the first legal action
        for a in range(m.shape[0]):
            if m[a]:
                cand_a[0] = a
                cand_v[0] = 0.0
                return 1
    return k


@njit(cache=True, nogil=True)
def decide_tables(b8, b16, mask, idx, cfg, kc, tab, tabs, best_tab, gain_tab, out):
    """``out[b]`` = the player's action at every table ``b`` in ``idx`` whose hand is live (others: untouched)."""
    ws = np.empty((_WS, 2, 5), np.int16)
    wi = np.zeros((_EVI + 5, 34), np.int64)
    full8 = np.zeros(34, np.int8)
    work8 = np.zeros(34, np.int8)
    cand_a = np.empty(160, np.int64)
    cand_v = np.empty(160, np.float64)
    n = 0
    for j in range(idx.shape[0]):
        b = idx[j]
        if b8[b, O8_PHASE] == S.DONE:
            continue
        _decide_one(b8[b], b16[b], mask[b], cfg, kc, tab, tabs, best_tab, gain_tab, ws, wi, full8, work8, cand_a,
                    cand_v, False)
        out[b] = cand_a[0]
        n += 1
    return n


@njit(cache=True, nogil=True)
def candidates_tables(b8, b16, mask, idx, cfg, kc, tab, tabs, best_tab, gain_tab, out_a, out_n):
    """Ranked candidate actions (``out_a [len(idx), K]``, count ``out_n``; -1 padded) of each table ``idx[j]``."""
    ws = np.empty((_WS, 2, 5), np.int16)
    wi = np.zeros((_EVI + 5, 34), np.int64)
    full8 = np.zeros(34, np.int8)
    work8 = np.zeros(34, np.int8)
    cand_a = np.empty(160, np.int64)
    cand_v = np.empty(160, np.float64)
    K = out_a.shape[1]
    for j in range(idx.shape[0]):
        b = idx[j]
        for i in range(K):
            out_a[j, i] = -1
        out_n[j] = 0
        if b8[b, O8_PHASE] == S.DONE:
            continue
        k = _decide_one(b8[b], b16[b], mask[b], cfg, kc, tab, tabs, best_tab, gain_tab, ws, wi, full8, work8,
                        cand_a, cand_v, True)
        kk = 0
        for i in range(k):
            if kk < K and mask[b, cand_a[i]] and cand_v[i] > -1e299:
                out_a[j, kk] = cand_a[i]
                kk += 1
        out_n[j] = kk


# ------------------------------------------------------------------------------------------- Python side


@njit(cache=True)
def hand_numbers(hands, n_melds, live, cfg, tab, best_tab, gain_tab, out):
    """The compiled player's own hand arithmetic for checks: per row of ``hands`` (int8 [N, 34], ``n_melds`` [N],
    ``live`` [N, 34]) under the configuration ``cfg`` (:func:`player_config`), ``out`` (int64 [N, 8, 34]):
    [0, 0] shanten (:func:`_shanten`, standard and, where the family counts it, seven pairs); [0, 1:3] shanten and
    live improving tiles of the hand over the variant's kinds (:func:`_ukeire`, a fresh slot); [0, 3] the improving
    bits; [0, 4:6] all-triplets shanten and ukeire; [0, 6:8] 烂牌 shanten and ukeire (Gejiu; 99 and 0 elsewhere);
    per held tile t, the hand less t through a prepared slot as the decisions use it: [1, t] standard shanten
    (:func:`_ev_after`), [2, t] shanten, [3, t] live improving tiles and [4, t] improving bits (:func:`_ev_ukeire`),
    -1 where t is not held; [5, 0:3] the flush plans' shanten in each suit (:func:`_plan_shanten`)."""
    ws = np.empty((_WS, 2, 5), np.int16)
    wi = np.zeros((_EVI + 5, 34), np.int64)
    sp = cfg[PC_SP] != 0
    allowed = cfg[PC_KINDS]
    kept = np.zeros(34, np.int8)
    for i in range(hands.shape[0]):
        h = hands[i].copy()
        nm = n_melds[i]
        lv = live[i]
        o = out[i]
        o[:] = -1
        o[0, 0] = _shanten(h, nm, sp, tab, ws)
        s, acc, bits = _ukeire(h, nm, sp, lv, allowed, ws, wi, tab)
        o[0, 1] = s
        o[0, 2] = acc
        o[0, 3] = bits
        o[0, 4] = _triplets_shanten(h, nm, 0)
        o[0, 5] = _triplets_ukeire(h, nm, 0, lv)
        if cfg[PC_LANPAI] != 0:
            o[0, 6] = _lanpai_shanten(h, nm, best_tab)
            o[0, 7] = _lanpai_ukeire(h, lv, gain_tab) if nm == 0 else 0
        else:
            o[0, 6] = 99
            o[0, 7] = 0
        for p in range(3):
            o[5, p] = _plan_shanten(h, nm, p, cfg, tab, ws, kept)
        _ev_prepare(h, nm, tab, ws, wi, 3)
        for t in range(34):
            if h[t] == 0:
                continue
            o[1, t] = _ev_after(t, tab, ws, wi, 3)
            s_t, acc_t, bits_t = _ev_ukeire(h, t, nm, sp, lv, allowed, tab, ws, wi, 3)
            o[2, t] = s_t
            o[3, t] = acc_t
            o[4, t] = bits_t


class FastPlayer:
    """The compiled player for one variant and rule set: decisions, candidate lists and whole rollouts over the
    tables of an :class:`~mjenv.engine.core.Engine` (see the module docstring)."""

    def __init__(self, variant: str = "kawuxing3", options: Any = None, **settings):
        from agents.players.base import resolve_rules

        self.rules = resolve_rules(variant, options)  # variant: a name, or a mjenv.rules.Rules
        self.variant = variant = self.rules.variant
        self.opts = self.rules.options
        self.cfg = player_config(variant, self.opts, **settings)
        # Kawuxing's compiled win valuing reads its options here (waits weighted by hand value)
        self.kc = kwscore.config(self.opts) if self.cfg[PC_LIANG] else np.zeros(kwscore.N_KW, np.int64)
        tb = _block_tables()
        self._tab = tb["joint"]
        self._tabs = handk.tables()
        self._best = _LANPAI_BEST.astype(np.int64)
        self._gain = _LANPAI_GAIN.astype(np.bool_)

    def _check(self, engine) -> None:
        if engine.variant != self.variant:
            raise ValueError(f"engine: variant {engine.variant!r}, this player plays {self.variant!r}")

    def decide(self, engine, tables=None, out: np.ndarray | None = None) -> np.ndarray:
        """int64 [B]: the action of every live table's acting seat (``tables``: only those; others keep ``out``'s
        entries, default -1)."""
        self._check(engine)
        idx = engine._all if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
        if out is None:
            out = np.full(engine.batch_size, -1, np.int64)
        decide_tables(engine._b8, engine._b16, engine.mask, idx, self.cfg, self.kc, self._tab, self._tabs,
                      self._best, self._gain, out)
        return out

    def candidates(self, engine, tables, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(actions int64 [len(tables), k], count int64 [len(tables)])``: each table's legal actions ranked by
        the player (its choice first; -1 padded); a win offered is the only candidate."""
        self._check(engine)
        idx = np.asarray(tables, dtype=np.int64).reshape(-1)
        out_a = np.full((len(idx), k), -1, np.int64)
        out_n = np.zeros(len(idx), np.int64)
        candidates_tables(engine._b8, engine._b16, engine.mask, idx, self.cfg, self.kc, self._tab, self._tabs,
                          self._best, self._gain, out_a, out_n)
        return out_a, out_n

    def hand_numbers(self, hands, n_melds, live) -> dict[str, np.ndarray]:
        """What the player's own hand arithmetic computes for ``hands`` (int ``[N, 34]`` concealed counts), held
        with ``n_melds`` melds (``[N]``), ``live`` (``[N, 34]``) copies unseen, under this player's rules: the
        numbers its decisions use, for checks (``tests/test_fastplay_hands.py`` holds them to
        :mod:`mjenv.encoding.shanten` and :mod:`agents.players.plans`).  Keys: ``shanten`` [N] (standard, and seven pairs where the
        family counts them); for 3k+1-tile hands ``ukeire_shanten``, ``ukeire`` (live improving tiles) and
        ``improving`` (bit t: drawing t lowers the shanten, t live) [N]; ``triplets_shanten``, ``triplets_ukeire``,
        ``lanpai_shanten``, ``lanpai_ukeire`` [N] (烂牌: Gejiu; 99 and 0 elsewhere); ``flush_shanten`` [N, 3] (the
        flush plan in each suit); per held tile t of a 3k+2-tile hand, the hand less t through a prepared slot:
        ``after_standard``, ``after_shanten``, ``after_ukeire``, ``after_improving`` [N, 34] (-1 where t is not
        held)."""
        h = np.ascontiguousarray(hands, dtype=np.int8)
        if h.ndim != 2 or h.shape[1] != 34 or (h < 0).any() or (h > 4).any():
            raise ValueError(f"hands must be counts 0..4 of shape [N, 34], got shape {h.shape}")
        nm = np.ascontiguousarray(np.broadcast_to(np.asarray(n_melds, dtype=np.int64), (len(h),)))
        if ((nm < 0) | (nm > 4) | (h.sum(1) + 3 * nm > 14)).any():
            raise ValueError("n_melds must be 0..4 with at most 14 - 3 x melds tiles in hand")
        lv = np.ascontiguousarray(np.broadcast_to(np.asarray(live, dtype=np.int64), h.shape))
        out = np.empty((len(h), 8, 34), np.int64)
        hand_numbers(h, nm, lv, self.cfg, self._tab, self._best, self._gain, out)
        return {"shanten": out[:, 0, 0], "ukeire_shanten": out[:, 0, 1], "ukeire": out[:, 0, 2],
                "improving": out[:, 0, 3], "triplets_shanten": out[:, 0, 4], "triplets_ukeire": out[:, 0, 5],
                "lanpai_shanten": out[:, 0, 6], "lanpai_ukeire": out[:, 0, 7], "flush_shanten": out[:, 5, :3],
                "after_standard": out[:, 1], "after_shanten": out[:, 2], "after_ukeire": out[:, 3],
                "after_improving": out[:, 4]}

    def rollout(self, engine, max_steps: int = 10_000) -> int:
        """Play every live table of ``engine`` to the end of its hand with this player in every seat; returns the
        number of decisions made."""
        self._check(engine)
        acts = np.zeros(engine.batch_size, np.int64)
        args = (engine._b8, engine._b16, engine.mask, engine._all, self.cfg, self.kc, self._tab, self._tabs,
                self._best, self._gain, acts)
        return play_out(engine, decide_tables, args, acts, max_steps)


def play_out(engine, decide, args, acts: np.ndarray, max_steps: int) -> int:
    """Step ``engine`` with the actions ``decide(*args)`` writes into ``acts`` (returning how many tables it decided
    for) until no table is live; returns the number of decisions made.  The rollout loop of :class:`FastPlayer` and
    of :class:`agents.players.fasthead.FastHeadPlayer`."""
    total = 0
    for _ in range(max_steps):
        k = decide(*args)
        if not k:
            return total
        total += k
        engine.step(acts)
    raise RuntimeError(f"rollout: hands still live after {max_steps} steps")


class FastAgent:
    """The registered agent ``fast``: :class:`FastPlayer` deciding for the arena's tables.

    It reads the engine's tables directly (``uses_engine = True``: callers pass ``engine=`` and ``tables=``), only
    the parts the acting seat sees; it has no use for the observation (``uses_obs = False``)."""

    uses_obs = False
    uses_engine = True

    def __init__(self, variant: str = "kawuxing3", options: Any = None, *, name: str = "fast", **settings):
        self.name = name
        self.player = FastPlayer(variant, options, **settings)  # variant: a name, or a mjenv.rules.Rules
        self.rules = self.player.rules

    def act(self, obs, mask, *, engine=None, tables=None) -> np.ndarray:
        """One action per row: the acting seats of ``engine``'s ``tables`` (``mask`` is their legal mask)."""
        if engine is None or tables is None:
            raise ValueError("agent 'fast' plays on the engine's tables: call act(obs, mask, engine=, tables=)")
        tables = np.asarray(tables, dtype=np.int64).reshape(-1)
        out = self.player.decide(engine, tables)
        return out[tables]

    __call__ = act
