"""Rule families as the rules layer knows them: each family's particulars that need no engine.

A :class:`RuleFamily` subclass per family holds its id (:attr:`RuleFamily.name`, ``VariantSpec.family``), its
variants (read from :mod:`mjenv.rules.variants`), rule page, scorer module and fan table (the CLI, the viewer and
the generated rule reference read them), the rule facts the other layers ask about (seven pairs, 亮倒, chi,
face-up kong tiles, value locks, whether kongs pay), how ``mjenv score`` scores one hand in a situation and
writes the result (:meth:`RuleFamily.score_situation`, :attr:`RuleFamily.situation`), the rows of its generated
value tables and its kong money at default options.  :data:`RULE_FAMILIES` lists them by name.

The engine's adapters (:mod:`mjenv.engine.family`) subclass these classes and add what the game core needs:
scoring a table's win, settlements, sessions and the compiled core's configuration.  Pure rules: no engine.
"""

from __future__ import annotations

from mjenv.rules.scoring import diedaohu as D
from mjenv.rules.scoring import gejiu as G
from mjenv.rules.scoring import kawuxing as K
from mjenv.rules.scoring import liuwei as L
from mjenv.rules.scoring import yangzhou as Y
from mjenv.rules.scoring.common import json_number
from mjenv.rules.variants import VariantSpec, variants_of

__all__ = ["RuleFamily", "KawuxingRules", "GejiuRules", "DiedaohuRules", "YangzhouRules", "LiuweiRules",
           "RULE_FAMILIES", "rule_family"]


def _plain_json(score, amount: float) -> dict:
    """The seven ``mjenv score --json`` fields of a score without a ``to_json`` (Kawuxing, Gejiu)."""
    return {
        "legal": score.legal,
        "reason": score.reason,
        "reading": score.reading_text,
        "fans": score.fans,
        "value": score.value,
        "cap": score.cap,
        "share": json_number(amount),
    }


def _louhu_lock(sit, hand) -> D.LouhuLock:
    """The winner's missed-win state from ``louhu`` / ``dadiaoche`` (大吊车: the exception is the winning tile)."""
    if sit.dadiaoche:
        return D.LouhuLock(True, hand.win_tile)
    return D.LouhuLock(sit.louhu)


class RuleFamily:
    """Rule particulars shared by every family; subclasses override what their rule book section changes."""

    name = ""  # the family id: ``VariantSpec.family`` and ``meta.family`` of its rules files
    variants: tuple[VariantSpec, ...] = ()
    """The variants of this family (from :data:`mjenv.rules.variants.VARIANTS`; each class lists its own, a
    subclass does not inherit them)."""
    page = ""  # its rule page in docs/rules/
    scorer = None  # its pure scoring module (mjenv.rules.scoring.<name>)
    fan_factors = False  # fan values are factors (shown ×v): they multiply under the default combination

    seven_pairs = False  # seven pairs is a winning shape (checked on 14 concealed tiles)
    liang = False  # 亮倒 declarations exist (Kawuxing)
    chi = False  # the discarder's next player may chi

    kong_tiles = 0  # face-up kong tiles the konger chooses from (Gejiu: 2); 0 = replacements from the wall's back
    value_lock = False  # missed-win lock keeps a value M (Kawuxing) instead of a plain flag
    self_draw_minimum = False  # a self-draw must also reach a minimum value (Yangzhou), not just a winning shape
    pays_kong_money = False  # kong_money can return transfers (the compiled core then asks for them)

    @classmethod
    def fans(cls) -> dict:
        """Fan (pattern, hand class) id -> (Chinese name, English name, value...): the scorer's table."""
        return cls.scorer.FANS

    @classmethod
    def fan_table(cls) -> tuple[list[str], list[list[str]]]:
        """Header and rows of the family's value table for its rule page (values straight from the scorer)."""
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in cls.fans().items()]
        return ["id", "fan", "English", "value"], rows

    @classmethod
    def extra_tables(cls) -> dict[str, tuple[list[str], list[list[str]]]]:
        """Further value tables of the rule page, by name (generated block ``"<name> <family>"``): header and rows."""
        return {}

    situation: tuple[str, ...] = ()
    """The facts of a win beyond the hand that :meth:`score_situation` reads (the ``mjenv score`` flags that apply)."""

    @classmethod
    def score_situation(cls, hand, sit, opts, variant: str):
        """Score the parsed notation hand ``hand`` (:class:`mjenv.tiles.Hand`) in situation ``sit``: an object with
        an attribute per name of :attr:`situation` (``kong_position`` for ``after_kong``), e.g. the ``mjenv score``
        arguments; ``ValueError`` for a fact the family cannot take."""
        raise NotImplementedError(f"family {cls.name!r} has no scorer for one hand")

    @classmethod
    def score_json(cls, score, opts) -> dict:
        """The ``mjenv score --json`` object of a score (``legal``, ``reason``, ``reading``, ``fans``, ``value``,
        ``cap``, ``share`` and the family's own fields)."""
        return score.to_json()

    @classmethod
    def value_note(cls, score, opts) -> str:
        """What follows V on the text ``value`` line of ``mjenv score``."""
        return ""

    @classmethod
    def share_note(cls, out: dict, opts, how: str) -> str:
        """The text ``share`` line of ``mjenv score`` from its JSON object ``out``."""
        return f"{out['share']} per payer"

    @classmethod
    def default_kong_money(cls, kind: str, opts) -> list:
        """The transfers of one kong of ``kind`` by seat 0 (seat 1 discarding a direct kong) under ``opts``; only for
        families whose kongs pay (:attr:`pays_kong_money`)."""
        raise NotImplementedError(f"family {cls.name!r} has no kong money")


