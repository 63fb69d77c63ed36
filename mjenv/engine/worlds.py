"""Sampled worlds: a table as one seat knows it, its hidden part dealt afresh (search by determinization).

This module owns :func:`sample_worlds` (``Engine.sample_worlds`` calls it) and its compiled sampler.  From one
table of a source engine and one seat ``s``, it fills the ``n`` tables of a world engine with copies of the table
in which everything ``s`` cannot see is resampled, as OpenSpiel's ``resample_from_infostate`` does for its
imperfect-information games.  docs/search.md defines exactly what a seat knows; in short it is the table's
public state, the seat's own concealed tiles, its own lock / 大吊车 / claim-window state, and no more.

What is dealt afresh (the *hidden places*): every other seat's concealed tiles that are not face up — all of an
unrevealed seat's hand except the tile of an added kong under a rob window; a 亮倒 seat's face-down triplets
(kinds only: they stay triplets, §3.6 D2) and the tile it just drew — and the live wall from its front to its
back, replacement tiles included.  The tiles that go there are the *unseen* ones: the variant's tile set less
everything ``s`` sees (its hand, every meld, every river, 亮倒 hands' face-up tiles, Gejiu's face-up kong tiles).
A world is a uniformly random permutation of the unseen tiles dealt into the hidden places, conditioned on:

* face-down triplets: each slot takes three copies of one kind the seat does not show (drawn with weight
  ``c(c-1)(c-2)`` of the kind's unseen count ``c``, which is the uniform permutation conditioned on the three
  places being equal), and they are the engine's own choice for the world hand (``_hideable_triplets``: the
  largest set that keeps the wait set, §3.6 D2);
* what the table's resting state says publicly (a state with one legal action is never left resting, and a claim
  window only stays open while someone may still claim): an other seat that must act now has at least two legal
  actions; in a claim or rob window, some other seat may claim the tile — one after ``s`` in turn order if ``s``
  has answered already, one before it if ``s`` may claim but is not asked yet.

Rejected worlds are dealt again (at most ``max_tries`` times each).  Hidden state that follows from hidden tiles
is derived afresh: the other seats' face-down triplet flags, the tile the seat on turn drew, their claim-window
eligibility (judged by the kernels' own window functions, so a world's window is what the engine would have
opened), missed-win locks and 大吊车 tiles (replayed over the public history of discards and claims since the
seat's last draw, as the engine set them: docs/search.md), and the acting seat's legal mask.  The other seats'
answers in an open window are cleared: they are asked (again) after ``s`` — claims are simultaneous at a real
table, so the order of asking hides nothing.

Each world's random numbers are SplitMix64 seeded with ``mix(mix(seed) ^ j)`` for world ``j`` (as the seeded
walls), and the sampler reads only what ``s`` knows, so resampling a world with the same seed gives the same
worlds (tests/test_worlds.py).
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import codes as K
from mjenv.engine import state as S
from mjenv.engine import yzscore
from mjenv.engine.claims import claim_bits
from mjenv.engine.ddend import _louhu_window
from mjenv.engine.entry import features
from mjenv.engine.gjend import _shape_window
from mjenv.engine.jit import njit
from mjenv.engine.kwend import kw_window_if
from mjenv.engine.masks import _compute_mask
from mjenv.engine.state import (
    ADDED_KONG, CHI_MELD, CLAIM, CONCEALED_KONG, DIRECT_KONG, DONE, MAX_MELDS, MAX_RIVER, O8_ACTOR, O8_CLAIM_FROM,
    O8_CLAIM_KONG_POS, O8_CLAIM_OPTS, O8_CLAIM_REPLY, O8_CLAIM_TILE, O8_CUR, O8_DADIAOCHE, O8_DEALER, O8_DRAWN,
    O8_HAND, O8_HIDDEN, O8_KONG_COUNT, O8_KONG_TILES, O8_MELD_KIND, O8_MELD_SRC, O8_MELD_TILE, O8_MELDED,
    O8_N_MELDS, O8_PHASE, O8_REVEALED, O8_RIVER, O8_WALL, O16_BACK, O16_CLAIM_VALUE, O16_FRONT, O16_LOCK,
    O16_N_DISCARDS, O16_RIVER_LEN, O16_RIVER_TIME, PICK, PONG_MELD, ROB, TURN,
)
from mjenv.engine.calls import _UNREAD, _direct_entry
from mjenv.engine.table import _complete_with, _hideable_triplets, _splitmix
from mjenv.engine.yzend import yz_window_if

__all__ = ["sample_worlds", "MAX_TRIES"]

MAX_TRIES = 1_000_000
"""Deals tried per world before giving up.  Almost every world takes one or a few; a window that ``s`` watches
while only a completed hand can claim the tile (a rob window, or a discard nobody else holds a pair of) needs one
of the other seats' resampled hands to complete on it, which can take some 10^4 deals (about 10 ms a world)."""

_MASK64 = (1 << 64) - 1

# Status codes of the compiled sampler (>= 0: worlds written).
ERR_SLOTS = -1  # the hidden places and the unseen tiles do not match (a corrupt state)
ERR_TRIES = -2  # no consistent world found within max_tries for world ``info[0]``
ERR_HISTORY = -3  # the rivers and melds fit no order of discards and claims (a corrupt state)

