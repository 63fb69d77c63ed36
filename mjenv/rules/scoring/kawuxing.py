"""Kawuxing (卡五星) scoring and settlement: docs/rules/kawuxing.md §3.5 (kong money), §3.6 D2, §3.7–§3.11, §4.

This module owns, for Kawuxing 3p and 4p and every option of §3.13 that touches value or money:

* the fans of a winning hand (§3.7, F1–F5 and the exclusions), their combination and cap (§3.8), the
  choice of the best reading (§1.6) and the legality tests L1–L4 (§3.9) — :func:`score_win`;
* the payments of a win (§3.10: shares, payer factors, 包胡, several winners) — :func:`settle_win`;
* kong money with chain doubling (§3.5) — :func:`kong_money`;
* the drawn-hand settlement with the ready value T(X) (§3.11) — :func:`ready_value`, :func:`settle_draw`;
* which concealed triplets a player may keep face down when declaring 亮倒 (§3.6 D2) — :func:`hideable_triplets`.

Its compiled twin is :mod:`mjenv.engine.kwscore` (the value and legality a claim window needs, and the hand
values the engine's kernels settle with); both read the fan values of :data:`FANS` (and :data:`SHOUZHUAYI_PPH`),
the twin through the engine's configuration vector (:func:`mjenv.engine.kwscore.config`).

Everything here is a pure function of tiles, melds, a :class:`WinContext` and a ``KawuxingOptions`` value;
the engine tracks the situation (kong chains, locks, who revealed) and passes it in.  Hand shapes come from
:mod:`mjenv.rules.hand`.  Readings of unclear rules are recorded in ``docs/rules-notes.md``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mjenv.rules.hand import Reading, reading_text, readings, wait_mask
from mjenv.rules.options import KawuxingOptions, tile_kinds
from mjenv.rules.scoring.common import (  # the shared result types are imported from here by older code too
    HOWS,
    Settlement,
    Transfer,
    WinScore,
    check_concealed_size,
    check_copies,
    check_melds,
    hand_counts,
    make_settlement,
    meld_counts,
    notation_context,
    owned_counts,
)
from mjenv.tiles import DRAGONS, N_KINDS, Hand, Meld, tile_name

__all__ = [
    "FANS",
    "FAN_ORDER",
    "SHOUZHUAYI_PPH",
    "fan_values",
    "WinContext",
    "WinScore",
    "Transfer",
    "Settlement",
    "make_settlement",
    "score_win",
    "score_reading",
    "score_hand",
    "payer_factor",
    "share",
    "settle_win",
    "kong_money",
    "ready_value",
    "settle_draw",
    "hideable_triplets",
]

# Fan id -> (Chinese name, English name, base value), in the order of the §3.7 table.  The one source of the
# values: this scorer reads them at each call, and the compiled twin (mjenv.engine.kwscore) gets them through
# the engine's configuration vector when an Engine is made (kwscore.config).
FANS: dict[str, tuple[str, str, int]] = {
    "pihu": ("屁胡", "plain win", 1),
    "pengpeng": ("碰碰胡", "all triplets", 2),
    "qingyise": ("清一色", "pure one suit", 4),
    "qidui": ("七对", "seven pairs", 4),
    "longqidui": ("龙七对", "seven pairs with a four", 8),
    "shuanglong": ("双龙七对", "seven pairs with two fours", 16),
    "dasanyuan": ("大三元", "big three dragons", 8),
    "xiaosanyuan": ("小三元", "small three dragons", 4),
    "kawuxing": ("卡五星", "stuck five star", 2),
    "ming_sigui": ("明四归一", "four-to-one with a pong", 2),
    "an_sigui": ("暗四归一", "concealed four-to-one", 4),
    "shouzhuayi": ("手抓一", "one tile in hand", 4),
    "liangdao": ("亮倒", "revealed hand", 2),
    "gangkai": ("杠上开花", "win on a kong replacement", 2),
    "gangpao": ("杠上炮", "win on the discard after a kong", 2),
    "qianggang": ("抢杠胡", "robbing a kong", 2),
    "haidi": ("海底捞", "last tile", 2),
}
FAN_ORDER: tuple[str, ...] = tuple(FANS)

SHOUZHUAYI_PPH = 2
"""The value of 手抓一 under ``shouzhuayi: pph_single_x2`` (on top of 碰碰胡); ``FANS["shouzhuayi"]`` is the
``melded_x4`` value."""


def fan_values() -> dict[str, int]:
    """Fan id -> value as the tables stand now (:data:`FANS`, and ``"shouzhuayi_pph"`` for :data:`SHOUZHUAYI_PPH`)."""
    values = {f: v for f, (_, _, v) in FANS.items()}
    values["shouzhuayi_pph"] = SHOUZHUAYI_PPH
    return values

_FIVES = (4, 13, 22)  # 5m 5p 5s


# --------------------------------------------------------------------------------------------------
# Data types
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WinContext:
    """The situation of a win that the tiles alone do not show (how it arrived, 亮倒, kong chain, last tile, lock)."""

    how: str
    """``"discard"``, ``"self-draw"`` or ``"rob"``."""
    revealed: bool = False
    """The winner declared 亮倒 before this win (fan 亮倒; 包胡 is decided by :func:`settle_win`)."""
    kong_position: int = 0
    """Self-draw: chain position L ≥ 1 of the kong whose replacement tile is the winning tile (杠上开花);
    discard: L of the kong after whose replacement the discarder made this discard (杠上炮); 0 = none."""
    last_tile: bool = False
    """Self-draw of the last live-wall tile, or a discard win on the discard of the player who drew it."""
    winner_has_konged: bool = False
    """The winner completed a kong earlier this hand (``kaikou: soft``)."""
    discarder_revealed: bool = False
    """The discarder / robbed konger has declared 亮倒 (its payer factor f_D enters L3 and L4)."""
    missed_win_lock: int | None = None
    """L4: the largest passed V_D M while the winner is locked, else ``None``."""

    def __post_init__(self) -> None:
        if self.how not in HOWS:
            raise ValueError(f"WinContext.how {self.how!r} is not one of {', '.join(HOWS)}")
        if self.kong_position < 0:
            raise ValueError(f"WinContext.kong_position must be >= 0, got {self.kong_position}")


# --------------------------------------------------------------------------------------------------
# Input normalisation
# --------------------------------------------------------------------------------------------------


def _variant_name(n_players: int) -> str:
    if n_players == 3:
        return "kawuxing3"
    if n_players == 4:
        return "kawuxing4"
    raise ValueError(f"Kawuxing is played by 3 or 4 players, not {n_players}")


@functools.lru_cache(maxsize=None)
def _kinds(n_players: int, suits: str) -> np.ndarray:
    """Tile-kind mask of the variant; only ``suits`` of the options matters, so the key stays tiny."""
    return tile_kinds(_variant_name(n_players), KawuxingOptions(suits=suits))


def _check_hand(counts: np.ndarray, melds: tuple[Meld, ...], extra: int | None, n_players: int, opts) -> None:
    """Raise ``ValueError`` for a hand that cannot occur: bad melds, too many copies, foreign tiles, wrong size."""
    check_melds(melds, no_chi="Kawuxing has no chi (§3.4); a [C ...] meld cannot occur")
    total = check_copies(counts, melds, extra)
    kinds = _kinds(n_players, opts.suits)
    foreign = np.flatnonzero((total > 0) & ~kinds)
    if foreign.size:
        raise ValueError(f"{tile_name(int(foreign[0]))} is not a tile of {_variant_name(n_players)}")


# --------------------------------------------------------------------------------------------------
# Fans of one reading (§3.7)
# --------------------------------------------------------------------------------------------------


def _scope_ok(scope: str, w: int, t: int, qingyise: bool) -> bool:
    """The ``*_sigui_scope`` test of F2/F3."""
    if scope == "any":
        return True
    if scope == "qingyise_any":
        return w == t or qingyise
    return w == t  # win_tile


def _power(value: int, times: int, opts) -> int:
    """Contribution of a fan counted ``times`` times (``sigui_count: each``) under ``fan_combine``."""
    return value**times if opts.fan_combine == "multiply" else value * times


def _reading_fans(
    r: Reading, full: np.ndarray, melds: tuple[Meld, ...], w: int, qingyise: bool, opts, V: dict[str, int]
) -> list[tuple[str, int]]:
    """Fans that depend on the reading (everything but the situational ones), in §3.7 order; ``V``: :func:`fan_values`."""
    fans: list[tuple[str, int]] = []
    if r.kind == "seven_pairs":
        fours = [t for t in range(N_KINDS) if full[t] == 4]
        if qingyise:
            fans.append(("qingyise", V["qingyise"]))
        if len(fours) >= 2 and opts.shuanglong == "on":
            fans.append(("shuanglong", V["shuanglong"]))
        elif fours and (opts.longqidui == "any_four" or w in fours):
            # shuanglong off: two fours are scored as 龙七对 (still subject to the longqidui scope)
            fans.append(("longqidui", V["longqidui"]))
        else:
            fans.append(("qidui", V["qidui"]))
        return fans

    trips = [t for kind, t in r.sets if kind == "trip"]
    seqs = [t for kind, t in r.sets if kind == "seq"]
    meld_trips = [m.tile for m in melds]  # Kawuxing melds are pongs or kongs (no chi)
    all_trips = set(trips) | set(meld_trips)

    pengpeng = not seqs
    shouzhuayi_value = 0
    if opts.shouzhuayi == "melded_x4":
        if len(melds) == 4:
            shouzhuayi_value = V["shouzhuayi"]
            pengpeng = False  # implied by 手抓一, not counted in addition (F4)
    elif pengpeng and r.pair == w:
        # pph_single_x2: an all-triplet hand whose winning tile pairs the single concealed tile; with only
        # triplets left in the reading, the pair of w's kind holds exactly the single tile and w
        shouzhuayi_value = V["shouzhuayi_pph"]

    if pengpeng:
        fans.append(("pengpeng", V["pengpeng"]))
    if qingyise:
        fans.append(("qingyise", V["qingyise"]))
    dragon_trips = sum(d in all_trips for d in DRAGONS)
    if dragon_trips == 3:
        fans.append(("dasanyuan", V["dasanyuan"]))
    elif dragon_trips == 2 and r.pair in DRAGONS and r.pair not in all_trips:
        fans.append(("xiaosanyuan", V["xiaosanyuan"]))
    if w in _FIVES and (w - 1) in seqs:
        fans.append(("kawuxing", V["kawuxing"]))

    ming = [
        m.tile for m in melds
        if m.kind == "P" and full[m.tile] >= 1 and _scope_ok(opts.ming_sigui_scope, w, m.tile, qingyise)
    ]
    if ming:
        fans.append(("ming_sigui", _power(V["ming_sigui"], len(ming) if opts.sigui_count == "each" else 1, opts)))

    an = [
        t for t in range(N_KINDS)
        if full[t] == 4
        and _scope_ok(opts.an_sigui_scope, w, t, qingyise)
        # triplet_seq: the four copies are one triplet plus one tile of a sequence; with four concealed
        # copies, a triplet of t leaves exactly one copy, which can only sit in a sequence
        and (opts.an_sigui_split == "any" or t in trips)
    ]
    if an:
        fans.append(("an_sigui", _power(V["an_sigui"], len(an) if opts.sigui_count == "each" else 1, opts)))

    if shouzhuayi_value:
        fans.append(("shouzhuayi", shouzhuayi_value))
    return fans


def _situational_fans(ctx: WinContext, opts, V: dict[str, int]) -> list[tuple[str, int]]:
    """Fans that apply to every reading alike (§1.6): 亮倒, 杠上开花, 杠上炮, 抢杠胡, 海底捞."""
    fans: list[tuple[str, int]] = []
    if ctx.revealed:
        fans.append(("liangdao", V["liangdao"]))
    if ctx.kong_position >= 1 and ctx.how in ("self-draw", "discard"):
        fan = "gangkai" if ctx.how == "self-draw" else "gangpao"
        # gang_stack: the L-th kong of a chain counts the fan L times (2^L with the table's ×2)
        value = V[fan] ** ctx.kong_position if opts.gang_stack == "on" else V[fan]
        fans.append((fan, value))
    if ctx.how == "rob":
        fans.append(("qianggang", V["qianggang"]))
    if ctx.last_tile and (
        (ctx.how == "self-draw" and opts.haidi in ("zimo", "zimo_and_pao"))
        or (ctx.how == "discard" and opts.haidi == "zimo_and_pao")
    ):
        fans.append(("haidi", V["haidi"]))
    return fans


def _combine(fans: list[tuple[str, int]], opts, V: dict[str, int]) -> tuple[dict[str, int], int]:
    """Fan dict (in §3.7 order) and hand value V under ``fan_combine`` (§3.8)."""
    if not fans:
        fans = [("pihu", V["pihu"])]
    if opts.fan_combine == "multiply":
        value = 1
        for _, v in fans:
            value *= v
    else:
        # added fans, with 亮倒 still multiplying the sum
        value = sum(v for f, v in fans if f != "liangdao") or V["pihu"]
        if any(f == "liangdao" for f, _ in fans):
            value *= V["liangdao"]
    d = dict(fans)
    return {f: d[f] for f in FAN_ORDER if f in d}, int(value)


def _reading_cap(fans: dict[str, int], opts) -> int | None:
    if opts.cap is None:
        return None
    if opts.cap == 8 and opts.cap_shuanglong_16 == "on" and "shuanglong" in fans:
        return 16
    return opts.cap


def _capped(value: int, cap: int | None) -> int:
    return value if cap is None else min(value, cap)


# --------------------------------------------------------------------------------------------------
# score_win
# --------------------------------------------------------------------------------------------------


def payer_factor(winner_revealed: bool, payer_revealed: bool, opts) -> int:
    """f_P of §3.10: 2 under ``liang_vs_liang`` (both revealed) or ``liang_loser_double`` (only the payer), else 1."""
    if payer_revealed and winner_revealed and opts.liang_vs_liang == "on":
        return 2
    if payer_revealed and not winner_revealed and opts.liang_loser_double == "on":
        return 2
    return 1


def score_win(concealed, melds, win_tile: int, ctx: WinContext, opts, n_players: int = 3) -> WinScore:
    """Score a possible win: best reading (§1.6), fans (§3.7), value and cap (§3.8), legality L1–L4 (§3.9).

    ``concealed`` is a 34-count vector or a sequence of ids, *excluding* the winning tile; ``melds`` are
    :class:`mjenv.tiles.Meld` values.  A hand that cannot win returns ``legal=False`` with the reason (value 0
    and no fans when it has no winning reading at all).  A hand that cannot exist (wrong tile count for its
    melds, five copies of a tile, a tile outside the variant, a chi) raises ``ValueError``.
    """
    counts = hand_counts(concealed)
    win_tile = int(win_tile)
    if not 0 <= win_tile < N_KINDS:
        raise ValueError(f"winning tile id {win_tile} out of range 0..33")
    tables = (tuple(FANS.values()), SHOUZHUAYI_PPH)
    r = _score_cached(counts.tobytes(), tuple(melds), win_tile, ctx, opts, int(n_players), tables)
    legal, reason, reading, text, fans, value, cap, value_d = r
    return WinScore(legal, reason, reading, text, dict(fans), value, cap, value_d)


@functools.lru_cache(maxsize=1 << 16)
def _score_cached(counts_bytes: bytes, melds: tuple[Meld, ...], w: int, ctx: WinContext, opts, n_players: int, values):
    """The work of :func:`score_win`, memoized on its (hashable) arguments, the fan values included (a changed
    table is never answered from the cache); returns a plain tuple."""
    counts = np.frombuffer(counts_bytes, dtype=np.int8)
    _check_hand(counts, melds, w, n_players, opts)
    check_concealed_size(counts, melds)
    full = counts.astype(np.int8).copy()
    full[w] += 1
    return _best(full, melds, w, ctx, opts, readings(full, seven_pairs=not melds))


def score_reading(concealed, melds, win_tile: int, ctx: WinContext, opts, reading: Reading) -> WinScore:
    """:func:`score_win` of a hand (``concealed``: its 34 counts without the winning tile) whose best reading is known to be ``reading`` (the engine's compiled scorer
    found it, :func:`mjenv.engine.kwscore.best_reading`, for a hand the engine made): that reading alone is valued,
    and the hand is not checked again."""
    full = np.array(concealed, dtype=np.int8)
    full[int(win_tile)] += 1
    legal, reason, reading, text, fans, value, cap, value_d = _best(full, tuple(melds), int(win_tile), ctx, opts, [reading])
    return WinScore(legal, reason, reading, text, dict(fans), value, cap, value_d)


def _best(full: np.ndarray, melds: tuple[Meld, ...], w: int, ctx: WinContext, opts, candidates) -> tuple:
    """The :func:`score_win` tuple of the complete hand ``full`` (concealed counts with the winning tile ``w``)
    over the readings ``candidates``: the best one (§1.6), its fans, value and cap, and L1–L4."""
    V = fan_values()
    all_tiles = full.astype(np.int64) + meld_counts(melds)
    suits_used = {t // 9 for t in np.flatnonzero(all_tiles)}
    qingyise = len(suits_used) == 1 and 3 not in suits_used

    situational = _situational_fans(ctx, opts, V)
    best = None
    for r in candidates:
        fans, value = _combine(_reading_fans(r, full, melds, w, qingyise, opts, V) + situational, opts, V)
        cap = _reading_cap(fans, opts)
        key = (_capped(value, cap), value)
        if best is None or key > best[0]:
            best = (key, r, fans, value, cap)

    if best is None:
        return (False, "no winning reading", None, "", (), 0, None, 0)
    _, reading, fans, value, cap = best
    text = reading_text(reading, " ".join(str(m) for m in melds))

    discard_type = ctx.how in ("discard", "rob")
    value_d = value * payer_factor(ctx.revealed, ctx.discarder_revealed, opts) if discard_type else value
    reason = _illegal_reason(ctx, opts, value_d, melds) if discard_type else None
    return (reason is None, reason, reading, text, tuple(fans.items()), value, cap, value_d)


def _illegal_reason(ctx: WinContext, opts, value_d: int, melds: tuple[Meld, ...]) -> str | None:
    """L3 and L4 (and ``qianggang: off``) for a discard-type win; ``None`` when the win is legal."""
    if ctx.how == "rob" and opts.qianggang == "off":
        return "qianggang off: an added kong cannot be robbed"
    if opts.kaikou != "none" and value_d < 2:
        # a kong meld in the hand is a kong the winner completed this hand, whatever the engine's flag says
        konged = ctx.winner_has_konged or any(m.is_kong for m in melds)
        if opts.kaikou == "hard" or not konged:
            tail = "" if opts.kaikou == "hard" else " and no kong made this hand"
            return f"kaikou {opts.kaikou}: value {value_d} < 2 on a {ctx.how}{tail}"
    if ctx.missed_win_lock is not None:
        if opts.louhu_exception == "off":
            return "missed-win lock: no discard-type win until the next own draw (louhu_exception off)"
        if value_d <= ctx.missed_win_lock:
            return f"missed-win lock: value {value_d} is not above the passed value {ctx.missed_win_lock}"
    return None


def score_hand(hand: Hand, ctx: WinContext | None, opts, n_players: int = 3) -> WinScore:
    """:func:`score_win` of a parsed notation hand; without ``ctx`` the win is taken as plain ``hand.win_how``."""
    ctx = notation_context(hand, ctx, WinContext)
    return score_win(hand.concealed_counts(), hand.melds, hand.win_tile, ctx, opts, n_players)


# --------------------------------------------------------------------------------------------------
# Settlement of a win (§3.10) and kong money (§3.5)
# --------------------------------------------------------------------------------------------------


def share(score: WinScore, f_p: int, opts) -> float:
    """S_P = min(V · f_P, cap) · b, without the min when the reading has no cap."""
    return float(_capped(score.value * f_p, score.cap)) * opts.base


def settle_win(
    n_players: int,
    winners: Sequence[tuple[int, WinScore]],
    how: str,
    discarder: int | None,
    revealed: Sequence[bool],
    opts,
) -> Settlement:
    """Payments of the win(s) of one event (§3.10); ``revealed`` holds each seat's 亮倒 flag.

    Self-draw: every other player pays its share.  Discard or rob: the discarder / konger pays one share,
    or k shares under 包胡.  Several winners on one discard are settled independently.
    """
    if how not in HOWS:
        raise ValueError(f"how {how!r} is not one of {', '.join(HOWS)}")
    if len(revealed) != n_players:
        raise ValueError(f"revealed has {len(revealed)} flags for {n_players} players")
    if how == "self-draw" and len(winners) != 1:
        raise ValueError("a self-draw has exactly one winner")
    if how != "self-draw" and (discarder is None or not 0 <= discarder < n_players):
        raise ValueError(f"a {how} win needs the discarder's seat, got {discarder!r}")
    transfers: list[Transfer] = []
    for w, score in winners:
        if not score.legal:
            raise ValueError(f"seat {w}'s win is not legal ({score.reason}); it cannot be settled")
        if how == "self-draw":
            for p in range(n_players):
                if p != w:
                    f_p = payer_factor(revealed[w], revealed[p], opts)
                    transfers.append(Transfer(p, w, share(score, f_p, opts), "selfdraw"))
            continue
        if w == discarder:
            raise ValueError(f"seat {w} cannot win on its own discard")
        f_d = payer_factor(revealed[w], revealed[discarder], opts)
        baohu = (
            opts.baohu == "on"
            and revealed[w]
            and not (opts.baohu_liang_exempt == "on" and revealed[discarder])
        )
        if baohu:
            k = n_players - 1 if opts.baohu_amount == "all_shares" else 2
            if opts.baohu_cap == "per_share":
                amount = k * share(score, f_d, opts)
            else:
                amount = float(_capped(k * score.value * f_d, score.cap)) * opts.base
            transfers.append(Transfer(discarder, w, amount, "baohu"))
        else:
            transfers.append(Transfer(discarder, w, share(score, f_d, opts), how))
    return make_settlement(n_players, transfers)


_KONG_MONEY = {"concealed": 2, "added": 1, "direct": 2}


def kong_money(n_players: int, kind: str, konger: int, discarder: int | None, position: int, opts) -> list[Transfer]:
    """Kong money of one completed kong (§3.5): concealed 2b from each other player, added 1b from each,
    direct 2b from the discarder; times 2^(position−1) for its chain position (1 with ``gangshanggang: off``).
    Never capped."""
    if kind not in _KONG_MONEY:
        raise ValueError(f"kong kind {kind!r} is not one of {', '.join(_KONG_MONEY)}")
    if position < 1:
        raise ValueError(f"kong chain position must be >= 1, got {position}")
    mult = 1 if opts.gangshanggang == "off" else 2 ** (position - 1)
    amount = float(_KONG_MONEY[kind] * mult) * opts.base
    reason = f"kong_{kind}"
    if kind == "direct":
        if discarder is None or discarder == konger or not 0 <= discarder < n_players:
            raise ValueError(f"a direct kong needs the discarder's seat (not the konger's), got {discarder!r}")
        return [Transfer(discarder, konger, amount, reason)]
    return [Transfer(p, konger, amount, reason) for p in range(n_players) if p != konger]


# --------------------------------------------------------------------------------------------------
# Drawn hand (§3.11) and 亮倒 face-down triplets (§3.6 D2)
# --------------------------------------------------------------------------------------------------


def ready_value(concealed, melds, opts, kinds) -> tuple[int, int | None] | None:
    """T(X) of §3.11 with the cap of the reading that gives it: the largest V over the waits, each wait scored
    as a plain discard win (no situational fans), uncapped; ``None`` when the hand is not ready.

    Legality (kaikou) plays no part: a ready 屁胡 hand has T = 1.
    """
    counts = hand_counts(concealed)
    melds = tuple(melds)
    kinds = np.asarray(kinds, dtype=bool)
    waits = np.flatnonzero(wait_mask(counts, seven_pairs=not melds, kinds=kinds, owned=owned_counts(counts, melds)))
    n_players = 4 if kinds[:27].all() else 3
    ctx = WinContext("discard")
    best = None
    for w in waits:
        s = score_win(counts, melds, int(w), ctx, opts, n_players)
        if s.reading is None:
            continue
        key = (s.value, float("inf") if s.cap is None else s.cap)
        if best is None or key > best[0]:
            best = (key, (s.value, s.cap))
    return None if best is None else best[1]


def settle_draw(
    n_players: int,
    reveal_order: Sequence[int],
    ready: Sequence[tuple[int, int | None] | None],
    opts,
) -> Settlement:
    """Payments of an exhaustive draw (§3.11; kong money already paid is untouched).

    ``reveal_order`` lists the revealed seats in the order they declared 亮倒; ``ready[seat]`` is that seat's
    :func:`ready_value` (``None`` = not ready).  ``tingtou: off`` applies ``huang_liang_penalty``; ``on`` settles
    the first revealed player against every non-revealed player, ``each`` every revealed player.
    """
    if len(ready) != n_players:
        raise ValueError(f"ready has {len(ready)} entries for {n_players} players")
    if len(set(reveal_order)) != len(reveal_order):
        raise ValueError(f"a seat appears twice in reveal_order {list(reveal_order)}")
    b = opts.base
    transfers: list[Transfer] = []
    if not reveal_order:
        return make_settlement(n_players, transfers)
    if opts.tingtou == "off":
        if opts.huang_liang_penalty == 1:
            first = reveal_order[0]
            transfers = [Transfer(first, p, 1.0 * b, "draw_penalty") for p in range(n_players) if p != first]
        return make_settlement(n_players, transfers)

    def amount(t: tuple[int, int | None]) -> float:
        value, cap = t
        return float(_capped(2 * value, cap)) * b

    payers = reveal_order[:1] if opts.tingtou == "on" else reveal_order
    revealed = set(reveal_order)
    for r in payers:
        for x in range(n_players):
            if x in revealed:
                continue  # revealed players neither pay nor receive among themselves
            if ready[x] is not None:
                transfers.append(Transfer(r, x, amount(ready[x]), "tingtou"))
            elif ready[r] is not None:
                transfers.append(Transfer(x, r, amount(ready[r]), "tingtou"))
    return make_settlement(n_players, transfers)


def hideable_triplets(concealed, opts, kinds, melds: Sequence[Meld] = ()) -> tuple[int, ...]:
    """§3.6 D2: the largest set S of concealed triplets that may stay face down at 亮倒, as sorted tile ids.

    ``concealed`` is the hand after the 亮倒 discard (13 − 3m tiles).  S qualifies iff W(H − S) = W(H) with
    each triplet of S counted as a completed set; own copies (S and ``melds`` included) still limit the
    waits.  Among equally large sets the one with the lowest tile ids is returned; ``()`` when
    ``liang_hide_triplets`` is off or the hand is not ready.
    """
    if opts.liang_hide_triplets == "off":
        return ()
    counts = hand_counts(concealed)
    if int(counts.sum()) % 3 != 1:
        raise ValueError(f"a hand after its discard holds 13 - 3m tiles, got {int(counts.sum())}")
    melds = tuple(melds)
    kinds = np.asarray(kinds, dtype=bool)
    owned = owned_counts(counts, melds)
    # seven pairs needs no melds, i.e. 13 concealed tiles (decided by the count, so a caller that leaves out
    # ``melds`` only loses the own-copy limit of melded tiles)
    waits = wait_mask(counts, seven_pairs=int(counts.sum()) == 13, kinds=kinds, owned=owned)
    if not waits.any():
        return ()
    triplets = [t for t in range(N_KINDS) if counts[t] == 3]
    for size in range(len(triplets), 0, -1):
        for s in itertools.combinations(triplets, size):
            rest = counts.copy()
            rest[list(s)] -= 3
            # the set-aside triplets are completed sets, so seven pairs is no longer a possible shape
            if np.array_equal(wait_mask(rest, seven_pairs=False, kinds=kinds, owned=owned), waits):
                return s
    return ()
