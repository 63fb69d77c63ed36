"""The departure head's learning curve: what it gains against the compiled heuristic as its labels grow.

For each size in ``--sizes`` (labelled decisions, taken from the start of the label files, in file order) it fits
a head (:func:`agents.training.departures.fit_head`, the ``long`` config's settings) and reports, for each threshold in
``--tau``,

* the **held-out gain**: on the decisions of the label files after ``--holdout_from`` (never fitted), what playing
  the head's choice gains per decision and per seat-hand by the labels' own rollout values (unbiased);
* the **duplicate gain**: on ``--walls`` walls of ``--seed``, the seat played by the head (the compiled player's
  shortlist, the head's choice among it) against the compiled player ``fast`` in the other seats (``--variant``: any
  variant, with its own number of seats), each wall played once with the head in each seat and once without; the
  figure is the head's seat money less the same seat's money without it, per hand, with its 95 % CI over walls.  ``fast`` is ``heuristic-flush``'s compiled core (its
  shortlist matches the Python player's on 99.6 % of decisions), so this is a quick proxy of the policy's margin,
  not the evaluate.py measurement.  ``--cap N`` lets the head depart at most N times per seat and hand (the labels value
  one departure from a state the compiled player reached; a cap tells whether later departures are what loses).

The labelling CPU time of each size is the label files' own, prorated.  Prints a table, then one JSON line.

    python bench/departure_curve.py --labels runs/train/long/departure_labels.npz --sizes 10000 25000 50000 90000
    python bench/departure_curve.py --variant gejiu --labels FILES --sizes 90000 --walls 1500 --tau 0.05 0.1 0.2
    python bench/departure_curve.py --variant gejiu --labels FILES --sizes 54000 --holdout_from 108000 --walls 1000 --tau 0.1 --cap 1 --fit_seed 1
    python bench/departure_curve.py --variant gejiu --features candidate-features-v2 --labels FILES --sizes 108000 --fit_seed 1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.players import departures as D  # noqa: E402
from agents.training import departures as DT  # noqa: E402
from agents.training.distill import concat_labels, load_labels  # noqa: E402
from agents.players.fastplay import FastPlayer  # noqa: E402
from mjenv.encoding.observation import encoder_for  # noqa: E402
from mjenv.engine import state as S  # noqa: E402
from mjenv.engine.core import Engine  # noqa: E402
from mjenv.rules.options import n_players  # noqa: E402


def play(walls: np.ndarray, seed: int, seat: int, head, tau: float, feats: D.CandidateFeatures, batch: int = 256,
         variant: str = "kawuxing3", cap: int | None = None, scope: str = "all"):
    """``(money [len(walls), n seats], departures, decisions)``: ``fast`` everywhere, the head choosing for ``seat``
    (-1: nowhere), at most ``cap`` departures a hand (None: no limit; after the cap the seat plays ``fast``), only to
    alternatives of its ``scope`` (:func:`agents.players.departures.in_scope`)."""
    player = FastPlayer(variant)
    seats = n_players(variant)
    out = np.zeros((len(walls), seats))
    departs = decisions = 0
    for lo in range(0, len(walls), batch):
        ids = np.asarray(walls[lo : lo + batch])
        eng = Engine(variant, len(ids), record_events=False)
        st, enc = eng.state, encoder_for(eng)
        eng.reset(seed=seed, table_ids=ids, dealer=ids % seats)
        acts = np.zeros(len(ids), np.int64)
        used = np.zeros(len(ids), np.int64)
        while True:
            live = np.flatnonzero(st.phase != S.DONE)
            if not len(live):
                break
            player.decide(eng, live, out=acts)
            mine = live[st.actor[live] == seat] if seat >= 0 else live[:0]
            if cap is not None:
                mine = mine[used[mine] < cap]
            if len(mine):
                cand, ncand = player.candidates(eng, mine, D.CANDIDATES)
                sel = ncand >= 2
                if sel.any():
                    b, c, n = mine[sel], cand[sel], ncand[sel]
                    obs = enc.encode(st, st.actor[b].astype(np.int64), b, engine=eng)
                    x = feats.pairwise(obs, eng.mask[b], c, n)
                    col = D.choose(np.where(D.in_scope(x, feats.version, scope), D.predict(head, x), -np.inf), n, tau)
                    go = col > 0
                    acts[b[go]] = c[np.flatnonzero(go), col[go]]
                    used[b[go]] += 1
                    departs += int(go.sum())
                    decisions += len(b)
            eng.step(acts)
        out[lo : lo + len(ids)] = st.money[:, :seats]
    return out, departs, decisions


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="kawuxing3", help="the variant the labels were made in")
    p.add_argument("--labels", nargs="+", required=True, help="label files (agents.training.distill.save_labels, 3 candidates)")
    p.add_argument("--sizes", nargs="+", type=int, required=True, help="labelled decisions to fit on, each a prefix")
    p.add_argument("--holdout_from", type=int, default=None, help="first held-out decision (default: the largest size)")
    p.add_argument("--walls", type=int, default=4000)
    p.add_argument("--first_wall", type=int, default=1000)
    p.add_argument("--seed", type=int, default=123)
    p.add_argument("--tau", type=float, nargs="+", default=[D.DEFAULTS["tau"]],
                   help="departure thresholds (money per hand); each is played on the same walls")
    p.add_argument("--cap", type=int, default=None,
                   help="at most this many departures per seat and hand (default: no limit)")
    p.add_argument("--fit_seed", type=int, default=0, help="the fit's seed (train.py's stage fits with the run's seed)")
    p.add_argument("--features", default=D.FEATURES, choices=sorted(D.FEATURE_SETS),
                   help="what the head reads (candidate-features-v2: Gejiu only, v1 and the ready hands' wait values)")
    p.add_argument("--scope", default="all", choices=D.SCOPES,
                   help="where the head is fitted and departs (ready: v2 only, ready hand to ready hand)")
    a = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    labels = concat_labels([load_labels(f) for f in a.labels])
    n = len(labels["cand"])
    cut = a.holdout_from if a.holdout_from is not None else max(a.sizes)
    if max(a.sizes) > cut or cut >= n:
        p.error(f"sizes must be <= the held-out start ({cut}), which must be below the {n} labelled decisions")
    meta = labels["meta"]
    seats = n_players(a.variant)
    per_seat_hand = n / (meta["label_prob"] * seats * meta["hands"])
    cpu_per_label = meta["cpu_seconds"] / n
    try:
        feats = D.CandidateFeatures(a.variant, version=a.features)
    except ValueError as exc:
        p.error(str(exc))
    x, gain, valid = DT.label_gains(labels, a.variant, features=a.features)
    if a.scope != "all" and a.features != D.FEATURES_V2:
        p.error(f"--scope {a.scope} needs --features {D.FEATURES_V2}")
    valid = valid & D.in_scope(x, a.features, a.scope)
    walls = np.arange(a.first_wall, a.first_wall + a.walls)
    rows = []
    base = None
    for size in sorted(a.sizes):
        t0 = time.process_time()
        head = DT.fit_head(x[:size], gain[:size], valid[:size], seed=a.fit_seed)
        fit_cpu = time.process_time() - t0
        held_pred = np.where(valid[cut:], D.predict(head, x[cut:]), -np.inf)
        held_rows = DT.realized_gains(held_pred, gain[cut:], labels["ncand"][cut:], a.tau, per_seat_hand)
        if base is None:
            base, _, _ = play(walls, a.seed, -1, head, 0.0, feats, variant=a.variant)
        for tau, held in zip(a.tau, held_rows):
            diffs, dep, dec = [], 0, 0
            for seat in range(seats):
                money, d_, n_ = play(walls, a.seed, seat, head, tau, feats, variant=a.variant, cap=a.cap, scope=a.scope)
                diffs.append(money[:, seat] - base[:, seat])
                dep, dec = dep + d_, dec + n_
            d = np.mean(diffs, 0)
            row = {"labels": size, "tau": tau, "label_cpu_s": round(size * cpu_per_label, 1),
                   "fit_cpu_s": round(fit_cpu, 1), "held_out_gain_per_seat_hand": round(held["gain_per_seat_hand"], 4),
                   "held_out_ci95": round(held["ci95_per_seat_hand"], 4),
                   "duplicate_gain_per_hand": round(float(d.mean()), 4),
                   "duplicate_ci95": round(float(1.96 * d.std(ddof=1) / np.sqrt(len(d))), 4),
                   "departs": round(dep / max(dec, 1), 4)}
            rows.append(row)
            print(f"{size:>8,} labels ({row['label_cpu_s']:>6.0f} CPU s), tau {tau:g}: held out "
                  f"{row['held_out_gain_per_seat_hand']:+.3f} ± {row['held_out_ci95']:.3f} per seat-hand; duplicate "
                  f"{row['duplicate_gain_per_hand']:+.3f} ± {row['duplicate_ci95']:.3f} per hand over {a.walls} walls "
                  f"(departs at {100 * row['departs']:.1f} %)", flush=True)
    print(json.dumps({"variant": a.variant, "walls": [int(walls[0]), int(walls[-1])], "seed": a.seed,
                      "held_out_from": cut, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