_jit = njit(cache=True, _nrt=False)


@_jit
def _next(rng):
    """The next SplitMix64 output of the generator state ``rng[0]`` (advanced in place)."""
    x = rng[0] + np.uint64(0x9E3779B97F4A7C15)
    rng[0] = x
    z = x
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@_jit
def _below(rng, k):
    """A uniform int in 0..k-1 (k >= 1; the modulo bias of a 64-bit draw is negligible)."""
    return np.int64(_next(rng) % np.uint64(k))


@_jit
def _public(s8, s16, cfg, seat, unseen, pub, ntrip, nfree, dslot):
    """What ``seat`` knows of the source row ``(s8, s16)``, per other seat p: its face-up concealed tiles
    ``pub[p]``, its face-down triplets ``ntrip[p]``, its other hidden tiles ``nfree[p]``, whether it holds a
    hidden drawn tile ``dslot[p]``; and the unseen tile counts ``unseen``.  Returns the number of hidden places
    less the number of unseen tiles (0 for a sound state)."""
    n = cfg[K.C_N]
    kb = cfg[K.C_KINDS_BITS]
    ph = s8[O8_PHASE]
    cur = s8[O8_CUR]
    frm = s8[O8_CLAIM_FROM]
    for x in range(34):
        unseen[x] = 4 if (kb >> x) & 1 else 0
        unseen[x] -= s8[O8_HAND + 34 * seat + x]
    for p in range(n):
        for x in range(34):
            unseen[x] -= s8[O8_MELDED + 34 * p + x]
        for i in range(s16[O16_RIVER_LEN + p]):
            unseen[s8[O8_RIVER + MAX_RIVER * p + i]] -= 1
    for i in range(2):
        if s8[O8_KONG_TILES + i] >= 0:
            unseen[s8[O8_KONG_TILES + i]] -= 1
    places = np.int64(s16[O16_BACK]) - np.int64(s16[O16_FRONT])
    for p in range(n):
        for x in range(34):
            pub[p, x] = 0
        ntrip[p] = 0
        nfree[p] = 0
        dslot[p] = 0
        if p == seat:
            continue
        size = 0
        for x in range(34):
            size += s8[O8_HAND + 34 * p + x]
        holding = ph == TURN and cur == p
        dslot[p] = 1 if holding else 0
        shown = 0
        if s8[O8_REVEALED + p] != 0:
            # 亮倒: everything is face up except the face-down triplets and a tile just drawn (as the observation).
            d = s8[O8_DRAWN]
            for x in range(34):
                c = np.int64(s8[O8_HAND + 34 * p + x])
                if s8[O8_HIDDEN + 34 * p + x] != 0:
                    c -= 3
                    ntrip[p] += 1
                if holding and x == d:
                    c -= 1
                pub[p, x] = c
                shown += c
        elif ph == ROB and p == frm:
            pub[p, s8[O8_CLAIM_TILE]] = 1  # the added-kong (or picked kong) tile under the rob window is public
            shown = 1
        for x in range(34):
            unseen[x] -= pub[p, x]
        nfree[p] = size - shown - 3 * ntrip[p] - dslot[p]
        places += nfree[p] + dslot[p] + 3 * ntrip[p]
    total = 0
    for x in range(34):
        if unseen[x] < 0:
            return -1
        total += unseen[x]
    return places - total


@_jit
def _triplets_as_chosen(r8, cfg, tabs, scr, p, trip_bits, drawn_slot):
    """§3.6 D2 for a world's 亮倒 seat ``p``: the engine's choice of face-down triplets (``_hideable_triplets``) for
    its hand after the 亮倒 discard is exactly ``trip_bits``.  That hand is its hand now, less a tile it holds just
    drawn, with its kongs since undone; the state does not say which kongs came after the 亮倒 nor how, so every
    way of each is tried (docs/search.md, "How a world is made"): way 0 before it; 1 after it, of the tile drawn; 2 + m
    (concealed and added kongs, D3) of tiles held face up, the drawn tile — the m-th kind held now — kept."""
    d = r8[O8_DRAWN]
    if drawn_slot:
        r8[O8_HAND + 34 * p + d] -= 1
    ybits, ny, nk, kt, total = np.int64(0), 0, 0, np.int64(0), 1
    for x in range(34):
        if r8[O8_HAND + 34 * p + x] > 0:
            ybits |= np.int64(1) << x
            ny += 1
    for j in range(r8[O8_N_MELDS + p]):
        kind = r8[O8_MELD_KIND + MAX_MELDS * p + j]
        if kind == CONCEALED_KONG or kind == DIRECT_KONG or kind == ADDED_KONG:
            scr[3, nk] = kind
            kt |= np.int64(r8[O8_MELD_TILE + MAX_MELDS * p + j]) << (6 * nk)
            total *= 2 if kind == DIRECT_KONG else 2 + ny
            nk += 1
    ok = False
    for code in range(total):
        c, kb = code, np.int64(0)
        for i in range(nk):
            radix = 2 if scr[3, i] == DIRECT_KONG else 2 + ny
            scr[2, i] = c % radix  # this kong's way
            c //= radix
            y, m = -1, scr[2, i] - 2
            for t in range(34):
                if m >= 0 and (ybits >> t) & 1:
                    y = t if m == 0 else y
                    m -= 1
            scr[2, 4 + i] = y
            if scr[2, i] != 0:
                kb |= np.int64(1) << ((kt >> (6 * i)) & 63)
        _undo_kongs(r8, p, nk, kt, scr, 1)
        fits = True
        for x in range(34):
            fits = fits and r8[O8_HAND + 34 * p + x] >= 0
        if fits and (_hideable_triplets(r8, cfg, tabs, scr, p) & ~kb) == trip_bits:
            ok = True
        _undo_kongs(r8, p, nk, kt, scr, -1)
        if ok:
            break
    if drawn_slot:
        r8[O8_HAND + 34 * p + d] += 1
    return ok