class KawuxingRules(RuleFamily):
    """Kawuxing 3p/4p and its rulesets (docs/rules/kawuxing.md §3–§5)."""

    name = "kawuxing"
    variants = variants_of("kawuxing")
    page = "kawuxing.md"
    scorer = K
    fan_factors = True

    seven_pairs = True
    liang = True
    value_lock = True
    pays_kong_money = True

    @classmethod
    def fan_table(cls):
        """Fans are factors (×v) under the default ``fan_combine``."""
        rows = [[f"`{k}`", zh, en, f"×{v}"] for k, (zh, en, v) in K.FANS.items()]
        return ["id", "fan", "English", "value"], rows

    @classmethod
    def default_kong_money(cls, kind, opts):
        return K.kong_money(3, kind, 0, 1 if kind == "direct" else None, 1, opts)

    situation = ("liangdao", "after_kong", "last_tile", "konged", "discarder_liangdao", "lock")

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        from mjenv.rules.options import n_players

        ctx = K.WinContext(
            how=hand.win_how,
            revealed=sit.liangdao,
            kong_position=sit.kong_position,
            last_tile=sit.last_tile,
            winner_has_konged=sit.konged,
            discarder_revealed=sit.discarder_liangdao,
            missed_win_lock=sit.lock,
        )
        return K.score_hand(hand, ctx, opts, n_players(variant))

    @classmethod
    def score_json(cls, score, opts):
        return _plain_json(score, K.share(score, 1, opts))

    @classmethod
    def value_note(cls, score, opts):
        return f"({opts.fan_combine})"

    @classmethod
    def share_note(cls, out, opts, how):
        return f"{out['share']} per payer before payer factors (min(V, cap) × b, b = {json_number(opts.base)})"


class GejiuRules(RuleFamily):
    """Gejiu (docs/rules/gejiu.md §6): chi, seven pairs and 烂牌, face-up kong tiles, no kong money, no lock."""

    name = "gejiu"
    variants = variants_of("gejiu")
    page = "gejiu.md"
    scorer = G

    seven_pairs = True
    chi = True
    kong_tiles = 2

    @classmethod
    def fans(cls):
        return G.PATTERNS

    @classmethod
    def fan_table(cls):
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in G.PATTERNS.items()]
        return ["id", "pattern", "English", "value"], rows

    situation = ("after_kong",)

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        if sit.kong_position > 1:
            raise ValueError(f"--after-kong takes no chain position in {variant} (杠上花 is one pattern)")
        if sit.kong_position and hand.win_how != "self-draw":
            raise ValueError(f"--after-kong applies to a self-draw in {variant} (杠上花; there is no 杠上炮)")
        return G.score_hand(hand, G.GejiuContext(hand.win_how, after_kong=bool(sit.kong_position)), opts)

    @classmethod
    def score_json(cls, score, opts):
        return _plain_json(score, G.share(score, opts))

    @classmethod
    def value_note(cls, score, opts):
        return f"({opts.gejiu_combine}; 平胡 = {G.PATTERNS['pinghu'][2]} is the base)"

    @classmethod
    def share_note(cls, out, opts, how):
        return f"{out['share']} per payer (V × b, b = {json_number(opts.base)}; no cap)"


class DiedaohuRules(RuleFamily):
    """Diedaohu (docs/rules/diedaohu.md §7): hand classes, 米钱 kong money, 漏胡 with 大吊车, 园子 bankroll, sessions.

    Yangzhou and Liuwei share its missed-win rule, sessions and (Liuwei) bankroll.
    """

    name = "diedaohu"
    variants = variants_of("diedaohu")
    page = "diedaohu.md"
    scorer = D

    pays_kong_money = True

    @classmethod
    def fan_table(cls):
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in D.CLASSES.items()]
        return ["id", "hand class", "English", "value V (紧淌)"], rows

    @classmethod
    def default_kong_money(cls, kind, opts):
        return cls.scorer.kong_money(kind, 0, 1 if kind == "direct" else None, opts)

    situation = ("louhu", "dadiaoche", "discarder_busted")

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        """One hand class, the missed-win lock and a busted discarder (Diedaohu and Liuwei)."""
        ctx = D.DiedaohuContext(hand.win_how, lock=_louhu_lock(sit, hand), discarder_busted=sit.discarder_busted)
        return cls.scorer.score_hand(hand, ctx, opts)

    @classmethod
    def value_note(cls, score, opts):
        return "(V of the hand class, §7.4)"

    @classmethod
    def share_note(cls, out, opts, how):
        if out["whole_balance"]:
            return "the payer's whole balance (风清 under 园子)"
        return f"{out['share']} per payer (V × b, b = {json_number(opts.base)})"


