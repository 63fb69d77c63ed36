"""The options dataclasses, one per rule family (docs/rules/: the options sections of each family page): one frozen
field per option of the rule book, named exactly as the option, holding the rule book's value spelling, each
with its allowed values and a one-line meaning.  Read them through :mod:`mjenv.rules.options`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mjenv.rules.domains import (
    NonNegativeInteger,
    OptionalPositiveNumber,
    PositiveNumber,
    _choice,
    _OFF_ON,
    _ON_OFF,
    _opt,
    _ValidatedOptions,
)


# --------------------------------------------------------------------------------------------------
# Kawuxing (3p and 4p): docs/rules/kawuxing.md §3.13. Defaults = ruleset kwx004.
# --------------------------------------------------------------------------------------------------

_SIGUI_SCOPES = ("win_tile", "qingyise_any", "any")


@dataclass(frozen=True)
class KawuxingOptions(_ValidatedOptions):
    """Options of Kawuxing 3p and 4p (docs/rules/kawuxing.md §3.13); defaults are ruleset ``kwx004``.

    Every field is named as the option and holds the rule book's spelling; ``cap`` is ``8``, ``16`` or
    ``None`` (``none``), ``base`` a float > 0, ``huang_liang_penalty`` the int ``0`` or ``1``.
    """

    suits: str = _choice("ps", ("ps", "mp", "ms"), "the two suits in play (p dots, s bamboo, m characters); 3p only")
    base: float = _opt(1.0, PositiveNumber(), "base stake b: every amount is a multiple of it")
    fan_combine: str = _choice(
        "multiply", ("multiply", "add"), "multiply: V is the product of the fans; add: their sum, then ×2 for 亮倒"
    )
    cap: int | None = _choice(8, (8, 16, None), "largest share one payer pays for one win, in b; none: no cap")
    cap_shuanglong_16: str = _choice("on", _ON_OFF, "on: a 双龙七对 reading is capped at 16 instead of 8")
    kaikou: str = _choice(
        "hard",
        ("none", "soft", "hard"),
        "discard and rob wins need V >= 2: hard always, soft until the winner has made a kong, none never",
    )
    louhu_exception: str = _choice(
        "higher", ("off", "higher"), "higher: a player locked by a missed win may still win a strictly higher hand"
    )
    multi_win: str = _choice("on", _ON_OFF, "on: everybody who claims a discard or rob wins; off: the nearest only")
    baohu: str = _choice("on", _ON_OFF, "包胡: whoever feeds a revealed (亮倒) player's win pays for everybody")
    baohu_liang_exempt: str = _choice("on", _ON_OFF, "on: no 包胡 when the feeder has revealed too")
    baohu_amount: str = _choice(
        "all_shares", ("all_shares", "double"), "包胡 pays every other player's share (n−1) or exactly two shares"
    )
    baohu_cap: str = _choice(
        "per_share", ("per_share", "total"), "包胡 under a cap: each share capped, or the total capped once"
    )
    liang_vs_liang: str = _choice("off", _OFF_ON, "亮对亮: a revealed payer pays ×2 to a revealed winner")
    liang_loser_double: str = _choice(
        "off", _OFF_ON, "a revealed payer pays ×2 to a winner who has not revealed (not in the source texts)"
    )
    liang_hide_triplets: str = _choice(
        "on", _ON_OFF, "on: at 亮倒, concealed triplets that do not change the waits may stay face down"
    )
    liang_kong: str = _choice(
        "keep_ready",
        ("keep_ready", "same_waits", "none"),
        "kongs after 亮倒: if the hand stays ready, only if the waits stay the same, or none",
    )
    tingtou: str = _choice(
        "off", ("off", "on", "each"), "ready-hand settlement at a drawn hand: off, the first revealer only, each revealer"
    )
    huang_liang_penalty: int = _choice(
        1, (0, 1), "1: at a drawn hand the first revealed player pays each other player 1 b (tingtou off)"
    )
    gangshanggang: str = _choice(
        "chain",
        ("off", "self_consecutive", "chain", "per_hand"),
        "which kongs double the kong money of the one before (杠上杠): linked chain, own consecutive kongs, every "
        "kong of the hand, none",
    )
    gang_stack: str = _choice("off", _OFF_ON, "杠上累番: 杠上开花 / 杠上炮 worth 2^L for the L-th kong of a chain, not ×2")
    angang_timing: str = _choice(
        "deferrable", ("deferrable", "immediate"), "a concealed kong on any later own turn, or only when the 4th arrives"
    )
    ming_sigui_scope: str = _choice(
        "qingyise_any", _SIGUI_SCOPES, "明四归一 needs the winning tile, or any tile in a 清一色 hand, or any tile"
    )
    an_sigui_scope: str = _choice(
        "qingyise_any", _SIGUI_SCOPES, "暗四归一 needs the winning tile, or any tile in a 清一色 hand, or any tile"
    )
    an_sigui_split: str = _choice(
        "any", ("any", "triplet_seq"), "the four 暗四归一 tiles: any split, or one triplet plus one sequence tile"
    )
    sigui_count: str = _choice(
        "once", ("once", "each"), "四归一 fans count once, or once per qualifying kind"
    )
    longqidui: str = _choice(
        "any_four", ("any_four", "win_tile"), "龙七对 with any four-of-a-kind, or only when the winning tile is the fourth"
    )
    shuanglong: str = _choice("on", _ON_OFF, "on: 双龙七对 (two fours) is ×16; off: it scores as 龙七对")
    shouzhuayi: str = _choice(
        "melded_x4",
        ("melded_x4", "pph_single_x2"),
        "手抓一: four melds and a single wait ×4, or any all-triplets single wait ×2 on top of 碰碰胡",
    )
    haidi: str = _choice(
        "zimo", ("off", "zimo", "zimo_and_pao"), "海底捞 ×2: never, self-draw of the last tile, or also its discard"
    )
    qianggang: str = _choice("on", _ON_OFF, "on: an added kong may be robbed (抢杠胡)")
    seat_rotation: str = _choice(
        "off", ("off", "winner_sits_out"), "match level, 3p with a fourth person: the winner sits out one hand"
    )
    escape_penalty: str = _choice(
        "off", _OFF_ON, "match level: a player who leaves pays each other 2 × cap (32 b without a cap)"
    )


# --------------------------------------------------------------------------------------------------
# The 4-player 136-tile families: the options sections §6.9, §7.9, §8.11, §9 and §10.6 of docs/rules/.
# --------------------------------------------------------------------------------------------------

_BASE_MEANING = "base stake b"
_MULTI_WIN_MEANING = "several winners on one discard/rob (off: only the nearest claimant wins)"


@dataclass(frozen=True)
class GejiuOptions(_ValidatedOptions):
    """Options of Gejiu 个旧 (docs/rules/gejiu.md §6.9); defaults are ruleset ``gejiu002``."""

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    gejiu_combine: str = _choice("multiply", ("multiply", "add", "max"), "how pattern values combine")
    gejiu_qianggang: str = _choice(
        "add_kong", ("add_kong", "replacement_tile"), "what 抢杠 robs: the added tile or the chosen kong tile"
    )
    gejiu_multiwin_dealer: str = _choice(
        "next_of_nearest_winner",
        ("next_of_nearest_winner", "nearest_winner", "standard"),
        "next dealer after several winners on one discard",
    )
    multi_win: str = _choice("on", _ON_OFF, _MULTI_WIN_MEANING)


_BANKROLL_MEANING = "园子: each player's session bankroll in b; none = 紧淌, unlimited"


@dataclass(frozen=True)
class DiedaohuOptions(_ValidatedOptions):
    """Options of Diedaohu 跌倒胡 (docs/rules/diedaohu.md §7.9); defaults are ruleset ``diedaohu003``.

    ``bankroll`` is ``None`` (``none``, 紧淌) or a float > 0.
    """

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    bankroll: float | None = _opt(None, OptionalPositiveNumber(), _BANKROLL_MEANING)
    draw_dealer: str = _choice(
        "rotate", ("rotate", "stay"), "dealer after a drawn hand: the next player deals (city), or the dealer stays (countryside)"
    )
    rounds: int = _choice(4, (4, 8), "rounds (圈) per session (一操)")
    louhu: str = _choice("on", _ON_OFF, "missed-win lock until the next own draw, 大吊车 exception")
    multi_win: str = _choice("on", _ON_OFF, _MULTI_WIN_MEANING)
    fengqing_baopai: str = _choice("off", _OFF_ON, "the Yangzhou 风清 liability (包牌) applied to Diedaohu")


@dataclass(frozen=True)
class YangzhouOptions(_ValidatedOptions):
    """Options of Yangzhou-standard and Yangzhou-new (docs/rules/yangzhou.md §8.11, §9); defaults are ruleset ``yzstd003``.

    ``yz_style`` picks the column of big-fan values (§8.5); ruleset ``yznew003`` (the default of variant
    ``yangzhou_new``) sets ``yz_style = "new"`` and ``min_fan = 20``.
    """

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    yz_style: str = _choice("standard", ("standard", "new"), "which column of big-fan values counts: 标准 (standard) or 新扬州式 (new)")
    min_fan: int = _opt(15, NonNegativeInteger(), "a win needs at least one big fan and a total T of at least min_fan")
    chi: str = _choice("on", _ON_OFF, "the discarder's next player may chi")
    baopai: str = _choice("on", _ON_OFF, "包牌 liability for 清一色 by three chis and for 风清")
    louhu: str = _choice("on", _ON_OFF, "missed-win lock until the next own draw, 大吊车 exception (as Diedaohu)")
    draw_dealer: str = _choice("rotate", ("rotate", "stay"), "dealer after a drawn hand: the next player deals, or the dealer stays")
    rounds: int = _choice(4, (4, 8), "rounds (圈) per session (一操); sets the round wind")
    multi_win: str = _choice("on", _ON_OFF, _MULTI_WIN_MEANING)


@dataclass(frozen=True)
class LiuweiOptions(_ValidatedOptions):
    """Options of Liuwei 六圩式 (docs/rules/liuwei.md §10.6); defaults are ruleset ``liuwei003``.

    ``bankroll`` is ``None`` (``none``) or a float > 0 (default 50: the 50-scale tables of §10.3–§10.4);
    ``rounds`` exists only as ``8`` ("六圩式一操都是8圈，沒有4圈"). Liuwei has no ``multi_win``: one winner
    per discard always (§10.1).
    """

    base: float = _opt(1.0, PositiveNumber(), _BASE_MEANING)
    bankroll: float | None = _opt(
        50.0, OptionalPositiveNumber(), "园子: each player's session bankroll in b; amounts scale N/50; none: unlimited"
    )
    rounds: int = _choice(8, (8,), "rounds (圈) per session, always 8")
    louhu: str = _choice("on", _ON_OFF, "missed-win lock until the next own draw, 大吊车 exception (as Diedaohu)")


RuleOptions = KawuxingOptions | GejiuOptions | DiedaohuOptions | YangzhouOptions | LiuweiOptions
"""Any family's options value."""