@_jit
def _undo_kongs(r8, p, nk, kt, scr, sign):
    """Seat ``p``'s hand and melds before its kongs of way ``scr[2, i]`` (``scr[2, 4 + i]``: the drawn tile kept,
    ``scr[3, i]``: the kong's kind; :func:`_triplets_as_chosen`); ``sign`` -1 redoes them."""
    for i in range(nk):
        way = scr[2, i]
        if way != 0:
            x = (kt >> (6 * i)) & 63
            added = scr[3, i] == ADDED_KONG
            if way >= 2:
                r8[O8_HAND + 34 * p + scr[2, 4 + i]] -= sign
            r8[O8_HAND + 34 * p + x] += sign * ((0 if added else 3) + (1 if way >= 2 else 0))
            r8[O8_MELDED + 34 * p + x] -= sign * (1 if added else 4)


@_jit
def _judge(E, b, t, frm, rob, bits):
    """Claim bit 1 and value of the seats ``bits`` whose hands complete on ``t``: the family's window judge, as
    ``claims._open_window`` calls it.  False when no compiled judge applies or it left the window to Python
    (a value past the int16 claim value): the world is then dealt again."""
    cfg = E[7]
    if cfg[K.C_KW_SCORE] != 0:
        return kw_window_if(E, b, t, frm, rob, bits)
    if cfg[K.C_YZ + yzscore.YZ_ON] != 0:
        yz_window_if(E, b, t, bits)
        return True
    if cfg[K.C_LOUHU_WINDOW] != 0:
        _louhu_window(E, b, t, frm, bits)
        return True
    if cfg[K.C_WIN_ON_SHAPE] != 0:
        _shape_window(E, b, bits)
        return True
    return False


@_jit
def _next_claimed(s8, o, j):
    """Seat ``o``'s first meld slot at or after ``j`` that was claimed from a discard (a pong, later perhaps an
    added kong, a chi or a direct kong; concealed kongs have no source), or -1."""
    while j < s8[O8_N_MELDS + o]:
        if s8[O8_MELD_SRC + MAX_MELDS * o + j] >= 0:
            return j
        j += 1
    return -1


@_jit
def _odometer(digits, at, L, n):
    """Step the ``L`` base-``n`` digits ``digits[at:at + L]`` (lowest first) to the next assignment; True when
    they wrapped round to all zeros (every assignment tried)."""
    for i in range(L):
        digits[at + i] += 1
        if digits[at + i] < n:
            return False
        digits[at + i] = 0
    return True