class YangzhouRules(DiedaohuRules):
    """Yangzhou standard and new (docs/rules/yangzhou.md §8–§9): chi, seat and round winds, fan minimum, 1:2, 包牌; no kong money."""

    name = "yangzhou"
    variants = variants_of("yangzhou")
    page = "yangzhou.md"
    scorer = Y

    self_draw_minimum = True
    pays_kong_money = False

    @property
    def chi(self) -> bool:  # type: ignore[override]
        return self.opts.chi == "on"

    @classmethod
    def fan_table(cls):
        """The big fans with both value columns and what each composite combines (the small fans: their own block)."""
        made_of = {c: f"{Y.BIG_FANS[a][0]} + {Y.BIG_FANS[b][0]}" for (a, b), c in Y.COMPOSITES.items()}
        rows = [[f"`{k}`", zh, en, made_of.get(k, ""), str(s), str(n)] for k, (zh, en, (s, n)) in Y.BIG_FANS.items()]
        return ["id", "big fan", "English", "combines", "standard", "new"], rows

    situation = ("louhu", "dadiaoche", "seat_wind", "round_wind")

    @classmethod
    def score_situation(cls, hand, sit, opts, variant):
        """``seat_wind`` / ``round_wind``: wind tile ids (East when ``None``)."""
        east = Y.round_wind(0)
        ctx = Y.YangzhouContext(
            hand.win_how,
            seat_wind=east if sit.seat_wind is None else sit.seat_wind,
            round_wind=east if sit.round_wind is None else sit.round_wind,
            lock=_louhu_lock(sit, hand),
        )
        return Y.score_hand(hand, ctx, opts)

    @classmethod
    def value_note(cls, score, opts):
        return (f"(T = B {score.big_fan_value} + small fans {score.total - score.big_fan_value}; "
                f"{opts.yz_style} values, min_fan {opts.min_fan})")

    @classmethod
    def share_note(cls, out, opts, how):
        b = json_number(opts.base)
        if how == "self-draw":
            return f"{out['share']} from each of the three others (T × b, b = {b})"
        return f"{out['share']} from the discarder (2 × T × b, b = {b}; the others pay nothing)"

    @classmethod
    def extra_tables(cls):
        """The small fans (小番) with their fan counts."""
        rows = [[f"`{k}`", zh, en, str(v)] for k, (zh, en, v) in Y.SMALL_FANS.items()]
        return {"small fans": (["id", "small fan", "English", "fans"], rows)}


class LiuweiRules(DiedaohuRules):
    """Liuwei (docs/rules/liuwei.md §10): one winner per discard, 陪冲 payments, kong money, 园子 50, 8 rounds."""

    name = "liuwei"
    variants = variants_of("liuwei")
    page = "liuwei.md"
    scorer = L

    @classmethod
    def value_note(cls, score, opts):
        return "(Diedaohu V of the hand class, §7.4; money from the §10.4 table)"

    @classmethod
    def share_note(cls, out, opts, how):
        paid = "the whole balance" if out["whole_balance"] else out["share"]
        b = json_number(opts.base)
        n = json_number(opts.bankroll)
        scale = f"§10.4 table × b, b = {b}" if n is None else f"§10.4 table × N/50 × b, N = {n}, b = {b}"
        if how == "self-draw":
            return f"{paid} from each of the three others ({scale})"
        return f"{paid} from the discarder (出冲), {out['peichong']} from each other player (陪冲) ({scale})"

    @classmethod
    def fan_table(cls):
        """The payments of each hand class (§10.4)."""
        rows = []
        for k, (zh, en, _v) in L.CLASSES.items():
            cells = [str(m) for m in L.PAYMENTS[k]]
            if k == "fengqing":  # under 园子 the self-draw and the discarder pay their whole balance (§10.4)
                cells[:2] = [f"whole balance ({c} without a bankroll)" for c in cells[:2]]
            rows.append([f"`{k}`", zh, en, *cells])
        header = ["id", "hand class", "English", "self-draw: each other pays", "discard: discarder pays",
                  "discard: each other pays (陪冲)"]
        return header, rows


RULE_FAMILIES: dict[str, type[RuleFamily]] = {
    cls.name: cls for cls in (KawuxingRules, GejiuRules, DiedaohuRules, YangzhouRules, LiuweiRules)
}
"""Family id -> its rules class: every per-family rule particular is read from here."""


def rule_family(family: str) -> type[RuleFamily]:
    """The rules class of rule family ``family`` (a ``VariantSpec.family``); ``ValueError`` naming the known ones."""
    try:
        return RULE_FAMILIES[family]
    except KeyError:
        raise ValueError(f"unknown rule family {family!r}; known: {', '.join(RULE_FAMILIES)}") from None
