"""Compiled Gejiu win value (docs/rules/gejiu.md §6.6–§6.8) for the hand ends the kernel settles.

This module owns the numba twin of the value V of :func:`mjenv.rules.scoring.gejiu.score_win`: the best
reading (§1.6) over the standard readings (every pair, every split of the rest into triplets and
sequences, as :func:`mjenv.rules.hand.readings` enumerates them), seven pairs and 烂牌 / 七星 (both only
without melds), each with its shape and structure patterns (平胡, 大对子, 一条龙, 一般高, 小七对, 龙七对, 双龙七对,
烂牌, 七星), the whole hand's suit pattern (混一色, 清一色, 字一色), the situational 杠上花 / 抢杠, the
replacements (七星 > 烂牌, 字一色 > 大对子) and ``gejiu_combine``.  Every complete Gejiu shape is a legal win,
so V is all a settlement (V · b per payer) needs; when a hand ends, :func:`reading_fans` writes the patterns of
the winner's chosen reading (ids and values, :mod:`mjenv.engine.fanrow`) for the engine's result, whose pattern
names, reading text and settlement are made in Python from them.  tests/test_gjscore.py compares V and the
patterns with the scorer on random hands and every combination mode, tests/differential.py on whole games.

The compiled-code cache keys its callers by this file's source too (:mod:`mjenv.engine.jitcache`), so they
recompile after an edit.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine import fanrow, handk
from mjenv.engine.jit import njit
from mjenv.rules import hand as _hand
from mjenv.rules.scoring import gejiu as _G

__all__ = ["COMBINE", "N_GJ", "config", "hand_value", "best_reading", "reading_fans"]

COMBINE = {"multiply": 0, "add": 1, "max": 2}  # gejiu_combine as the int the kernels get

# pattern bits, one per §6.7 pattern, numbered by gejiu.PATTERN_ORDER
_ORDER = _G.PATTERN_ORDER
_PINGHU = _ORDER.index("pinghu")
_HUNYISE = _ORDER.index("hunyise")
_DADUIZI = _ORDER.index("daduizi")
_YITIAOLONG = _ORDER.index("yitiaolong")
_YIBANGAO = _ORDER.index("yibangao")
_LANPAI = _ORDER.index("lanpai")
_QINGYISE = _ORDER.index("qingyise")
_XIAOQIDUI = _ORDER.index("xiaoqidui")
_LONGQIDUI = _ORDER.index("longqidui")
_SHUANGLONG = _ORDER.index("shuanglong")
_ZIYISE = _ORDER.index("ziyise")
_QIXING = _ORDER.index("qixing")
_GANGSHANGHUA = _ORDER.index("gangshanghua")
_QIANGGANG = _ORDER.index("qianggang")
N_PATTERNS = len(_ORDER)
_SEVEN_PAIRS, _SPECIAL, _TIE = _hand.READING_SEVEN_PAIRS, _hand.READING_SPECIAL, _hand.READING_TIE
# The slice of the engine's configuration vector this module reads (:func:`config`): the combination mode,
# then each pattern's value (gejiu.PATTERNS, the one source) in PATTERN_ORDER.
GJ_MODE = 0
GJ_V = 1
N_GJ = GJ_V + N_PATTERNS
_CHI = 2  # meld kind code of mjenv.engine.state


def config(opts) -> np.ndarray:
    """int64 [N_GJ]: ``gejiu_combine`` of a ``GejiuOptions`` value and the pattern values of ``gejiu.PATTERNS`` as
    they stand (read when an Engine is made, so a changed table reaches the compiled code without a recompile)."""
    gc = np.zeros(N_GJ, np.int64)
    gc[GJ_MODE] = COMBINE[opts.gejiu_combine]
    for i, p in enumerate(_ORDER):
        gc[GJ_V + i] = _G.PATTERNS[p][2]
    return gc

_jit = njit(cache=True, _nrt=False)


@_jit
def _listed(bits):
    """The patterns ``gejiu._combine`` lists for the patterns ``bits`` that apply: the replacements (七星 > 烂牌,
    字一色 > 大对子), and 平胡 when nothing else applies."""
    if (bits >> _QIXING) & 1:
        bits &= ~(1 << _LANPAI)
    if (bits >> _ZIYISE) & 1:
        bits &= ~(1 << _DADUIZI)
    if bits == 0:
        bits = 1 << _PINGHU
    return bits


@_jit
def _combine(bits, gc):
    """``gejiu._combine``: the value of the patterns ``bits`` (already :func:`_listed`) under the mode of ``gc``."""
    mode = gc[GJ_MODE]
    if mode == 0:
        base = gc[GJ_V + _PINGHU]
        value = base
        for p in range(N_PATTERNS):
            if p != _PINGHU and (bits >> p) & 1:
                value = value * gc[GJ_V + p] // base
        return value
    value = 0
    for p in range(N_PATTERNS):
        if (bits >> p) & 1:
            v = gc[GJ_V + p]
            if mode == 1:
                value += v
            elif v > value:
                value = v
    return value


@_jit
def hand_value(full, work, mk, mt, nm, after_kong, rob, gc):
    """V of the best reading of the complete Gejiu hand ``full`` (concealed counts incl. the winning tile) with
    ``nm`` melds of kinds ``mk`` / lowest tiles ``mt``; 0 when it has no reading.  ``after_kong``: a self-draw
    on the kong tile after one's own kong (杠上花); ``rob``: won by robbing (抢杠).  ``work``: an int8 row of 34."""
    return best_reading(full, work, mk, mt, nm, after_kong, rob, gc)[0]