@_jit
def _history(s8, s16, cfg, seat, hs, ht, hc, hk, hl, hp, ptr, chain, start):
    """The table's public history of discards, by time ``T`` (0 .. n_discards - 1): who made it (``hs``), its tile
    (``ht``; -1 when a chi took it: the state keeps a chi's lowest tile only), who claimed it (``hc``, -1 for
    none), with what (``hk``: PONG_MELD, CHI_MELD or DIRECT_KONG) and a chi's lowest tile (``hl``); and per other
    seat ``p`` the first time ``start[p]`` whose discard window may have locked it (docs/search.md).

    Rivers hold the unclaimed discards with their times; a claimed discard is a gap.  The dealer discards first;
    after an unclaimed discard the next seat discards, after a claimed one the claimer, so the claimer of a gap is
    the next discarder (the seat on turn for the latest), and its meld is its next one claimed from the gap's
    discarder.  A run of gaps is solved as a whole (each claimer's melds in slot order); the first consistent
    assignment of all runs together is taken (each claimed meld used once).  Returns 1 when a second assignment
    fits too (not met in the tests), 0 when one does, -1 when none does (not a state the engine makes)."""
    n = cfg[K.C_N]
    clock = np.int64(s16[O16_N_DISCARDS])
    for tm in range(clock + 1):
        hs[tm] = -1
        ht[tm] = -1
        hc[tm] = -1
        hk[tm] = 0
        hl[tm] = -1
    for p in range(n):
        ptr[p] = 0
        for i in range(s16[O16_RIVER_LEN + p]):
            tm = np.int64(s16[O16_RIVER_TIME + MAX_RIVER * p + i])
            hs[tm] = p
            ht[tm] = s8[O8_RIVER + MAX_RIVER * p + i]
    # The runs of consecutive gaps; a run's first discarder follows the unclaimed discard before it (or is the
    # dealer), its last claimer is the next unclaimed discard's discarder (or the seat on turn).
    nr = 0
    tm = 0
    while tm < clock:
        if hs[tm] >= 0:
            if (tm == 0 and hs[tm] != s8[O8_DEALER]) or (tm > 0 and hs[tm - 1] >= 0 and hs[tm] != (hs[tm - 1] + 1) % n):
                return -1
            tm += 1
            continue
        L = 0
        while tm + L < clock and hs[tm + L] < 0:
            L += 1
        chain[3 * nr] = tm
        chain[3 * nr + 1] = L
        tm += L
        nr += 1
    # Depth-first over the runs (each claimer's melds are consumed in slot order), every claimed meld used once.
    # Per gap its claimer digit in chain[R0 + T], per run the pointers before it in chain[P0 + 4 r + o].
    R0 = 3 * MAX_RIVER
    P0 = R0 + clock + 1
    solutions = 0
    r = 0
    fresh = True
    steps = 0
    while r >= 0 and solutions < 2 and steps < 200000:
        steps += 1
        if r == nr:
            done = True
            for o in range(n):
                if _next_claimed(s8, o, ptr[o]) >= 0:
                    done = False
            if done:
                solutions += 1
                if solutions == 1:
                    for q in range(nr):
                        t0 = chain[3 * q]
                        for i in range(chain[3 * q + 1]):
                            hc[t0 + i] = chain[R0 + t0 + i]
            r -= 1
            fresh = False
            if r < 0:
                break
        t0 = chain[3 * r]
        L = chain[3 * r + 1]
        if fresh:
            for o in range(n):
                chain[P0 + 4 * r + o] = ptr[o]
            for i in range(L):
                chain[R0 + t0 + i] = 0
        else:  # the next assignment of this run
            for o in range(n):
                ptr[o] = chain[P0 + 4 * r + o]
            if _odometer(chain, R0 + t0, L, n):
                r -= 1
                fresh = False
                continue
        # find the first valid assignment from the current digits on
        while True:
            ok = True
            dd = (hs[t0 - 1] + 1) % n if t0 > 0 else np.int64(s8[O8_DEALER])
            for o in range(n):
                ptr[o] = chain[P0 + 4 * r + o]
            for i in range(L):
                c = chain[R0 + t0 + i]
                j = _next_claimed(s8, c, ptr[c]) if c != dd else -1
                if j < 0 or s8[O8_MELD_SRC + MAX_MELDS * c + j] != dd or (
                        s8[O8_MELD_KIND + MAX_MELDS * c + j] == CHI_MELD and c != (dd + 1) % n):
                    ok = False
                    break
                ptr[c] = j + 1
                dd = c
            last = hs[t0 + L] if t0 + L < clock else np.int64(s8[O8_CUR])
            if ok and dd == last:
                break
            if _odometer(chain, R0 + t0, L, n):
                ok = False
                break
        if ok:
            r += 1
            fresh = True
        else:
            r -= 1
            fresh = False
    if solutions == 0:
        return -1
    # Fill the gaps from the solution: discarder, claim kind and tile (a chi's tile is not known).
    for o in range(n):
        ptr[o] = 0
    for tm in range(clock):
        if hc[tm] < 0:
            continue
        d = hc[tm - 1] if tm > 0 and hc[tm - 1] >= 0 else ((hs[tm - 1] + 1) % n if tm > 0 else np.int64(s8[O8_DEALER]))
        c = hc[tm]
        j = _next_claimed(s8, c, ptr[c])
        ptr[c] = j + 1
        kind = s8[O8_MELD_KIND + MAX_MELDS * c + j]
        low = s8[O8_MELD_TILE + MAX_MELDS * c + j]
        hs[tm] = d
        if kind == CHI_MELD:
            hk[tm] = CHI_MELD
            hl[tm] = low
        else:
            hk[tm] = DIRECT_KONG if kind == DIRECT_KONG else PONG_MELD
            ht[tm] = low
    ambiguous = 1 if solutions > 1 else 0
    # The kong chain position each discard was made at (Kawuxing's 杠上炮): the state keeps it for the latest
    # discard; an earlier one was made after no kong when its discarder has none, and after the direct kong it
    # claimed just before (position as _kong_position finds it) when that kong is its only one; else it is not
    # known (the state keeps no time for concealed and added kongs) and taken as none.
    link = cfg[K.C_KONG_LINK]
    for tm in range(clock):
        hp[tm] = 0
        q = hs[tm]
        if tm == clock - 1:
            hp[tm] = s8[O8_CLAIM_KONG_POS]
        elif tm >= 1 and hc[tm - 1] == q and hk[tm - 1] == DIRECT_KONG and s8[O8_KONG_COUNT + q] == 1:
            if link == K.LINK_CHAIN and hp[tm - 1] > 0:
                hp[tm] = hp[tm - 1] + 1
            else:
                hp[tm] = 1
    # Where each other seat's lock may have started: it ends at the seat's draws (a kong's replacement too), so
    # walk back from now over its turns that began with a pong or chi instead of a draw.
    ph = s8[O8_PHASE]
    cur = s8[O8_CUR]
    for p in range(n):
        start[p] = clock
        if p == seat:
            continue
        if cur == p and (ph == TURN or ph == ROB):
            continue  # it has just drawn
        if cur == p and ph == PICK and not (clock > 0 and hc[clock - 1] == p and hk[clock - 1] == DIRECT_KONG):
            continue  # a kong in a drawn turn
        top = clock
        if clock > 0 and hc[clock - 1] == p and hk[clock - 1] == CHI_MELD:
            continue  # it chied just now: the tiles it gave up are not known (the claimed one is not kept)
        while True:
            t = top - 1
            while t >= 0 and hs[t] != p:
                t -= 1
            if t < 0:
                start[p] = 0  # no discard yet: its hand has not changed since the deal
                break
            if ht[t] < 0:
                start[p] = t + 1  # its discard was chied: the hand before it is not known
                break
            if t >= 1 and hc[t - 1] == p and hk[t - 1] == PONG_MELD:
                top = t - 1  # this turn began with a pong: the lock carried over it
                continue
            if t >= 1 and hc[t - 1] == p and hk[t - 1] == CHI_MELD:
                start[p] = t  # a chi of an unknown tile: windows before it are not replayed
                break
            start[p] = t  # this turn began with a draw (or a direct kong's replacement)
            break
    return ambiguous


