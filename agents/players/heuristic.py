"""The rule-based player of every variant: shanten and live-tile counts for discards, hand plans per family,
liability-aware defence.

This module owns :class:`HeuristicAgent`.  It reads its own hand, melds and every visible tile from the
observation blocks (:class:`agents.players.base.ObsView`), then decides batch-wise, phase by phase:

* **win** whenever the mask offers it.  The mask already applies the minimum value (Kawuxing ``kaikou``,
  Yangzhou's 15/20 fans) and the missed-win lock (docs/rules/kawuxing.md §3.9 L3/L4, Diedaohu/Yangzhou/Liuwei
  §7.6); passing a legal win would set the lock, so taking it is right, and the player never locks itself;
* **discard** the tile that leaves the lowest shanten under the row's **plan** (below), then the most live
  improving tiles (ukeire); in Kawuxing, once ready, the waits are weighted by the hand value each would score
  (卡五星, 清一色, 七对 ... via the scoring library), so a 卡五星 wait beats a plain one of equal count;
  ties go to the least connected tile, then to the most visible one;
* **plans** (:mod:`agents.players.plans`), chosen afresh at every decision: the plain hand (standard shape, seven pairs
  where it wins, and in Gejiu the 烂牌 / 七星 shape, docs/rules/gejiu.md §6.6, whichever is shortest — 烂牌 counts
  its own improving draws), or a **flush** in one suit (that suit plus honors: 混一色 or 清一色) when its shanten,
  less a per-family credit, is lower.  The credit is what the flush classes are worth: Yangzhou 3 steps (a
  plain hand rarely reaches the 15/20-fan minimum, docs/rules/yangzhou.md §8.7, while 混一色 is 15/20 alone),
  Liuwei 1 (混一色 pays 3× a 屁胡 on a discard, §10.4), Diedaohu and Gejiu 1 (2×).  Under a flush plan the
  off-suit tiles go first.  The third kind is **all triplets** (对对胡 / 碰碰胡 / 大对子: triplets or kongs and a
  pair, :func:`agents.players.plans.triplets_shanten`; any chi meld rules it out), credited ``triplets_bonus`` steps:
  by default Yangzhou 3 (对对胡 is 15/20 fans alone) and Liuwei 1 (对对胡 pays 10/10/5 against a 屁胡's 6/4/2),
  none elsewhere, where duplicate tournaments found no gain (docs/experiments/heuristic.md).  Under it pairs and triplets
  stay, the singles go (least live first), only kinds held once or twice count as improving draws, and a pong
  of a pair tile lowers its shanten, so the player pongs what the plain hand would pass;
* **never feed a revealed player**: the waits of every opponent who declared 亮倒 are computed from its
  face-up tiles; feeding one costs 包胡 (all shares, docs/rules/kawuxing.md §3.10), so those tiles are discarded only
  when nothing else is legal.  Likewise **包牌** (Yangzhou ``baopai``, Diedaohu ``fengqing_baopai``,
  docs/rules/yangzhou.md §8.9): no tile of the suit in which the next player shows exactly two chis and
  nothing else (the third chi would make its 清一色 ours to pay), no honor while an opponent shows three honor
  sets and nothing else (风清; also in Liuwei, where a 风清 on a discard takes the discarder's whole balance while
  the 陪冲 players pay 16, docs/rules/liuwei.md §10.4);
* **deal-in exposure** (Diedaohu, Liuwei; :meth:`HeuristicAgent.exposure`): an opponent showing two or more
  melds all in one suit (flush) or all honors (风清) makes the tiles it can use cost, per tile, the chance that
  it is ready and waits there times what the discarder pays *beyond what it would pay anyway*: the class amount
  in Diedaohu (only the discarder pays), the discarder's amount less the 陪冲 amount in Liuwei (everyone pays on a
  discard win, so dealing in a 屁胡 costs only 2 more, a 混一色 6).  In Diedaohu that cost is weighed against
  ukeire among the discards of equal shanten (``exposure_weight``: 3 live tiles per b); it never breaks the hand
  for safety, since in the Kawuxing measurements (docs/experiments/heuristic.md) folding and even trading ukeire for safety
  lost.  In Liuwei the weight is 0: the tie-break lost 0.02–0.04 per hand there (a deal-in under 陪冲 costs little
  more than the self-draw it would prevent), so the Liuwei player computes its exposure but plays for speed;
* **园子 balances** (Diedaohu ``bankroll``, Liuwei): the player reads every balance from the observation; what it
  can lose on a deal-in is capped by its own balance (a payer pays at most what it has, docs/rules/diedaohu.md
  §7.7), and once busted its discards cannot be won on, so it has no exposure and no liability at all;
* **亮倒** (Kawuxing) with a ready discard when at least ``liang_min_live`` copies of the waits are still live
  and the wall is not nearly empty (an exhaustive draw makes the first revealed player pay, §3.11); it also
  reveals with a single live copy when every wait is a 1× hand under ``kaikou: hard``, since the 亮倒 ×2
  is what makes those waits winnable on a discard at all;
* **kong** when the hand is not worse for it (kong money is paid at once and kept, §3.5; a revealed player
  always takes the kongs the mask allows); in Gejiu the **face-up kong tile** taken is the one that completes
  the hand (杠上花), else the one leaving the best plan shanten;
* **pong or chi** only when the best discard afterwards lowers the plan shanten (a meld of another suit
  breaks a flush plan and is then judged under what is left; any meld breaks 烂牌); pong before chi on a tie.

:meth:`HeuristicAgent.candidates` ranks a short list of legal actions, the player's choice first, then the
others by the compiled player's values (:meth:`agents.players.fastplay.FastPlayer.candidates`), from the same arrays
that make the choice.

It always takes a legal win (unless Gejiu's ``qixing_wait`` is set, below), including a small discard win that it could pass to fish for a self-draw (which
every family pays more for, up to 3× in Diedaohu): passing measured −0.75 ± 0.31 (Diedaohu), −6.1 ± 0.9
(Liuwei) and −2.6 ± 0.4 (Kawuxing) money per branch point (``python -m agents.training.rollouts --departures no_win``).

Gejiu's ``qixing_wait`` (None, off, by default; the Gejiu checkpoint's advisor, ``heuristic-advice-v3``, sets it):
pass another player's discard that would win a ready 烂牌 holding six distinct honors while the seventh is still
unseen and enough of the wall is left, waiting on for the 七星 (16× a plain hand; no missed-win lock in Gejiu, so
the 烂牌 stays winnable).  A Gejiu research knob, ``lanpai_bonus`` (0, off, by default): a 烂牌 holding at least ``lanpai_honors`` distinct honors
is read that many steps shorter, so the player keeps its honors towards 七星 (a 烂牌 of all seven honors, 16× a plain
hand) where the standard shape is as short; the Gejiu checkpoint's advisor (``heuristic-advice-v3``) sets it.

What the player does not model: all-triplet plans (对对胡) where the family's credit is 0 (Kawuxing, Gejiu,
Diedaohu) unless ``triplets_bonus`` sets one, and session strategy under 园子 beyond its own cap
(it does not aim at a weak opponent's balance or at ending the session).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.players.base import MELD_LETTER_BY_ROW, Decoded, ObsView, resolve_rules
from agents.players.plans import (SUIT_OF, flush_allowed, lanpai_count, lanpai_shanten, lanpai_ukeire, plan_shanten,
                                  triplets_shanten, triplets_ukeire)
from mjenv.encoding.shanten import shanten, shanten_seven_pairs, ukeire
from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.rules.families import rule_family
from mjenv.rules.hand import wait_mask
from mjenv.rules.options import get_variant
from mjenv.tiles import Meld

_BIG = 1e6  # weight of "feeds a revealed player" in the discard score
_SHANTEN_W = 1e4  # weight of one step of shanten: far above any ukeire or hand-value term
_OFF_PLAN_W = 100.0  # bonus for throwing a tile the chosen flush plan does not keep: above ukeire, below shanten
# The per-family parameters (flush and all-triplets credits, deal-in costs, exposure weight) are
# :data:`FAMILY_PARAMS`, read through :func:`family_params`.
#
# Flush credit: how many steps of shanten a flush (混一色 / 清一色) is worth; the plan is chosen when its shanten,
# minus this, is below the plain hand's.  Deal-in cost: what a discard that an opponent's visible big hand wins
# on costs the discarder, in b (before 园子 caps), as (discarder pays, each other payer pays); ``None`` is the
# discarder's whole balance (Liuwei's 风清).  Classes: ``hun`` a flush whose melds show honors (混一色), ``flush``
# one suit without honors shown yet (混一色 or 清一色: their mean), ``fengqing`` honors only (风清).
# A rough chance that an opponent showing k melds (pongs/kongs: these families have no chi) is ready, and how
# many tiles a ready hand waits on: together they turn a visible threat into a per-tile deal-in chance.
_READY_BY_MELDS = np.array([0.0, 0.0, 0.3, 0.6, 0.9])
_WAITS_PER_HAND = 2.0

FAMILY_PARAMS: dict[str, dict] = {
    # no flush credit by default (a flush is 清一色 alone, ×4); heuristic-flush plays a 清一色 plan worth 2 steps
    "kawuxing": {"triplets_bonus": 0, "flush_variant": {"flush_bonus": 2}},
    "gejiu": {"flush_bonus": 1, "triplets_bonus": 0},  # a flush is 2x a plain hand
    "diedaohu": {
        "flush_bonus": 1,  # a flush is 2x a plain hand
        "triplets_bonus": 0,
        "exposure_weight": 3.0,
        # the discarder alone pays V (docs/rules/diedaohu.md §7.4-7.5); ``flush``: 混一色 or 清一色, their mean
        "deal_in": {"hun": (2.0, 0.0), "flush": (3.0, 0.0), "fengqing": (16.0, 0.0)},
    },
    # 混一色 (15 / 20) and 对对胡 (15 / 20) are legal alone, a plain hand rarely reaches the minimum;
    # heuristic-flush credits both plans more (5 and 4): it beat these credits by +3.2 per hand over 800
    # duplicate walls (docs/experiments/four-player.md)
    "yangzhou": {"flush_bonus": 3, "triplets_bonus": 3, "flush_variant": {"flush_bonus": 5, "triplets_bonus": 4}},
    "liuwei": {
        "flush_bonus": 1,  # a 混一色 is paid 3x a 屁胡 on a discard
        "triplets_bonus": 1,
        "exposure_weight": 0.0,  # under 陪冲 a deal-in costs little more than the self-draw it would prevent
        # the §10.4 table at the 50-scale: everyone pays, the discarder more; 风清 takes the discarder's balance
        "deal_in": {"hun": (12.0, 6.0), "flush": (14.0, 7.0), "fengqing": (None, 16.0)},
    },
}
"""The rule-based player's parameters per rule family (measured in docs/experiments/heuristic.md): ``flush_bonus`` (shanten
steps a flush plan is worth; absent = no flush plan), ``triplets_bonus`` (likewise the all-triplets plan; 0 =
none), ``exposure_weight`` (ukeire per b of expected deal-in cost), ``deal_in`` (what dealing into a visible flush /
风清 costs: class -> (discarder pays, each other payer pays), ``None`` = the whole balance) and ``flush_variant``
(the keywords of the built-in ``heuristic-flush``).  Read through :func:`family_params`."""


def family_params(family: str) -> dict:
    """The player's parameters for rule family ``family`` (:data:`FAMILY_PARAMS`; an unknown family: ValueError):
    ``flush_bonus`` (None = no flush plan), ``triplets_bonus``, ``exposure_weight`` (ukeire per b of expected
    deal-in cost; docs/experiments/heuristic.md: in Liuwei the tie-break lost 0.02-0.04 per hand at weights 1 and 3, so 0),
    ``deal_in`` (None = not modelled) and ``flush_variant`` (the keywords of ``heuristic-flush``)."""
    p = FAMILY_PARAMS[rule_family(family).name]
    return {
        "flush_bonus": p.get("flush_bonus"),
        "triplets_bonus": int(p.get("triplets_bonus", 0)),
        "exposure_weight": float(p.get("exposure_weight", 0.0)),
        "deal_in": p.get("deal_in"),
        "flush_variant": dict(p.get("flush_variant", {})),
    }


def wait_ways(live: np.ndarray) -> np.ndarray:
    """float [B, 34]: a wall-reading estimate of how many ways an unrevealed opponent can wait on each tile.

    Pair and triplet waits need unseen copies of the tile itself (``live``, one way each); sequence waits on a
    suited tile need both other tiles of the sequence unseen (min of their unseen counts, for each of the up to
    three sequences through it).  Tiles no opponent can wait on (all copies seen and no sequence left) score 0."""
    live = np.asarray(live, dtype=np.float64)
    out = live.copy()
    t = np.arange(34)
    for a, b in ((-2, -1), (-1, 1), (1, 2)):
        ta, tb = t + a, t + b
        ok = (t < 27) & (ta >= 0) & (tb < 27) & (ta // 9 == t // 9) & (tb // 9 == t // 9)
        la = live[:, np.clip(ta, 0, 33)]
        lb = live[:, np.clip(tb, 0, 33)]
        out += np.where(ok[None, :], np.minimum(la, lb), 0.0)
    return out
# The all-triplets credit (对对胡 / 碰碰胡 / 大对子, chosen like a flush plan; 0 = no such plan) was picked by
# duplicate tournaments against the heuristic without it (docs/experiments/heuristic.md): Yangzhou 3 (对对胡 is 15/20 fans,
# legal alone, like 混一色), Liuwei 1 (对对胡 pays 10/10/5 against 6/4/2); Diedaohu, Gejiu and Kawuxing showed no
# gain at 1 or 2.
_CHI_ROW = MELD_LETTER_BY_ROW.index("C")


def _suited_neighbours(h: np.ndarray, dtype=np.float32) -> np.ndarray:
    """float [R, 34]: how connected each tile is to the rest of the hand (pairs, neighbours, two-apart); in
    ``float64`` the very numbers of the compiled player's ``_conn``."""
    conn = np.zeros(h.shape, dtype=dtype)
    hf = h.astype(dtype)
    conn += 1.5 * np.maximum(hf - 1, 0)
    for dist, w in ((1, 1.0), (2, 0.5)):
        for sign in (1, -1):
            shifted = np.zeros_like(hf)
            if sign == 1:
                shifted[:, :-dist] = hf[:, dist:]
            else:
                shifted[:, dist:] = hf[:, :-dist]
            t = np.arange(34)
            same_suit = (t < 27) & ((t + sign * dist) // 9 == t // 9) & (t + sign * dist >= 0) & (t + sign * dist < 27)
            conn += w * shifted * same_suit[None, :]
    rank = np.arange(34) % 9
    conn += np.where((np.arange(34) < 27) & ((rank == 0) | (rank == 8)), -0.3, 0.0)[None, :]
    conn += np.where(np.arange(34) >= 27, -0.2, 0.0)[None, :]
    return conn


def flush_variant_kwargs(variant: str) -> dict:
    """The :class:`HeuristicAgent` keywords of the built-in ``heuristic-flush``: in Kawuxing a 清一色 plan with 2
    steps of credit (it beat the plain heuristic by +0.059 ± 0.049 and, on fresh walls, +0.078 ± 0.051 per hand
    over 2,000 duplicate walls, docs/experiments/heuristic.md); in Yangzhou the flush plan credited 5 steps and all triplets 4
    instead of 3 and 3 (+3.2 per hand over 800 duplicate walls, docs/experiments/four-player.md); every other family keeps its
    own credits."""
    return family_params(get_variant(variant).family)["flush_variant"]


def _top_k(choice: np.ndarray, entries: list, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` legal entries of each row, ``choice`` first, then by value (descending; ties in entry
    order), leaving out values of -1e299 and below: :meth:`HeuristicAgent.candidates`' output."""
    B = len(choice)
    cat = [np.concatenate([e[i] for e in entries]) if entries else np.zeros(0) for i in range(3)]
    r = np.concatenate([cat[0].astype(np.int64), np.arange(B)])
    a = np.concatenate([cat[1].astype(np.int64), choice])
    v = np.concatenate([cat[2].astype(np.float64), np.full(B, np.inf)])
    seq = np.arange(len(r))
    is_choice = a == choice[r]
    first = np.zeros(B, bool)
    first[r[:len(cat[0])][is_choice[:len(cat[0])]]] = True
    # the choice's own entry carries it; the appended copy only where the row listed no such entry (a win)
    keep = mask[r, a] & ((v > -1e299) | is_choice) & ~(is_choice & (seq >= len(cat[0])) & first[r])
    v = np.where(is_choice, np.inf, v)
    r, a, v, seq = r[keep], a[keep], v[keep], seq[keep]
    order = np.lexsort((seq, -v, r))
    r, a = r[order], a[order]
    start = np.searchsorted(r, np.arange(B))
    pos = np.arange(len(r)) - start[r]
    take = pos < k
    out_a = np.full((B, k), -1, dtype=np.int64)
    out_a[r[take], pos[take]] = a[take]
    return out_a, np.bincount(r[take], minlength=B).astype(np.int64)


class HeuristicAgent:
    """Rule-based player (see the module docstring); batched over rows, deterministic."""

    def __init__(self, variant: str = "kawuxing3", options: Any = None, *, liang_min_live: int = 2,
                 liang_min_wall: int = 4, flush_bonus: int | None = None, qidui_bonus: int = 0,
                 exposure_weight: float | None = None, triplets_bonus: int | None = None, lanpai_bonus: int = 0,
                 lanpai_honors: int = 5, qixing_wait: int | None = None, name: str = "heuristic"):
        self.name = name
        self.view = ObsView(variant, options)  # variant: a name, or a mjenv.rules.Rules (then options stays None)
        self.rules = self.view.rules
        self.variant = variant = self.rules.variant
        self.opts = self.view.opts
        self.n = self.view.n
        self.kinds = self.view.kinds
        self.liang_min_live = int(liang_min_live)
        self.liang_min_wall = int(liang_min_wall)
        # Hand values come from the Kawuxing scorer; other families play for shape alone.
        family = get_variant(variant).family
        self.family = family
        self._kawuxing = family == "kawuxing"
        self._lanpai = family == "gejiu"  # 烂牌 / 七星 shapes (docs/rules/gejiu.md §6.6)
        # ``lanpai_bonus`` (Gejiu knob, 0 = off): a 烂牌 holding at least ``lanpai_honors`` distinct honors is read
        # this many steps shorter, so the player keeps its honors towards 七星 (a 烂牌 of all seven honors, 16x a
        # plain hand) where the standard shape is as short (docs/experiments/four-player.md, "Gejiu: 七星")
        if int(lanpai_bonus) < 0 or not 0 <= int(lanpai_honors) <= 7:
            raise ValueError(f"lanpai_bonus must be >= 0 and lanpai_honors in 0..7, got {lanpai_bonus}, {lanpai_honors}")
        if int(lanpai_bonus) and family != "gejiu":
            raise ValueError(f"lanpai_bonus credits Gejiu's 烂牌; {variant!r} has no such shape")
        self._lanpai_bonus = int(lanpai_bonus)
        self._lanpai_honors = int(lanpai_honors)
        # ``qixing_wait`` (Gejiu, None = off): pass another player's discard (or robbed kong) that wins a ready 烂牌
        # holding six distinct honors while the seventh is unseen and at least this many tiles are left in the wall,
        # waiting on for the 七星 (16x a plain hand); Gejiu has no missed-win lock, so the 烂牌 stays winnable
        if qixing_wait is not None and (family != "gejiu" or int(qixing_wait) < 0):
            raise ValueError(f"qixing_wait is a wall count >= 0 for Gejiu's 烂牌; got {qixing_wait!r} in {variant!r}")
        self._qixing_wait = None if qixing_wait is None else int(qixing_wait)
        # ``flush_bonus`` overrides the family's credit; in Kawuxing (no credit by default) a flush is 清一色 alone
        # (×4, docs/rules/kawuxing.md §3.7: no dragons), so its plan keeps one suit without honors.
        params = family_params(family)
        self._flush_bonus = params["flush_bonus"] if flush_bonus is None else int(flush_bonus)
        self._flush_honors = family != "kawuxing"
        # ``qidui_bonus`` (research knob, 0 = off): a seven-pairs plan (七对 is ×4 in Kawuxing) credited this many
        # steps, chosen like a flush plan; only where seven pairs wins.
        self._qidui_bonus = int(qidui_bonus)
        # ``triplets_bonus``: the credit of the all-triplets plan (None = the family's, 0 = no such plan).
        self._triplets_bonus = int(params["triplets_bonus"] if triplets_bonus is None else triplets_bonus)
        # 包牌 liability the player can incur by feeding (docs/rules/yangzhou.md §8.9; Diedaohu's option).
        self._bao_flush = family == "yangzhou" and getattr(self.opts, "baopai", "off") == "on"
        # Liuwei's 风清 on a discard takes the discarder's whole balance (docs/rules/liuwei.md §10.4) while the
        # 陪冲 players pay 16: the same exposure as Diedaohu's 风清 包牌, so the same rule.
        # Deal-in cost of the visible big hands (Diedaohu, Liuwei), weighed against ukeire at equal shanten;
        # ``exposure_weight`` overrides the family's weight (0 = off).
        self._deal_in = params["deal_in"]
        self._exposure_w = params["exposure_weight"] if exposure_weight is None else float(exposure_weight)
        self._bao_fengqing = (self._bao_flush or getattr(self.opts, "fengqing_baopai", "off") == "on"
                              or family == "liuwei")
        if self._deal_in is not None:
            self._pay_scale = float(self.opts.base) * (
                float(self.opts.bankroll) / 50.0 if family == "liuwei" and self.opts.bankroll is not None else 1.0)
        # seven pairs is a winning shape only where the family says so (Kawuxing, Gejiu; docs/rules/common.md §1.4)
        self._sp = rule_family(family).seven_pairs
        self._value_cache: dict = {}

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Same as :meth:`act` (so the agent can be an env's opponent policy)."""
        return self.act(obs, mask)

    # ------------------------------------------------------------------------------------------ act
    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row."""
        return self.decide(self.view.decode(obs), np.asarray(mask, dtype=bool))

    def decide(self, d: Decoded, mask: np.ndarray) -> np.ndarray:
        """One legal action per row of an already decoded observation batch (``bool`` masks)."""
        return self._play(d, mask, False)[0]

    def candidates(self, obs: np.ndarray, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(actions int64 [B, k], count int64 [B])``: each row's legal actions ranked by the player, -1 padded.

        The first is :meth:`act`'s choice; the others follow by the values of the compiled player's ranking
        (:meth:`agents.players.fastplay.FastPlayer.candidates`), computed from the observation and mask alone with the same
        arrays that make the choice: on one's own turn every legal discard by its discard score (ukeire or the
        ready hand's value-weighted waits for every legal discard, not only the best ones), the discards of the
        best plan shanten 1e9 above the rest, the 亮倒 of the chosen tile before its plain discard (0.5 below the
        choice's score), the kongs the player would take above every discard; in a claim window pass (0), the
        direct kong (+1 taken, -1 not), pong and chi by how much they lower the credited plan cost; a Gejiu
        face-up kong tile by minus its plan cost; a legal win is the only candidate.  Actions whose value is
        "never" (a kong the player would not take) are left out, so ``count`` can be below ``k``; ties keep the
        compiled player's order (discards by tile, then 亮倒, then kongs; pass, kong, pong, chi low/mid/high)."""
        k = int(k)
        if k < 1:
            raise ValueError(f"k: need at least 1 candidate, got {k}")
        mask = np.asarray(mask, dtype=bool)
        out, entries = self._play(self.view.decode(obs), mask, True)
        return _top_k(out, entries, mask, k)

    def _play(self, d: Decoded, mask: np.ndarray, rank: bool) -> tuple[np.ndarray, list]:
        """``(choice [B], entries)``: the decision of every row and, where ``rank``, the ranked alternatives as
        a list of ``(rows [E], actions [E], values [E])`` in the compiled player's insertion order."""
        B = len(mask)
        out = np.full(B, -1, dtype=np.int64)
        entries: list = []
        if self._qixing_wait is not None:
            wait = self.qixing_waits(d, mask)
            if wait.any():
                mask = mask.copy()
                mask[wait, A.WIN] = False
        win = mask[:, A.WIN]
        out[win] = A.WIN
        own = ((d.phase == S.TURN) | (d.phase == S.CLAIMED)) & ~win
        pick = (d.phase == S.PICK) & ~win
        claim = ~own & ~win & ~pick
        for sel, fn in ((pick, self._pick), (own, self._own_turn), (claim, self._claim)):
            if sel.any():
                rows = np.flatnonzero(sel)
                out[rows], e = fn(d, mask, rows, rank)
                if e is not None:
                    entries.append((rows[e[0]], e[1], e[2]))
        bad = (out < 0) | ~mask[np.arange(B), np.clip(out, 0, A.N_ACTIONS - 1)]
        if bad.any():  # a phase this player does not model (e.g. another variant's actions): first legal
            out[bad] = mask[bad].argmax(1)
            entries = [(r[~bad[r]], a[~bad[r]], v[~bad[r]]) for r, a, v in entries]  # that action alone
        return out, entries

    # ------------------------------------------------------------------------------------------ helpers
    def qixing_waits(self, d: Decoded, mask: np.ndarray) -> np.ndarray:
        """bool [B]: the rows where ``qixing_wait`` passes a win: another player's suited discard or robbed kong
        that completes a concealed 烂牌 of six distinct honors, the seventh honor unseen, at least ``qixing_wait``
        tiles left in the wall (none when the knob is off)."""
        mask = np.asarray(mask, dtype=bool)
        out = np.zeros(len(mask), dtype=bool)
        if self._qixing_wait is None:
            return out
        own = (d.phase == S.TURN) | (d.phase == S.CLAIMED)
        rows = np.flatnonzero(~own & mask[:, A.WIN] & mask[:, A.PASS] & (d.n_melds[:, 0] == 0)
                              & (d.claim_tile >= 0) & (d.claim_tile < 27) & (d.wall_left >= self._qixing_wait))
        if not len(rows):
            return out
        h = d.hand[rows].astype(np.int64)
        missing = ((h[:, 27:] == 0) * d.live()[rows, 27:]).sum(1)
        out[rows] = ((h[:, 27:] > 0).sum(1) == 6) & (lanpai_count(h) == 13) & (missing >= 1)
        return out

    def danger(self, d: Decoded, rows: np.ndarray) -> np.ndarray:
        """int [R, 34]: how many revealed opponents wait on each tile (feeding them is 包胡)."""
        danger = np.zeros((len(rows), 34), dtype=np.int64)
        if self._bao_flush or self._bao_fengqing:
            danger += self._liability(d, rows)
        r_i, s_i = np.nonzero(d.revealed[rows, 1:])
        if not len(r_i):
            return danger
        s_i = s_i + 1
        shown = d.shown[rows[r_i], s_i].astype(np.int8)
        owned = (shown + d.meld_tiles[rows[r_i], s_i]).clip(0, 4).astype(np.int8)
        # Seven pairs is possible only with no melds and nothing kept face down.
        sp = (d.n_melds[rows[r_i], s_i] == 0) & (d.face_down[rows[r_i], s_i] == 0) & self._sp
        waits = np.zeros((len(r_i), 34), dtype=bool)
        for flag in (False, True):
            sel = np.flatnonzero(sp == flag)
            if len(sel):
                waits[sel] = wait_mask(shown[sel], seven_pairs=flag, kinds=self.kinds, owned=owned[sel])
        np.add.at(danger, r_i, waits.astype(np.int64))
        return danger

    def exposure(self, d: Decoded, rows: np.ndarray) -> np.ndarray:
        """float [R, 34]: the expected extra money a discard of each tile costs through the big hands the other
        players' melds show (Diedaohu, Liuwei; zero elsewhere).

        An opponent showing at least two melds, all in one suit (with or without honors) or all honors, threatens
        a flush (混一色 / 清一色) or 风清: the tiles it can use are that suit and the honors (honors alone for 风清).
        Each such tile costs ``P(ready | melds) × P(it is a wait) × extra``: the chance follows the meld count,
        the wait share is the tile's :func:`wait_ways` among the threatened kinds, and ``extra`` is what the
        discarder pays beyond what it would pay anyway: the class amount under Diedaohu, the discarder's amount
        less the 陪冲 amount under Liuwei.  Under 园子 every payment is capped by the player's own balance, and a
        busted player is exposed to nothing (no one may win on its discards, docs/rules/diedaohu.md §7.7)."""
        R = len(rows)
        out = np.zeros((R, 34), dtype=np.float64)
        if self._deal_in is None:
            return out
        own = np.full(R, np.inf) if d.balance is None else d.balance[rows, 0]
        if d.busted is not None:
            own = np.where(d.busted[rows, 0], 0.0, own)
        ways = wait_ways(d.live()[rows]) * self.kinds[None, :]
        suit = SUIT_OF
        for j in range(1, self.n):
            k = d.n_melds[rows, j]
            mt = d.meld_tiles[rows, j] > 0
            shown = np.stack([(mt & (suit == s_)[None, :]).any(1) for s_ in range(4)], 1)
            n_suits = shown[:, :3].sum(1)
            p_ready = _READY_BY_MELDS[np.minimum(k, 4)]
            threats = [("fengqing", (n_suits == 0) & shown[:, 3], suit[None, :] == 3)]
            for s_ in range(3):
                one = (n_suits == 1) & shown[:, s_]
                kinds = ((suit == s_) | (suit == 3))[None, :]
                threats.append(("hun", one & shown[:, 3], kinds))
                threats.append(("flush", one & ~shown[:, 3], kinds))
            for cls, hit, kinds in threats:
                hit = hit & (p_ready > 0)
                if not hit.any():
                    continue
                disc, others = self._deal_in[cls]
                # 风清 with unlimited money: the discarder pays 64 (docs/rules/liuwei.md §10.4, 紧淌 amounts)
                disc_pay = (np.where(np.isfinite(own), own, 64.0 * self._pay_scale) if disc is None
                            else np.minimum(disc * self._pay_scale, own))
                extra = np.maximum(disc_pay - np.minimum(others * self._pay_scale, own), 0.0)
                w = ways * kinds
                share = np.minimum(_WAITS_PER_HAND * w / np.maximum(w.sum(1, keepdims=True), 1e-9), 1.0)
                out += np.where(hit[:, None], (p_ready * extra)[:, None] * share, 0.0)
        return out

    def _liability(self, d: Decoded, rows: np.ndarray) -> np.ndarray:
        """int [R, 34]: tiles whose discard could make this player liable for a whole win (包牌,
        docs/rules/yangzhou.md §8.9): a tile of the suit in which the next player already holds two chis and
        nothing else (a third chi fed by us makes a 清一色 ours to pay), and, while an opponent shows three honor
        sets and nothing else, every honor (a pong of it would complete a 风清)."""
        out = np.zeros((len(rows), 34), dtype=np.int64)
        suit = SUIT_OF
        if self._bao_flush:
            chi = d.melds[rows, 1, 1].astype(np.int64)  # the next player's chis, by lowest tile
            mt = d.meld_tiles[rows, 1] > 0
            for s_ in range(3):
                n_chi = chi[:, suit == s_].sum(1)
                only = ~(mt & (suit != s_)[None, :]).any(1)
                hit = (n_chi == 2) & only & (chi.sum(1) == 2)
                out[np.ix_(hit, suit == s_)] += 1
        if self._bao_fengqing:
            for j in range(1, self.n):
                mt = d.meld_tiles[rows, j] > 0
                honors_only = ~(mt & (suit < 3)[None, :]).any(1)
                hit = honors_only & (d.n_melds[rows, j] == 3)
                out[np.ix_(hit, suit == 3)] += 1
        if d.busted is not None:  # no one may win on a busted player's discards (docs/rules/diedaohu.md §7.7)
            out[d.busted[rows, 0]] = 0
        return out

    def _melds(self, d: Decoded, row: int) -> tuple[Meld, ...]:
        out = []
        for j, letter in enumerate(MELD_LETTER_BY_ROW):
            for t in np.flatnonzero(d.melds[row, 0, j]):
                size = 4 if letter in "KAX" else 3
                for _ in range(int(d.melds[row, 0, j, t])):
                    tiles = (int(t), int(t) + 1, int(t) + 2) if letter == "C" else (int(t),) * size
                    out.append(Meld(letter, tiles))
        return tuple(out)

    def _wait_value(self, concealed: np.ndarray, melds: tuple[Meld, ...], t: int) -> tuple[float, bool]:
        """(capped hand value of winning on ``t`` without situational fans, winnable on a discard unrevealed)."""
        if not self._kawuxing:
            return 1.0, True
        from mjenv.rules.scoring import kawuxing as K

        key = (concealed.tobytes(), melds, t)
        hit = self._value_cache.get(key)
        if hit is not None:
            return hit
        try:
            sc = K.score_win(concealed, melds, t, K.WinContext("discard"), self.opts, self.n)
            value = float(sc.value if sc.cap is None else min(sc.value, sc.cap)) if sc.reading is not None else 0.0
            res = (value, bool(sc.legal))
        except ValueError:  # a wait on a fifth copy; never scored
            res = (0.0, False)
        if len(self._value_cache) > 200_000:
            self._value_cache.clear()
        self._value_cache[key] = res
        return res

    # ------------------------------------------------------------------------------------------ plans
    def _plan_costs(self, h: np.ndarray, nm: np.ndarray, meld_tiles: np.ndarray, n_chi=0) -> np.ndarray:
        """int [N, 6]: shanten under a flush in suit 0/1/2 (99 where the melds rule it out), under the plain plan
        (column 3: standard or seven pairs, and 烂牌 in Gejiu), under seven pairs alone (column 4, 99 unless
        ``qidui_bonus`` is set and the hand has no melds) and under all triplets (column 5, 99 unless
        ``triplets_bonus`` is set and the player has no chi meld, ``n_chi [N]``), before the credits of
        :meth:`_bonus`."""
        out = np.full((len(h), 6), 99, dtype=np.int64)
        out[:, 3] = shanten(h, nm, self._sp)
        if self._lanpai:
            out[:, 3] = np.minimum(out[:, 3], self._lanpai_shanten(h, nm))
        if self._flush_bonus is not None:
            allowed, feasible = self._flush_allowed(meld_tiles)
            for s_ in range(3):
                out[:, s_] = np.where(feasible[:, s_], plan_shanten(h, nm, allowed[s_], self._sp), 99)
        if self._qidui_bonus and self._sp:
            out[:, 4] = np.where(np.asarray(nm) == 0, shanten_seven_pairs(h), 99)
        if self._triplets_bonus:
            out[:, 5] = triplets_shanten(h, nm, n_chi)
        return out

    def _lanpai_shanten(self, h: np.ndarray, nm) -> np.ndarray:
        """int [N]: :func:`agents.players.plans.lanpai_shanten`, less ``lanpai_bonus`` where the hand holds at least
        ``lanpai_honors`` distinct honors (the same numbers when the knob is off)."""
        s = lanpai_shanten(h, nm)
        if not self._lanpai_bonus:
            return s
        honors = (np.atleast_2d(np.asarray(h))[:, 27:] > 0).sum(1)
        return np.where(honors >= self._lanpai_honors, s - self._lanpai_bonus, s)

    def _flush_allowed(self, meld_tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`agents.players.plans.flush_allowed`, without the honors where a flush may not hold them (Kawuxing)."""
        allowed, feasible = flush_allowed(meld_tiles)
        if self._flush_honors:
            return allowed, feasible
        allowed = allowed & (SUIT_OF < 3)[None, :]
        mt = np.asarray(meld_tiles) > 0
        return allowed, ~(mt[:, None, :] & ~allowed[None]).any(2)

    def _bonus(self) -> np.ndarray:
        """int [6]: the shanten credit of each plan column of :meth:`_plan_costs`."""
        b = self._flush_bonus or 0
        return np.array([b, b, b, 0, self._qidui_bonus, self._triplets_bonus], dtype=np.int64)

    def _value_cost(self, h: np.ndarray, nm: np.ndarray, meld_tiles: np.ndarray, n_chi=0) -> np.ndarray:
        """int [N]: the best plan's shanten less its credit (lower is better; used to compare claims)."""
        return (self._plan_costs(h, nm, meld_tiles, n_chi) - self._bonus()).min(1)

    @staticmethod
    def _n_chi(d: Decoded, rows: np.ndarray) -> np.ndarray:
        """int [R]: chi melds the player holds (any rules out the all-triplets plan)."""
        return d.melds[rows, 0, _CHI_ROW].sum(1).astype(np.int64)

    def _choose_plan(self, after, nm, meld_tiles, r_i, R, eligible, n_chi=0):
        """Per row, the plan (0-2 flush in that suit, 3 plain, 4 seven pairs, 5 all triplets) whose best eligible
        discard has the lowest shanten after credit; ties go to the plain plan.  Returns ``(plan [R], allowed
        [K, 34], shanten [K])`` with each candidate discard's shanten under its row's plan."""
        K = len(r_i)
        everything = np.ones((K, 34), dtype=bool)
        if self._flush_bonus is None and not self._qidui_bonus and not self._triplets_bonus:
            s = shanten(after, nm, self._sp)
            if self._lanpai:
                s = np.minimum(s, self._lanpai_shanten(after, nm))
            return np.full(R, 3, dtype=np.int64), everything, s
        costs = self._plan_costs(after, nm, meld_tiles, n_chi)
        credited = np.where(eligible[:, None], costs - self._bonus(), 999)
        best = np.full((R, 6), 999, dtype=np.int64)
        np.minimum.at(best, r_i, credited)
        order = np.array([3, 0, 1, 2, 4, 5])
        plan = order[best[:, order].argmin(1)]
        p_k = plan[r_i]
        allowed_s, _ = self._flush_allowed(meld_tiles[:1])
        allowed = np.where((p_k < 3)[:, None], allowed_s[np.minimum(p_k, 2)], everything)
        return plan, allowed, costs[np.arange(K), p_k]

    # ------------------------------------------------------------------------------------------ own turn
    def _own_turn(self, d: Decoded, mask: np.ndarray, rows: np.ndarray, rank: bool = False):
        """``(choice [R], entries)`` on one's own turn; ``entries`` (``rank`` only, else None) are ``(row [E],
        action [E], value [E])`` of every legal discard, the 亮倒 and the kongs (see :meth:`candidates`)."""
        R = len(rows)
        out = np.full(R, -1, dtype=np.int64)
        h = d.hand[rows].astype(np.int8)
        nm = d.n_melds[rows, 0]
        live = d.live()[rows]
        disc_mask = mask[rows, : A.LIANG] | mask[rows, A.LIANG : A.KONG_SELF]

        # Every legal discard: shanten after it (under the row's plan), then ukeire for the best ones (for every
        # legal one when ranking).
        r_i, t_i = np.nonzero(disc_mask)
        after = h[r_i].copy()
        after[np.arange(len(r_i)), t_i] -= 1
        danger = self.danger(d, rows)
        dangerous = danger[r_i, t_i] > 0
        # Safe discards first; among them the lowest shanten.
        any_safe = np.zeros(R, bool)
        np.logical_or.at(any_safe, r_i, ~dangerous)
        eligible = ~dangerous | ~any_safe[r_i]
        n_chi = self._n_chi(d, rows)
        plan, allowed, s_after = self._choose_plan(after, nm[r_i], d.meld_tiles[rows[r_i], 0], r_i, R, eligible,
                                                   n_chi[r_i])
        key_s = np.where(eligible, s_after, 99)
        best_s = np.full(R, 99, dtype=np.int64)
        np.minimum.at(best_s, r_i, key_s)
        cand = eligible & (s_after == best_s[r_i])

        ci = np.arange(len(r_i)) if rank else np.flatnonzero(cand)
        metric = np.zeros(len(r_i), dtype=np.float64)
        waits_live = np.zeros(len(r_i), dtype=np.int64)
        all_cheap = np.zeros(len(r_i), dtype=bool)
        if len(ci):
            kept = np.where(allowed[ci], after[ci], 0).astype(np.int8)
            live_k = np.where(allowed[ci], live[r_i[ci]], 0)
            _, acc, improving = ukeire(kept, nm[r_i[ci]], live_k, self.kinds, self._sp)
            if self._lanpai:  # where 烂牌 is the shorter way, its own improving draws count
                lan = (plan[r_i[ci]] == 3) & (self._lanpai_shanten(after[ci], nm[r_i[ci]])
                                              < shanten(after[ci], nm[r_i[ci]], self._sp))
                acc = np.where(lan, lanpai_ukeire(after[ci], live[r_i[ci]]), acc)
            trip = np.flatnonzero(plan[r_i[ci]] == 5)
            if len(trip):  # all triplets: only the kinds held once or twice improve it
                k = ci[trip]
                acc[trip] = triplets_ukeire(after[k], nm[r_i[k]], live[r_i[k]], n_chi[r_i[k]])
            metric[ci] = acc + _OFF_PLAN_W * ~allowed[ci, t_i[ci]]
            waits_live[ci] = acc
            ready = np.flatnonzero((s_after[ci] == 0) & cand[ci])
            # Hand values cost a scoring call per wait: only where they decide something, i.e. between
            # several ready discards, or for the 1×-hand 亮倒 rule when the waits are nearly dead.
            n_ready = np.bincount(r_i[ci[ready]], minlength=R)
            kaikou_hard = getattr(self.opts, "kaikou", "none") == "hard"
            need = (n_ready[r_i[ci[ready]]] > 1) | (kaikou_hard & (acc[ready] < self.liang_min_live))
            if self._kawuxing and len(ready):
                for j in ready[need]:
                    k = ci[j]
                    row = rows[r_i[k]]
                    melds = self._melds(d, row)
                    ev, cheap = 0.0, True
                    for t in np.flatnonzero(improving[j] & (live[r_i[k]] > 0)):
                        v, discard_ok = self._wait_value(after[k], melds, int(t))
                        ev += live[r_i[k], t] * v
                        cheap &= not discard_ok
                    metric[k] = ev
                    all_cheap[k] = cheap
        exposed = self.exposure(d, rows)[r_i, t_i] if self._deal_in is not None and self._exposure_w else 0.0
        base = (
            -_BIG * (~eligible | dangerous) * np.maximum(danger[r_i, t_i], 1)
            - _SHANTEN_W * np.minimum(s_after, 50)
            + metric
            - self._exposure_w * exposed
        )

        def tie_break(dtype):  # the least connected tile, then the most visible one
            return base - 0.01 * _suited_neighbours(h, dtype)[r_i, t_i] - 0.001 * live[r_i, t_i]

        # The choice breaks exact ties (e.g. a lone terminal with 3 live copies against a lone dragon with 2) in
        # float32 (as it always has); the ranking in float64, as the compiled player does.
        value = tie_break(np.float32)
        score = np.where(cand, value, -np.inf)
        best_k = np.full(R, -1, dtype=np.int64)
        order = np.lexsort((-score, r_i))  # per row, best score first
        first = np.ones(len(order), bool)
        first[1:] = r_i[order][1:] != r_i[order][:-1]
        best_k[r_i[order][first]] = order[first]
        has = best_k >= 0
        tile = np.where(has, t_i[np.clip(best_k, 0, None)], -1) if len(t_i) else np.full(R, -1, dtype=np.int64)
        out[has] = tile[has]
        # the ranking's values: the best plan shanten's discards above every other (as the compiled player)
        value = (tie_break(np.float64) if rank else value) + 1e9 * cand
        best_v = np.where(has, value[np.clip(best_k, 0, None)], -np.inf) if len(t_i) else np.full(R, -np.inf)
        extra_r, extra_a, extra_v = [], [], []

        # 亮倒 with the chosen discard; its plain discard stays next to it.
        revealed = d.revealed[rows, 0]
        for j in np.flatnonzero(has & ~revealed):
            k = best_k[j]
            t = tile[j]
            if not mask[rows[j], A.LIANG + t] or d.wall_left[rows[j]] < self.liang_min_wall:
                continue
            enough = waits_live[k] >= self.liang_min_live
            cheap = all_cheap[k] and waits_live[k] >= 1 and getattr(self.opts, "kaikou", "none") == "hard"
            if enough or cheap:
                out[j] = A.LIANG + t
                value[k] -= 0.5
                extra_r.append(j), extra_a.append(A.LIANG + t), extra_v.append(best_v[j] + 1.0)

        # Kongs on one's own turn: the first the player takes is the choice, every one it takes a candidate.
        kong_mask = mask[rows, A.KONG_SELF : A.KONG_SELF + 34]
        for j in np.flatnonzero(kong_mask.any(1)):
            k = best_k[j]
            s_best = best_s[j] if k >= 0 else 99
            acc_best = waits_live[k] if k >= 0 else 0
            taken = []
            for t in np.flatnonzero(kong_mask[j]):
                if not revealed[j]:
                    hk = h[j].copy()
                    if hk[t] == 4:
                        hk[t] -= 4
                        nmk = nm[j] + 1
                    else:
                        hk[t] -= 1
                        nmk = nm[j]
                    s_k, acc_k, _ = ukeire(hk[None], np.array([nmk]), live[j][None], self.kinds, self._sp)
                    if not (s_k[0] < s_best or (s_k[0] == s_best and acc_k[0] >= 0.6 * acc_best)):
                        continue
                taken.append(t)
                if not rank:
                    break
            if taken:
                out[j] = A.KONG_SELF + taken[0]
                extra_r += [j] * len(taken)
                extra_a += [A.KONG_SELF + t for t in taken]
                extra_v += [best_v[j] + 2.0] * len(taken)
        if not rank:
            return out, None
        disc_a = np.where(mask[rows[r_i], t_i], t_i, A.LIANG + t_i)
        return out, (np.concatenate([r_i, np.asarray(extra_r, np.int64)]),
                     np.concatenate([disc_a, np.asarray(extra_a, np.int64)]),
                     np.concatenate([value, np.asarray(extra_v, np.float64)]))

    # ------------------------------------------------------------------------------------------ claims
    def _claim(self, d: Decoded, mask: np.ndarray, rows: np.ndarray, rank: bool = False):
        """``(choice [R], entries)`` in a claim window; ``entries`` (``rank`` only) are pass (0), the direct kong
        (+1 taken, -1 not) and each pong/chi by how much it lowers the credited plan cost."""
        R = len(rows)
        out = np.full(R, A.PASS, dtype=np.int64)
        ent_r, ent_a, ent_v = [np.arange(R)], [np.full(R, A.PASS)], [np.zeros(R)]

        def entries():
            return (np.concatenate(ent_r), np.concatenate(ent_a), np.concatenate(ent_v)) if rank else None

        can_pong = mask[rows, A.PONG]
        can_kong = mask[rows, A.KONG_CLAIM]
        can_chi = mask[rows, A.CHI_LOW : A.CHI_HIGH + 1].any(1)
        act = np.flatnonzero(can_pong | can_kong | can_chi)
        if not len(act):
            return out, entries()
        rr = rows[act]
        h = d.hand[rr].astype(np.int8)
        nm = d.n_melds[rr, 0]
        c = d.claim_tile[rr]
        live = d.live()[rr]
        s_now = shanten(h, nm, self._sp)
        revealed = d.revealed[rr, 0]

        # Direct kong: kong money from the discarder and a replacement draw, if the hand is no worse.
        kk = np.flatnonzero(can_kong[act])
        if len(kk):
            hk = h[kk].copy()
            hk[np.arange(len(kk)), c[kk]] -= 3
            s_k, acc_k, _ = ukeire(hk, nm[kk] + 1, live[kk], self.kinds, self._sp)
            ok = revealed[kk] | (s_k < s_now[kk]) | ((s_k == s_now[kk]) & ((s_now[kk] > 0) | (acc_k > 0)))
            out[act[kk[ok]]] = A.KONG_CLAIM
            ent_r.append(act[kk]), ent_a.append(np.full(len(kk), A.KONG_CLAIM)), ent_v.append(np.where(ok, 1.0, -1.0))

        # Pong or chi: only when the best discard afterwards lowers the plan shanten (a meld that breaks a flush
        # or 烂牌 plan counts under what is left); pong before chi on a tie.  Ranking values them where the kong
        # is taken too.
        mt = d.meld_tiles[rr, 0].astype(np.int64)
        is_open = out[act] == A.PASS
        open_rows = np.arange(len(act)) if rank else np.flatnonzero(is_open)
        if not len(open_rows):
            return out, entries()
        chi_now = self._n_chi(d, rr[open_rows])
        now = self._value_cost(h[open_rows], nm[open_rows], mt[open_rows], chi_now)
        best = now.copy()
        choice = out[act[open_rows]].copy()
        options = [(A.PONG, (0, 0))] + [(a, off) for a, off in ((A.CHI_LOW, (1, 2)), (A.CHI_MID, (-1, 1)), (A.CHI_HIGH, (-2, -1)))]
        for action, offs in options:
            sel = np.flatnonzero(mask[rr[open_rows], action])
            if not len(sel):
                continue
            j = open_rows[sel]
            hm = h[j].astype(np.int64)
            mtm = mt[j].copy()
            cc = c[j]
            idx = np.arange(len(j))
            if action == A.PONG:
                hm[idx, cc] -= 2
                mtm[idx, cc] += 3
            else:
                for o in offs:
                    hm[idx, cc + o] -= 1
                lo = cc + min(0, *offs)
                for o in range(3):
                    mtm[idx, lo + o] += 1
            cost = self._value_cost(hm.astype(np.int8), nm[j] + 1, mtm, chi_now[sel] + (action != A.PONG))
            better = (cost < best[sel]) & is_open[j]
            best[sel] = np.where(better, cost, best[sel])
            choice[sel] = np.where(better, action, choice[sel])
            ent_r.append(act[j]), ent_a.append(np.full(len(j), action)), ent_v.append((now[sel] - cost).astype(float))
        out[act[open_rows]] = choice
        return out, entries()

    # ------------------------------------------------------------------------------------------ Gejiu kong tile
    def _pick(self, d: Decoded, mask: np.ndarray, rows: np.ndarray, rank: bool = False):
        """``(choice [R], entries)``: the face-up kong tile that wins at once (杠上花), else the one leaving the best
        plan shanten; ``entries`` (``rank`` only) value each legal tile by minus its plan cost."""
        ent_r, ent_a, ent_v = [], [], []
        out = np.full(len(rows), -1, dtype=np.int64)
        h = d.hand[rows].astype(np.int64)
        nm = d.n_melds[rows, 0]
        mt = d.meld_tiles[rows, 0]
        best = np.full(len(rows), 999, dtype=np.int64)
        for slot, action in enumerate((A.KONGTILE_0, A.KONGTILE_1)):
            t = d.kong_tiles[rows, slot] if d.kong_tiles is not None else np.full(len(rows), -1)
            sel = np.flatnonzero(mask[rows, action] & (t >= 0))
            if not len(sel):
                continue
            hk = h[sel].copy()
            hk[np.arange(len(sel)), t[sel]] += 1
            cost = self._value_cost(hk.astype(np.int8), nm[sel], mt[sel], self._n_chi(d, rows[sel]))
            better = cost < best[sel]
            best[sel] = np.where(better, cost, best[sel])
            out[sel] = np.where(better, action, out[sel])
            ent_r.append(sel), ent_a.append(np.full(len(sel), action)), ent_v.append(-cost.astype(float))
        if not rank:
            return out, None
        cat = [np.concatenate(e) if e else np.zeros(0) for e in (ent_r, ent_a, ent_v)]
        return out, (cat[0].astype(np.int64), cat[1].astype(np.int64), cat[2])


def heuristic_player(name: str, variant: Any = "kawuxing3", options: Any = None, **kwargs) -> HeuristicAgent:
    """The built-in ``heuristic`` or ``heuristic-flush`` (:func:`flush_variant_kwargs`) under ``variant`` (a name or a
    :class:`mjenv.rules.Rules`) and ``options``: what :func:`agents.make_agent` builds for those names, and the
    advisor the advice rows and the departure head read."""
    if name not in ("heuristic", "heuristic-flush"):
        raise ValueError(f"heuristic_player: {name!r} is not heuristic or heuristic-flush")
    rules = resolve_rules(variant, options)
    extra = flush_variant_kwargs(rules.variant) if name == "heuristic-flush" else {}
    return HeuristicAgent(rules, **{**extra, "name": name, **kwargs})