@_jit
def reading_fans(bits, gc, row):
    """Write the patterns ``bits`` of a reading (as :func:`best_reading` returns them) into the fan row ``row``
    (:mod:`mjenv.engine.fanrow`: ids of ``gejiu.PATTERN_ORDER`` and their values, in that order, as
    ``gejiu._combine`` lists them) with V (its cap is none: 0)."""
    k = 0
    for p in range(N_PATTERNS):
        if (bits >> p) & 1:
            k = fanrow.put(row, k, p, gc[GJ_V + p])
    row[fanrow.ROW_N] = k
    row[fanrow.ROW_VALUE] = _combine(bits, gc)
    row[fanrow.ROW_CAP] = 0


@_jit
def best_reading(full, work, mk, mt, nm, after_kong, rob, gc):
    """``(V, code, patterns)``: :func:`hand_value`, the code of the reading that gives it (``mjenv.rules.hand``'s
    reading codes: READING_TIE set when another reading has the same value, -1 when there is none), which the
    engine's results are built from, and that reading's patterns as bits of ``gejiu.PATTERN_ORDER`` (as
    ``gejiu._combine`` lists them, :func:`reading_fans`)."""
    common = 0
    if after_kong:
        common |= 1 << _GANGSHANGHUA
    elif rob:
        common |= 1 << _QIANGGANG
    suits = 0
    total = 0
    for t in range(34):
        if full[t] > 0:
            suits |= 1 << (t // 9)
        total += full[t]
    meld_seqs = np.int64(0)  # lowest tiles of melded chis
    meld_dup = False
    for j in range(nm):
        suits |= 1 << (mt[j] // 9)
        if mk[j] == _CHI:
            if (meld_seqs >> mt[j]) & 1:
                meld_dup = True
            meld_seqs |= np.int64(1) << mt[j]
    if suits == 8:
        common |= 1 << _ZIYISE
    elif suits == 1 or suits == 2 or suits == 4:
        common |= 1 << _QINGYISE
    elif suits == 9 or suits == 10 or suits == 12:
        common |= 1 << _HUNYISE
    best = 0
    best_bits = np.int64(0)
    code = -1
    tie = False
    # standard readings (handk.reading_split, the enumeration of mjenv.rules.hand.readings)
    for p in range(34):
        if full[p] < 2:
            continue
        m = handk.reading_choices(full, p)
        for choice in range(1 << m):
            ok, _, hand_seqs, _ = handk.reading_split(full, work, p, choice, m)
            if not ok:
                continue
            seqs = meld_seqs | hand_seqs
            # 一般高: a sequence twice, in the hand (``work`` counts them by first tile) or beside a melded chi
            dup = meld_dup or (meld_seqs & hand_seqs) != 0
            for i in range(27):
                if work[i] > 1:
                    dup = True
            bits = common
            if seqs == 0:
                bits |= 1 << _DADUIZI
            for s in range(3):
                if (seqs >> (9 * s)) & 1 and (seqs >> (9 * s + 3)) & 1 and (seqs >> (9 * s + 6)) & 1:
                    bits |= 1 << _YITIAOLONG
            if dup:
                bits |= 1 << _YIBANGAO
            bits = _listed(bits)
            v = _combine(bits, gc)
            if v > best:
                best = v
                best_bits = bits
                code = p << 5 | choice
                tie = False
            elif v == best:
                tie = True
    if nm == 0 and total == 14:
        even = True
        fours = 0
        for t in range(34):
            if full[t] % 2:
                even = False
            if full[t] == 4:
                fours += 1
        if even:
            shape = _SHUANGLONG if fours >= 2 else (_LONGQIDUI if fours == 1 else _XIAOQIDUI)
            bits = _listed(common | (1 << shape))
            v = _combine(bits, gc)
            if v > best:
                best = v
                best_bits = bits
                code = _SEVEN_PAIRS << 5
                tie = False
            elif v == best:
                tie = True
        if handk.lanpai(full):
            bits = _listed(common | (1 << (_QIXING if handk.qixing(full) else _LANPAI)))
            v = _combine(bits, gc)
            if v > best:
                best = v
                best_bits = bits
                code = _SPECIAL << 5
                tie = False
            elif v == best:
                tie = True
    return best, (code | _TIE) if tie else code, best_bits


@njit(cache=True)
def fans_batch(fulls, mks, mts, nms, after_kongs, robs, gc, rows):
    """The fan row of each complete hand's best reading (:func:`reading_fans`; ``ROW_N`` 0 when another reading
    has the same value), for the tests."""
    work = np.zeros(34, np.int8)
    for i in range(fulls.shape[0]):
        _, code, bits = best_reading(fulls[i], work, mks[i], mts[i], nms[i], after_kongs[i], robs[i], gc)
        rows[i, fanrow.ROW_N] = 0
        if code >= 0 and code & _TIE == 0:
            reading_fans(bits, gc, rows[i])


@njit(cache=True)
def value_batch(fulls, mks, mts, nms, after_kongs, robs, gc, out):
    """:func:`hand_value` of each row under the configuration slice ``gc`` (:func:`config`; for the tests)."""
    work = np.zeros(34, np.int8)
    for i in range(fulls.shape[0]):
        out[i] = hand_value(fulls[i], work, mks[i], mts[i], nms[i], after_kongs[i], robs[i], gc)