@_jit
def _meld_tiles(r8, p, j, kind, t, low, h, hand_sign, meld_sign):
    """Move the tiles of seat ``p``'s claim in meld slot ``j`` (kind ``kind`` of tile ``t``, a chi from ``low``)
    between its hand (``h``, the tiles it gave up: ``hand_sign``) and its melded counts (``meld_sign``)."""
    if kind == CHI_MELD:
        for x in range(low, low + 3):
            r8[O8_MELDED + 34 * p + x] += meld_sign
            if x != t:
                h[x] += hand_sign
    else:
        k = 3 if kind == DIRECT_KONG else 2
        h[t] += hand_sign * k
        r8[O8_MELDED + 34 * p + t] += meld_sign * (k + 1)


@_jit
def _derive_locks(E, b, seat, clock, hs, ht, hc, hk, hl, hp, start, h):
    """Missed-win locks and 大吊车 tiles of the other seats in world ``b``, replayed as the engine sets them: from
    ``start[p]`` on, the seat's hand at each earlier window is its world hand plus the tiles it discarded and
    melded since, each window on another seat's discard is judged in time order by the family's window judge
    with the lock as it grew (a legal win passed raises the lock to its value), and each of its discards sets
    its 大吊车 tile (locked, left holding one tile equal to the discard: §7.6)."""
    b8, b16 = E[0], E[1]
    cfg, tabs = E[7], E[8]
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[K.C_N]
    open_claim = r8[O8_PHASE] == CLAIM
    save_tile = r8[O8_CLAIM_TILE]
    save_from = r8[O8_CLAIM_FROM]
    save_kp = r8[O8_CLAIM_KONG_POS]
    save_front = r16[O16_FRONT]
    if r16[O16_FRONT] >= r16[O16_BACK]:
        r16[O16_FRONT] = r16[O16_BACK] - 1  # every replayed window had a tile left to draw after it
    for p in range(n):
        if p == seat:
            continue
        r16[O16_LOCK + p] = 0
        r8[O8_DADIAOCHE + p] = -1
        s0 = start[p]
        if s0 >= clock:
            continue
        # Undo what the seat did since s0: its discards back into its hand, its melds (its last slots) undone.
        for x in range(34):
            h[x] = r8[O8_HAND + 34 * p + x]
        nm = r8[O8_N_MELDS + p]
        last_disc = -1
        for tm in range(s0, clock):
            if hs[tm] == p:
                h[ht[tm]] += 1
                last_disc = tm
            if hc[tm] == p:
                nm -= 1
                _meld_tiles(r8, p, nm, hk[tm], ht[tm], hl[tm], h, 1, -1)
        rev = r8[O8_REVEALED + p]
        saved_nm = r8[O8_N_MELDS + p]
        lock = 0
        dd = -1
        for tm in range(s0, clock):
            if hs[tm] == p:
                h[ht[tm]] -= 1
                total = 0
                for x in range(34):
                    total += h[x]
                dd = ht[tm] if lock > 0 and total == 1 and h[ht[tm]] == 1 else -1
            elif ht[tm] >= 0 and not (open_claim and tm == clock - 1):
                t = ht[tm]
                for x in range(34):
                    r8[O8_HAND + 34 * p + x] = h[x]
                r8[O8_N_MELDS + p] = nm
                # (a 亮倒 seat revealed at its last discard: a pong before it means it was not revealed yet)
                r8[O8_REVEALED + p] = rev if tm > last_disc else 0
                if _complete_with(r8, cfg, tabs, p, t):
                    r8[O8_CLAIM_TILE] = t
                    r8[O8_CLAIM_FROM] = hs[tm]
                    r8[O8_CLAIM_KONG_POS] = hp[tm]
                    r8[O8_CLAIM_OPTS + p] = 0
                    r16[O16_CLAIM_VALUE + p] = 0
                    r16[O16_LOCK + p] = lock
                    r8[O8_DADIAOCHE + p] = dd
                    if _judge(E, b, t, hs[tm], False, 1 << p) and (r8[O8_CLAIM_OPTS + p] & 1) != 0:
                        v = max(r16[O16_CLAIM_VALUE + p], 1)
                        if v > lock:
                            lock = v
                    r8[O8_CLAIM_OPTS + p] = 0
                    r16[O16_CLAIM_VALUE + p] = 0
            if hc[tm] == p:
                _meld_tiles(r8, p, nm, hk[tm], ht[tm], hl[tm], h, -1, 1)
                nm += 1
        for x in range(34):
            r8[O8_HAND + 34 * p + x] = h[x]
        r8[O8_N_MELDS + p] = saved_nm
        r8[O8_REVEALED + p] = rev
        r16[O16_LOCK + p] = lock
        r8[O8_DADIAOCHE + p] = dd
    r8[O8_CLAIM_TILE] = save_tile
    r8[O8_CLAIM_FROM] = save_from
    r8[O8_CLAIM_KONG_POS] = save_kp
    r16[O16_FRONT] = save_front


