"""Differential test of the compiled engine against the numpy engine it replaced (tests/reference_engine.py).

Both engines get the same walls and the same actions (random legal play, a legal win taken with
probability 0.7 so that hands end in every way); after every step the whole state, the masks, the
results, match money, bankrolls and sessions must be equal, and at the end of each hand the full
event logs.  ``CONFIGS`` covers every variant × ruleset × preset and option mixes.

Run from the repository root (the proof for issue 9 used ≥ 10,000 hands per configuration)::

    python -m tests.differential --hands 10000 --batch 512
    python -m tests.differential --hands 2000 --batch 512 --threads 2     # the threaded engine

Last full run (kernels of commit 133bf76, ``--hands 10000 --batch 256 --seed 11``): 39 configurations ×
10,000 hands = 390,000 hands, every step equal.  Kawuxing's claim windows and hand ends compiled (commit
3358caf): ``--hands 2000 --batch 256 --seed 11`` all 39 configurations equal, and ``--hands 10000 --batch 256
--seed 11 --only kawuxing`` (30 configurations, 300,000 hands) all equal.  Yangzhou's claim windows and self-draw
minimum judged in the kernel (mjenv.engine.yzscore): ``--hands 2000 --only yangzhou`` and ``--hands 10000
--batch 256 --seed 11 --only yangzhou`` (3 configurations, 30,000 hands) all equal.  The matches here stay in
the first round (East wind); tests/test_yzscore.py checks the verdicts in every round.  Drawn hands of Gejiu,
Diedaohu, Yangzhou and Liuwei ended in the kernel, Gejiu's claim windows and wins and Diedaohu's / Liuwei's kong
money compiled, sessions kept as engine rows (commit 99141be): ``--hands 2000 --batch 256 --seed 11`` and
``--hands 10000 --batch 256 --seed 11 --only gejiu|diedaohu|liuwei|yangzhou`` (14 configurations, 140,000 hands)
all equal.  Diedaohu's and Liuwei's claim windows judged in the kernel (commit 2c5300b, run at 94f5761):
``--hands 10000 --batch 256 --seed 11 --only diedaohu`` and ``--only liuwei`` (5 configurations, 50,000 hands)
all equal.  One entry point per set of compiled scorers (``kernels.kernel_for``) and constants typed plainly
(``mjenv/engine/jit.py``): ``--hands 2000 --batch 256 --seed 11`` for every family (44 configurations, 88,000
hands) all equal.  ``kernels.py`` split into ``mjenv/engine/{codes,gates,table,claims,masks,flow,entry}.py`` and
the family pieces ``{kw,gj,yz,dd}end.py``, claim priority as a table, the dead pendings (P_KONG, P_MASK_SCORE, the
P_EXHAUSTED stop) removed (kernel sources of commit 37f6008): ``--hands 10000 --batch 256 --seed 11`` for all 44
configurations (run in groups with ``--only``), 440,000 hands, every step equal; 982 CPU s in all.  Fan and
pattern values read from the scorers' tables through the configuration vector and one reading enumerator for the
three compiled scorers (handk.reading_split): ``--hands 2000 --batch 256 --seed 11 --only kawuxing``, ``--only
gejiu`` and ``--only yangzhou`` (39 configurations, 78,000 hands) all equal.  Results built from the reading
the kernels valued each winner with (``kwscore.best_reading`` / ``gjscore.best_reading``, issue 19 item 6):
``--hands 2000 --batch 256 --seed 11`` for all 44 configurations, 88,000 hands, all equal.  Main a25ba11 (those
results, the worlds' replay, the blocks-form fast player and every change since the split): ``--hands 10000
--batch 256 --seed 11`` for all 44 configurations (run as ``--only kawuxing`` and one run per other family),
440,000 hands, every step equal; 971 CPU s in all.  Diedaohu's, Liuwei's and Yangzhou's wins settled in the kernel
(mjenv/engine/ddwin.py, yzend._yz_end; issue 30): ``--hands 300 --batch 64 --seed 11`` for all 44 configurations,
``--hands 10000 --batch 256 --seed 11 --only diedaohu|liuwei|yangzhou`` (9 configurations, 90,000 hands) and
``--hands 512 --batch 512 --threads 2 --seed 11`` for those three families, every step equal; with Diedaohu's and
Liuwei's results built from the kernel's reading codes (ddwin._dd_reading): ``--hands 300 --batch 64 --seed 11`` (44
configurations) and ``--hands 2000 --batch 256 --seed 11 --only diedaohu|liuwei`` (5 configurations), all equal;
Yangzhou's from yzscore.best's codes: ``--hands 2000 --batch 256 --seed 11 --only yangzhou`` (4 configurations)
all equal.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import fields

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine.core import Engine
from mjenv.rules.options import get_variant
from tests.reference_engine import Engine as ReferenceEngine

_KWX_OPTION_MIXES = (
    {"liang_kong": "same_waits", "gangshanggang": "per_hand", "angang_timing": "immediate"},
    {"liang_kong": "none", "liang_hide_triplets": "off", "gangshanggang": "off", "qianggang": "off", "multi_win": "off"},
    {"gangshanggang": "self_consecutive", "tingtou": "each", "huang_liang_penalty": 0},
)

CONFIGS: list[tuple[str, str | None, str | None, dict]] = []
for _variant in ("kawuxing3", "kawuxing4"):
    for _ruleset in (None, "suizhou000", "qdjt001"):
        for _preset in (None, "simple", "barbaric", "crazy"):
            CONFIGS.append((_variant, _ruleset, _preset, {}))
    for _mix in _KWX_OPTION_MIXES:
        CONFIGS.append((_variant, None, None, _mix))
CONFIGS += [
    ("gejiu", None, None, {}),
    ("gejiu", None, None, {"gejiu_qianggang": "replacement_tile"}),
    ("gejiu", None, None, {"gejiu_qianggang": "add_kong", "multi_win": "off"}),
    ("gejiu", None, None, {"gejiu_combine": "add", "gejiu_multiwin_dealer": "nearest_winner"}),
    ("gejiu", None, None, {"gejiu_combine": "max", "gejiu_qianggang": "replacement_tile"}),
    ("diedaohu", None, None, {}),
    ("diedaohu", None, None, {"multi_win": "off"}),
    ("yangzhou", None, None, {}),
    ("yangzhou", None, None, {"chi": "off"}),
    ("yangzhou_new", None, None, {}),
    ("liuwei", None, None, {}),
    # 园子 tight enough to bust players within a match (kong money and wins limited by the balances)
    ("diedaohu", None, None, {"bankroll": 3.0, "draw_dealer": "stay"}),
    ("liuwei", None, None, {"bankroll": "none"}),
    ("yangzhou", None, None, {"draw_dealer": "stay", "rounds": 8}),
]


def config_id(cfg) -> str:
    """A short test id for one configuration."""
    variant, ruleset, preset, opts = cfg
    parts = [variant, ruleset or "-", preset or "-"] + [f"{k}={v}" for k, v in opts.items()]
    return ":".join(parts)


def _valid_config(cfg) -> bool:
    variant, ruleset, preset, opts = cfg
    try:
        Engine(variant, 1, ruleset=ruleset, preset=preset, options=opts or None)
    except Exception:
        return False
    return True


def _compare(new: Engine, ref: ReferenceEngine, where: str, events: bool) -> None:
    for f in fields(ref.state):
        a, b = getattr(new.state, f.name), getattr(ref.state, f.name)
        if not np.array_equal(a, b):
            bad = np.argwhere(a != b)[:3].tolist()
            raise AssertionError(f"{where}: state.{f.name} differs at {bad}")
    if not np.array_equal(new.mask, ref.mask):
        bad = np.argwhere(new.mask != ref.mask)[:3].tolist()
        raise AssertionError(f"{where}: mask differs at {bad}")
    if new.results != ref.results:
        raise AssertionError(f"{where}: results differ")
    for name in ("match_money", "balance", "session_over", "hand_number"):
        if not np.array_equal(getattr(new, name), getattr(ref, name)):
            raise AssertionError(f"{where}: {name} differs")
    if new.sessions != ref.sessions:
        raise AssertionError(f"{where}: sessions differ")
    if events:
        for b in range(new.batch_size):
            got, want = list(new.events[b]), ref.events[b]
            if got != want:
                k = next((i for i, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
                raise AssertionError(
                    f"{where}: table {b} event {k} differs: {got[k] if k < len(got) else None} "
                    f"vs {want[k] if k < len(want) else None}"
                )


def _policy(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    acts = np.zeros(len(mask), np.int64)
    for b in np.flatnonzero(mask.any(1)):
        legal = np.flatnonzero(mask[b])
        if mask[b, A.WIN] and rng.random() < 0.7:
            acts[b] = A.WIN
        else:
            acts[b] = legal[rng.integers(len(legal))]
    return acts


def play_both(cfg, hands: int, batch: int, seed: int, hands_per_match: int = 3, threads: int = 1) -> int:
    """Play ``hands`` hands of ``cfg`` on both engines in lockstep; raise AssertionError at the first difference.

    Tables play matches of up to ``hands_per_match`` hands (next_hand), so sessions, dealers and
    bankrolls are compared too; the compiled engine runs on ``threads`` threads (mjenv/engine/threads.py).  Returns
    the number of decisions compared.
    """
    variant, ruleset, preset, opts = cfg
    new = Engine(variant, batch, ruleset=ruleset, preset=preset, options=opts or None, threads=threads)
    ref = ReferenceEngine(variant, batch, options=new.opts)
    rng = np.random.default_rng(seed)
    wall_rng = np.random.default_rng(seed + 1)
    decisions = 0
    played = 0
    match_hand = 0

    def walls(k):
        return np.stack([wall_rng.permutation(new.tiles) for _ in range(k)])

    w = walls(batch)
    dealers = rng.integers(0, new.n, batch)
    new.reset(walls=w, dealer=dealers)
    ref.reset(walls=w, dealer=dealers)
    where = f"{config_id(cfg)} seed {seed}"
    _compare(new, ref, f"{where} deal", events=True)
    while played < hands:
        step = 0
        while not new.done.all():
            acts = _policy(new.mask, rng)
            decisions += int((~new.done).sum())
            new.step(acts)
            ref.step(acts)
            step += 1
            _compare(new, ref, f"{where} hand {played}+ step {step}", events=False)
        _compare(new, ref, f"{where} hand {played}+ end", events=True)
        played += batch
        match_hand += 1
        if played >= hands:
            break
        w = walls(batch)
        if match_hand < hands_per_match and not new.session_over.any():
            new.next_hand(walls=w)
            ref.next_hand(walls=w)
        else:
            match_hand = 0
            dealers = rng.integers(0, new.n, batch)
            new.reset(walls=w, dealer=dealers)
            ref.reset(walls=w, dealer=dealers)
        _compare(new, ref, f"{where} hand {played} deal", events=True)
    return decisions


def main() -> None:
    """Command line: play every configuration (or those matching ``--only``) and print a line each."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=300, help="hands per configuration")
    ap.add_argument("--batch", type=int, default=64, help="tables per engine")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="substring of the configuration ids to run")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the compiled engine (only calls over >= 512 tables are cut: use --batch >= 512)")
    args = ap.parse_args()
    total = 0
    for cfg in CONFIGS:
        if args.only not in config_id(cfg) or not _valid_config(cfg):
            continue
        t0 = time.process_time()
        n = play_both(cfg, args.hands, args.batch, args.seed, threads=args.threads)
        print(f"{config_id(cfg):70s} {args.hands:6d} hands equal  ({time.process_time() - t0:.1f} s CPU)", flush=True)
        total += args.hands
    print(f"all equal: {total} hands")


if __name__ == "__main__":
    main()