@_jit
def _window(E, b, seat):
    """Re-open the claim / rob window of world ``b`` for the other seats (their answers cleared, their claims
    found as the engine finds them); False when the world contradicts what ``seat`` sees of the window."""
    b8, b16 = E[0], E[1]
    cfg, tabs, scr = E[7], E[8], E[9]
    r8 = b8[b]
    r16 = b16[b]
    n = cfg[K.C_N]
    t = r8[O8_CLAIM_TILE]
    frm = r8[O8_CLAIM_FROM]
    rob = r8[O8_PHASE] == ROB
    can = r16[O16_BACK] > r16[O16_FRONT]
    bits = 0
    for k in range(1, n):
        p = (frm + k) % n
        if p == seat:
            continue
        r8[O8_CLAIM_OPTS + p] = claim_bits(r8, cfg, tabs, scr, p, t, k == 1, not rob and can)
        r8[O8_CLAIM_REPLY + p] = -1
        r16[O16_CLAIM_VALUE + p] = 0
        if _complete_with(r8, cfg, tabs, p, t):
            bits |= 1 << p
    if bits:
        own_opts = r8[O8_CLAIM_OPTS + seat]
        own_val = r16[O16_CLAIM_VALUE + seat]
        ok = _judge(E, b, t, frm, rob, bits)
        r8[O8_CLAIM_OPTS + seat] = own_opts
        r16[O16_CLAIM_VALUE + seat] = own_val
        if not ok:
            return False
    # Where seat stands in the asking order, and which other seats may claim before / after it.
    own = r8[O8_CLAIM_OPTS + seat] if seat != frm else 0
    answered = own > 0 and r8[O8_CLAIM_REPLY + seat] >= 0
    if own > 0 and not answered and r8[O8_ACTOR] == seat:
        return True  # seat is asked now; the others are asked after it
    before = -1
    after = -1
    first = -1
    passed = False
    for k in range(1, n):
        p = (frm + k) % n
        if p == seat:
            passed = True
        elif r8[O8_CLAIM_OPTS + p] > 0:
            if first < 0:
                first = p
            if passed and after < 0:
                after = p
            if not passed and before < 0:
                before = p
    if own > 0 and answered:
        if after < 0:
            return False  # seat answered and the window is still open: someone after it may claim
        r8[O8_ACTOR] = first
    elif own > 0:
        if before < 0:
            return False  # seat may claim but waits: someone before it is being asked
        r8[O8_ACTOR] = before
    else:
        if first < 0:
            return False  # the window is open and seat may not claim: someone else may
        r8[O8_ACTOR] = first
    return True


def _sampler(fam: int):
    """The compiled sampler for the kernels' scorer set ``fam`` (as :func:`mjenv.engine.entry._entry`: numba types
    ``fam`` as its literal, so the world tuple ``E`` has the type of the engine's own and the same judges compile)."""

    @_jit
    def run(src8, src16, srcmoney, srcmask, srcpend, b, seat, seed, b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg,
            nworlds, max_tries, identity, unseen, pub, ntrip, nfree, dslot, cnt, pool, rng, hs, ht, hc, hk, hl, hp, ptr, chain, start, h, info):
        """Write ``nworlds`` worlds of source table ``b`` seen by ``seat`` into tables 0.. of the world buffers."""
        E = (b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam)
        s8 = src8[b]
        s16 = src16[b]
        n = cfg[K.C_N]
        W = cfg[K.C_WALL]
        if _public(s8, s16, cfg, seat, unseen, pub, ntrip, nfree, dslot) != 0:
            return ERR_SLOTS
        if _history(s8, s16, cfg, seat, hs, ht, hc, hk, hl, hp, ptr, chain, start) < 0:
            return ERR_HISTORY
        clock = np.int64(s16[O16_N_DISCARDS])
        ph = s8[O8_PHASE]
        front = np.int64(s16[O16_FRONT])
        back = np.int64(s16[O16_BACK])
        _, s0 = _splitmix(seed)
        for w in range(nworlds):
            st, _ = _splitmix(s0 ^ np.uint64(w))
            rng[0] = st
            ok = False
            for attempt in range(max_tries):
                r8 = b8[w]
                r16 = b16[w]
                for i in range(s8.shape[0]):
                    r8[i] = s8[i]
                for i in range(s16.shape[0]):
                    r16[i] = s16[i]
                for i in range(money.shape[1]):
                    money[w, i] = srcmoney[b, i]
                for i in range(pend.shape[1]):
                    pend[w, i] = 0
                pend[w, K.PEND_ROUND_WIND] = srcpend[b, K.PEND_ROUND_WIND]  # Yangzhou's judge reads it
                for i in range(W):
                    if i < front or i >= back:
                        r8[O8_WALL + i] = -1  # tiles that left the wall: not a world's business
                for x in range(34):
                    cnt[x] = unseen[x]
                # Face-down triplets first: kind x with weight c(c-1)(c-2) of its unseen count c.
                trips_ok = True
                for p in range(n):
                    if p == seat:
                        continue
                    for x in range(34):
                        r8[O8_HAND + 34 * p + x] = pub[p, x]
                        r8[O8_HIDDEN + 34 * p + x] = 0
                    r16[O16_LOCK + p] = 0
                    r8[O8_DADIAOCHE + p] = -1
                    r8[O8_CLAIM_REPLY + p] = -1
                    r8[O8_CLAIM_OPTS + p] = 0
                    r16[O16_CLAIM_VALUE + p] = 0
                    for _k in range(ntrip[p]):
                        tot = 0
                        for x in range(34):
                            c = cnt[x]
                            if c >= 3 and pub[p, x] == 0 and r8[O8_HIDDEN + 34 * p + x] == 0:
                                tot += c * (c - 1) * (c - 2)
                        if tot == 0:
                            trips_ok = False
                            break
                        r = _below(rng, tot)
                        for x in range(34):
                            c = cnt[x]
                            if c >= 3 and pub[p, x] == 0 and r8[O8_HIDDEN + 34 * p + x] == 0:
                                wgt = c * (c - 1) * (c - 2)
                                if r < wgt:
                                    r8[O8_HIDDEN + 34 * p + x] = 1
                                    r8[O8_HAND + 34 * p + x] += 3
                                    cnt[x] -= 3
                                    break
                                r -= wgt
                if not trips_ok:
                    continue
                # The other hidden tiles: one uniform shuffle dealt to hands, drawn tiles, then the live wall.
                m = 0
                for x in range(34):
                    for _k in range(cnt[x]):
                        pool[m] = x
                        m += 1
                for i in range(m - 1, 0, -1):
                    k = _below(rng, i + 1)
                    tmp = pool[i]
                    pool[i] = pool[k]
                    pool[k] = tmp
                j = 0
                for p in range(n):
                    if p == seat:
                        continue
                    for _k in range(nfree[p]):
                        r8[O8_HAND + 34 * p + pool[j]] += 1
                        j += 1
                    if dslot[p] != 0:
                        r8[O8_HAND + 34 * p + pool[j]] += 1
                        r8[O8_DRAWN] = pool[j]
                        j += 1
                for i in range(front, back):
                    r8[O8_WALL + i] = pool[j]
                    j += 1
                if identity:  # (tests) the source's own hidden tiles: the true table, its hidden state derived
                    for p in range(n):
                        if p != seat:
                            for x in range(34):
                                r8[O8_HAND + 34 * p + x] = s8[O8_HAND + 34 * p + x]
                                r8[O8_HIDDEN + 34 * p + x] = s8[O8_HIDDEN + 34 * p + x]
                    r8[O8_DRAWN] = s8[O8_DRAWN]
                    for i in range(front, back):
                        r8[O8_WALL + i] = s8[O8_WALL + i]
                if ph == PICK and r8[O8_CUR] != seat:
                    r8[O8_DRAWN] = -1  # what the konger drew before its kong is its own business (never read)
                good = True
                for p in range(n):
                    if p != seat and ntrip[p] > 0:
                        tb = 0
                        for x in range(34):
                            if r8[O8_HIDDEN + 34 * p + x] != 0:
                                tb |= np.int64(1) << x
                        if not _triplets_as_chosen(r8, cfg, tabs, scr, p, tb, dslot[p] != 0):
                            good = False
                            break
                if not good:
                    continue
                _derive_locks(E, w, seat, clock, hs, ht, hc, hk, hl, hp, start, h)
                if (ph == CLAIM or ph == ROB) and not _window(E, w, seat):
                    continue
                if r8[O8_ACTOR] == seat:
                    for a in range(mask.shape[1]):
                        mask[w, a] = srcmask[b, a]
                else:
                    count, last = _compute_mask(E, w)
                    if count < 2:
                        continue  # the engine never leaves another seat resting with a single choice
                ok = True
                break
            if not ok:
                info[0] = w
                return ERR_TRIES
            evn[w] = 0
        return nworlds

    return run


_SAMPLERS: dict = {}


def _sampler_for(cfg):
    fam = features(cfg)
    fn = _SAMPLERS.get(fam)
    if fn is None:
        fn = _SAMPLERS[fam] = _sampler(fam)
    return fn


def _check_int(name: str, value, low: int | None = None, high: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        rng = f"{low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be in {rng}, got {v}")
    return v


def _scratch(world) -> tuple:
    """The sampler's work arrays (kept on the world engine, so a search loop's ``out=`` call allocates nothing)."""
    pre = getattr(world, "_worlds_scratch", None)
    if pre is None:
        n = world.n
        pre = world._worlds_scratch = (
            np.zeros(34, np.int64),  # unseen
            np.zeros((n, 34), np.int64),  # pub
            np.zeros(n, np.int64),  # ntrip
            np.zeros(n, np.int64),  # nfree
            np.zeros(n, np.int64),  # dslot
            np.zeros(34, np.int64),  # cnt
            np.zeros(world.wall_size, np.int64),  # pool
            np.zeros(1, np.uint64),  # rng
            *(np.zeros(world.wall_size + 1, np.int64) for _ in range(6)),  # hs ht hc hk hl hp by discard time
            np.zeros(n, np.int64),  # ptr
            np.zeros(3 * S.MAX_RIVER + 6 * (world.wall_size + 1), np.int64),  # chain: runs, digits, pointers
            np.zeros(n, np.int64),  # start
            np.zeros(34, np.int64),  # h
            np.zeros(1, np.int64),  # info
        )
    return pre


def sample_worlds(engine, table, seat, n, *, seed, out=None, record_events: bool = False, max_tries: int = MAX_TRIES,
                  _identity: bool = False):
    """``engine``'s table ``table`` as seat ``seat`` knows it, in ``n`` sampled worlds (see the module docstring).

    ``_identity`` (for tests) deals the source's own hidden tiles instead of a shuffle, so that a world is the
    true table with its hidden state derived as in any world.

    Returns an :class:`~mjenv.engine.core.Engine` of ``n`` tables (``out`` refilled when given: an engine of the
    same variant and options with ``n`` tables; nothing is allocated for its tables) whose table ``j`` is world
    ``j``: same variant, rules, session, balances, match money and this hand's money, every public fact and
    ``seat``'s own tiles and private state as at the source, the hidden places dealt afresh.  Worlds are a
    function of what ``seat`` knows and ``seed`` only.  Raises ``ValueError`` naming the argument for bad input
    (a finished table included) and ``RuntimeError`` if no consistent world turns up in ``max_tries`` deals.
    """
    B = engine.batch_size
    table = _check_int("table", table, 0, B - 1)
    seat = _check_int("seat", seat, 0, engine.n - 1)
    n = _check_int("n", n, 1)
    seed = _check_int("seed", seed)
    max_tries = _check_int("max_tries", max_tries, 1)
    if not engine._ever_dealt or engine.state.phase[table] == DONE:
        raise ValueError(f"table {table} has no hand in play to sample worlds from")
    if out is None:
        world = type(engine)(rules=engine.rules, batch_size=n, record_events=bool(record_events))
    else:
        if not isinstance(out, type(engine)):
            raise ValueError(f"out must be an Engine, got {type(out).__name__}")
        if out is engine:
            raise ValueError("out must not be the source engine")
        if out.variant != engine.variant or out.opts != engine.opts:
            raise ValueError(f"out plays {out.variant} with other options; the worlds need {engine.variant}'s")
        if out.batch_size != n:
            raise ValueError(f"out has {out.batch_size} tables for n = {n} worlds")
        world = out
    if world._logs:  # logs the caller holds keep the hands they belong to (as a deal does)
        for log in world._logs.values():
            log._detach()
        world._logs.clear()
    world.balance[:] = engine.balance[table]  # (before the worlds are made: a busted discarder's tiles are not won)
    run = _sampler_for(world._cfg)
    pre = _scratch(world)
    status = run(engine._b8, engine._b16, engine._money, engine.mask, engine._pend, table, seat, np.uint64(seed & _MASK64),
                 *world._args[:4], world._pend, world._ev, world._evn, world._cfg, world._tabs, world._scratch,
                 world._fcfg, n, max_tries, bool(_identity), *pre)
    if status == ERR_SLOTS:
        raise RuntimeError(f"table {table}: the hidden places do not match the unseen tiles (corrupt state?)")
    if status == ERR_HISTORY:
        raise RuntimeError(f"table {table}: the rivers and melds fit no order of discards and claims (corrupt state?)")
    if status == ERR_TRIES:
        raise RuntimeError(
            f"table {table}, seat {seat}: no world consistent with what the seat sees in {max_tries} deals "
            f"(world {int(pre[-1][0])}); raise max_tries")
    # Python-side facts of the table: the session, balances, match money, the hand number.
    world.match_money[:] = engine.match_money[table]
    world.hand_number[:] = engine.hand_number[table]
    world.session_over[:] = engine.session_over[table]
    world._ses[:] = engine._ses[table]
    world._end_kind[:] = 0
    list.__setitem__(world.results, slice(None), [None] * n)
    if world._has_sessions:
        list.__setitem__(world.sessions, slice(None), [_UNREAD] * n)
    if world.record_events:
        for lst in world._py_events:
            lst.clear()
    world.n_decisions = 0
    world._ever_dealt = True
    kernel = world._entry()
    if world._step_kernel is None:
        example = (K.MODE_STEP, *world._args, world._all, world._all, world._waiting, world._info)
        world._step_kernel = _direct_entry(kernel, example)
    return world
