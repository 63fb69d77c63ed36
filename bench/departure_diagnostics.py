"""Why a departure head does or does not gain in a variant: label noise, world-sampler bias, calibration.

Three measurements (docs/experiments/four-player.md, "Gejiu again", has them for Gejiu against the other variants):

* ``noise``: the same self-play decisions labelled by :func:`agents.training.distill.label_states` with each world
  count of ``--worlds`` (the decisions do not depend on it), and per count, over every labelled alternative, the
  variance of the label, the noise (mean squared standard error of the paired per-world mean), their difference
  (how much the true gains spread between decisions) and the share of signal; with two counts, the correlation
  of the two labels.
* ``truth``: at ``--decisions`` self-play decisions picked as the labeller picks them, each shortlisted alternative's
  gain in ``--worlds`` sampled worlds (the label) and in the **true** world (the real hidden state, the same
  candidates rolled out by the same fast player).  Over many decisions the two means agree if the sampler is
  faithful.  With ``--labels`` a head is fitted (as ``train.py``'s stage, fit seed 1) on the first ``--fit`` of
  them, or ``--checkpoint``'s head is read, and the gains of its departures at each ``--tau`` are printed both ways,
  per departure and per seat-hand.  ``--scope ready`` (Gejiu) takes every decision where the choice and another
  candidate leave a ready hand (``label_states(scope="ready")``) and only the alternatives a ``ready`` head may play.
* ``calibration``: a head fitted on the first ``--fit`` labels of ``--labels`` (or the head of ``--checkpoint``),
  read on ``--held`` labels (default: the rest of ``--labels``): the mean label of the alternatives in bins of
  predicted gain, and what departing at each ``--tau`` gains per seat-hand.  ``--sizes`` adds a learning curve.

    python bench/departure_diagnostics.py noise --variant gejiu --decisions 2000 --seed 9100 --worlds 8 32
    python bench/departure_diagnostics.py truth --variant gejiu --decisions 12000 --seed 9300 --labels FILES --fit 108000
    python bench/departure_diagnostics.py truth --variant gejiu --scope ready --decisions 40000 --seed 9600 --checkpoint CKPT
    python bench/departure_diagnostics.py calibration --variant gejiu --labels FILES --fit 108000 --sizes 13500 27000 54000
    python bench/departure_diagnostics.py calibration --variant gejiu --features candidate-features-v2 --labels FILES --fit 108000
    python bench/departure_diagnostics.py calibration --variant kawuxing4 --checkpoint agents/checkpoints/kawuxing4-default.pt --held FILES
    python bench/departure_diagnostics.py calibration --variant gejiu --checkpoint agents/checkpoints/gejiu-default.pt --held WIN_FILES

A checkpoint's head is read over its own advisor (``heuristic-advice-v3`` for Gejiu's); a head of scope ``win`` reads
win labels (:func:`agents.training.departures.win_labels`, saved with :func:`agents.training.distill.save_labels`),
whose seat-hands are counted in their ``meta``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.players import departures as D  # noqa: E402
from agents.training import departures as DT  # noqa: E402
from agents.training.distill import concat_labels, label_states, load_labels  # noqa: E402
from mjenv.rules.options import n_players  # noqa: E402

BINS = (-np.inf, -1.0, -0.5, -0.2, 0.0, 0.05, 0.1, 0.2, 0.3, 0.5, np.inf)
"""Edges of the predicted-gain bins of ``calibration``."""


def ci95(a: np.ndarray) -> float:
    """Half-width of the normal 95 % interval of the mean of ``a`` (nan below two values)."""
    a = np.asarray(a, np.float64)
    return float(1.96 * a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else float("nan")


def alternatives(labels: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(gain, se)`` of every labelled alternative (columns 1.. below ``ncand``), flat."""
    k = np.asarray(labels["gain"]).shape[1]
    valid = np.arange(1, k)[None, :] < np.asarray(labels["ncand"])[:, None]
    return np.asarray(labels["gain"])[:, 1:][valid], np.asarray(labels["se"])[:, 1:][valid]


def noise(a) -> None:
    """The ``noise`` measurement (module docstring)."""
    gains = []
    print(f"{a.variant}: {a.decisions:,} decisions of walls of seed {a.seed}, label_prob 0.25, 3 candidates")
    print("worlds | var(label) | noise (mean se^2) | signal | reliability | mean label | CPU s")
    for w in a.worlds:
        t0 = time.process_time()
        lab = label_states(a.variant, decisions=a.decisions, tables=64, label_prob=0.25, worlds=w, candidates=3,
                           seed=a.seed)
        cpu = time.process_time() - t0
        g, se = alternatives(lab)
        total, noise_ = float(g.var()), float((se.astype(np.float64) ** 2).mean())
        print(f"{w:>6} | {total:10.3f} | {noise_:17.3f} | {total - noise_:6.3f} | {(total - noise_) / total:11.3f} | "
              f"{g.mean():+10.3f} | {cpu:5.0f}", flush=True)
        gains.append(g)
    if len(gains) == 2 and len(gains[0]) == len(gains[1]):
        print(f"correlation of the two labels: {np.corrcoef(gains[0], gains[1])[0, 1]:.3f}")


def fitted_head(a, x=None, gain=None, valid=None):
    """The head of ``--checkpoint``, or one fitted (fit seed 1, as ``train.py``) on the first ``--fit`` labels."""
    if getattr(a, "checkpoint", None):
        import torch

        part = torch.load(a.checkpoint, map_location="cpu", weights_only=False)["departures"]
        head = D.make_head(part["arch"]["members"], part["arch"]["hidden"], D.FEATURE_SETS[part["features"]])
        head.load_state_dict(part["state"])
        return head.eval()
    return DT.fit_head(x[: a.fit], gain[: a.fit], valid[: a.fit], seed=1)


def truth(a) -> None:
    """The ``truth`` measurement (module docstring)."""
    from agents.players.keyrng import mix
    from agents.players.search import SearchAgent, true_outcomes
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    from agents.training.distill import ready_pair_decisions

    head, features, scope = None, D.FEATURES_V2 if a.scope == "ready" else D.FEATURES, a.scope
    if a.checkpoint:
        import torch

        part = torch.load(a.checkpoint, map_location="cpu", weights_only=False)["departures"]
        head, features, scope = fitted_head(a), part["features"], part.get("scope", "all")
    elif a.labels:
        lab = concat_labels([load_labels(f) for f in a.labels])
        head = fitted_head(a, *DT.label_gains(lab, a.variant))
        features, scope = D.FEATURES, "all"
    K, tables, label_prob = D.CANDIDATES, 64, 1.0 if a.scope == "ready" else 0.25
    search = SearchAgent(a.variant, None, candidates=K, worlds=a.worlds, seed=a.seed)
    player = search.player
    eng = Engine(a.variant, tables, options=search.opts, record_events=False)
    st, enc = eng.state, encoder_for(eng)
    roll = Engine(a.variant, tables * K, options=search.opts, record_events=False)
    feats = D.CandidateFeatures(a.variant, None, features)
    rng = np.random.default_rng([a.seed, 2121])  # the labeller's picks and world seeds (label_states)
    base = mix(np.asarray([a.seed], dtype=np.uint64))[0]
    eng.reset(seed=a.seed, table_ids=np.arange(tables), dealer=np.arange(tables) % eng.n)
    next_wall, count, hands, acts = tables, 0, 0, np.full(tables, -1, np.int64)
    sampled, true, xs, ncs = [], [], [], []
    t0 = time.process_time()
    while count < a.decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        player.decide(eng, live, out=acts)
        cand, ncand = player.candidates(eng, live, K)
        ok = (ncand >= 2) & (rng.random(len(live)) < label_prob)
        if a.scope == "ready" and ok.any():
            r = np.flatnonzero(ok)
            b, seats = live[r], st.actor[live[r]].astype(np.int64)
            ok[r] = ready_pair_decisions(st.hand[b, seats], st.n_melds[b, seats], cand[r], ncand[r])
        pick = np.flatnonzero(ok)[: a.decisions - count]
        if len(pick):
            b, seats = live[pick], st.actor[live[pick]].astype(np.int64)
            seeds = [int(s) for s in mix(base ^ np.arange(count, count + len(b), dtype=np.uint64))]
            vals = search._values(eng, live, cand, ncand, list(pick), seeds, a.worlds)
            c = cand[pick]
            money = true_outcomes(eng, b, seats, c, roll, player)  # padding plays the choice (ignored below)
            for i, v in enumerate(vals):
                g, t = np.full(K - 1, np.nan), np.full(K - 1, np.nan)
                g[: len(v) - 1] = (v[1:] - v[0]).mean(1)
                t[: len(v) - 1] = money[i, 1 : len(v)] - money[i, 0]
                sampled.append(g)
                true.append(t)
            ncs.append(ncand[pick])
            if head is not None or a.scope == "ready":
                xs.append(feats.pairwise(enc.encode(st, seats, b, engine=eng), eng.mask[b], c, ncand[pick]))
            count += len(b)
        eng.step(acts)
        next_wall, ended = eng.deal_next_walls(a.seed, next_wall)
        hands += ended
    G, T = np.array(sampled), np.array(true)
    ok = ~np.isnan(G)
    X = np.concatenate(xs) if xs else None
    if a.scope == "ready":
        ok &= D.in_scope(X, D.FEATURES_V2, "ready")
    per_seat_hand = count / (label_prob * n_players(a.variant) * max(hands, 1))
    d = G[ok] - T[ok]
    print(f"{a.variant}: {count:,} decisions of walls of seed {a.seed} ({hands:,} hands; scope {a.scope}), "
          f"{ok.sum():,} alternatives, {time.process_time() - t0:.0f} CPU s")
    print(f"  mean gain in {a.worlds} sampled worlds {G[ok].mean():+.4f}, in the true world {T[ok].mean():+.4f}: "
          f"difference {d.mean():+.4f} ± {ci95(d):.4f}; true gain exactly 0 for {100 * (T[ok] == 0).mean():.1f} %")
    if head is not None:
        pred, nc = D.predict(head, X), np.concatenate(ncs)
        pred = np.where(D.in_scope(X, features, scope), pred, -np.inf)
        for tau in a.tau:
            col = D.choose(pred, nc, tau)
            rows = np.flatnonzero(col > 0)
            g, t = G[rows, col[rows] - 1], T[rows, col[rows] - 1]
            t_all = np.where(col > 0, T[np.arange(len(col)), np.maximum(col - 1, 0)], 0.0)
            print(f"  head, tau {tau:g}: {len(rows):,} departures ({100 * len(rows) / len(col):.1f} %), sampled-world "
                  f"gain {g.mean():+.3f} ± {ci95(g):.3f}, true-world gain {t.mean():+.3f} ± {ci95(t):.3f} per departure; "
                  f"per seat-hand {g.sum() / len(col) * per_seat_hand:+.4f} sampled, "
                  f"{t_all.mean() * per_seat_hand:+.4f} ± {ci95(t_all) * per_seat_hand:.4f} true")


def calibration(a) -> None:
    """The ``calibration`` measurement (module docstring)."""
    if a.checkpoint and not a.held:
        raise SystemExit("calibration: --checkpoint needs --held label files (labels its head was not fitted on)")
    if not a.checkpoint and not (a.labels and a.fit):
        raise SystemExit("calibration: give --labels and --fit, or --checkpoint and --held")
    fit_set = concat_labels([load_labels(f) for f in a.labels]) if a.labels else None
    held = concat_labels([load_labels(f) for f in a.held]) if a.held else fit_set
    first = 0 if a.held else a.fit
    if not a.held and first >= len(held["cand"]):
        raise SystemExit(f"calibration: --fit {a.fit} leaves none of the {len(held['cand'])} labels held out")
    advisor = D.ADVISOR
    if a.checkpoint:
        import torch

        part = torch.load(a.checkpoint, map_location="cpu", weights_only=False)["departures"]
        a.features, advisor = part["features"], D.head_advisor(part)
        if part.get("scope", "all") == "win" and held["meta"].get("scope") != "win":
            raise SystemExit("calibration: a head of scope win reads win labels (agents.training.departures.win_labels)")
    hx, hg, hv = (v[first:] for v in DT.label_gains(held, a.variant, features=a.features, advisor=advisor))
    nc = np.asarray(held["ncand"])[first:]
    meta = held["meta"]
    seat_hands = meta.get("seat_hands") or meta["label_prob"] * n_players(a.variant) * max(int(meta["hands"]), 1)
    per_seat_hand = len(held["cand"]) / seat_hands
    fx = DT.label_gains(fit_set, a.variant, features=a.features) if fit_set is not None and not a.checkpoint else (None, None, None)
    sizes = [] if a.checkpoint else sorted(set(a.sizes or []) | {a.fit})
    runs = [("checkpoint", fitted_head(a))] if a.checkpoint else []
    for size in sizes:
        runs.append((f"fit {size:,}", DT.fit_head(fx[0][:size], fx[1][:size], fx[2][:size], seed=1)))
    print(f"{a.variant}: {len(hg):,} held-out decisions ({hv.sum():,} alternatives), "
          f"{per_seat_hand:.2f} labelled decisions per seat-hand")
    for name, head in runs:
        p = D.predict(head, hx)
        pv, gv = p[hv], hg[hv]
        print(f"{name}: held-out correlation of prediction and label {np.corrcoef(pv, gv)[0, 1]:.3f}")
        for lo, hi in zip(BINS[:-1], BINS[1:]):
            m = (pv > lo) & (pv <= hi)
            if m.sum() > 1:
                print(f"  predicted in ({lo:+g}, {hi:+g}]: {m.sum():6,} alternatives, mean label {gv[m].mean():+.3f} "
                      f"± {ci95(gv[m]):.3f}")
        m = pv > 0.1
        if m.sum() > 1:
            print(f"  predicted > 0.1: {m.sum():,} alternatives, mean label {gv[m].mean():+.3f} ± {ci95(gv[m]):.3f}")
        for r in DT.realized_gains(p, hg, nc, a.tau, per_seat_hand):
            print(f"  tau {r['tau']:g}: departs {100 * r['departs']:.1f} %, {r['gain_per_seat_hand']:+.3f} ± "
                  f"{r['ci95_per_seat_hand']:.3f} per seat-hand")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    n = sub.add_parser("noise", help="label noise and signal at several world counts")
    n.add_argument("--variant", default="gejiu")
    n.add_argument("--decisions", type=int, default=2000)
    n.add_argument("--seed", type=int, default=9100)
    n.add_argument("--worlds", type=int, nargs="+", default=[8, 32])
    t = sub.add_parser("truth", help="sampled-world against true-world gains")
    t.add_argument("--variant", default="gejiu")
    t.add_argument("--decisions", type=int, default=3000)
    t.add_argument("--seed", type=int, default=9300)
    t.add_argument("--worlds", type=int, default=8)
    t.add_argument("--labels", nargs="*", default=[], help="label files to fit a head on (its departures are read)")
    t.add_argument("--fit", type=int, default=0, help="labels to fit on (from the start of --labels)")
    t.add_argument("--tau", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    t.add_argument("--checkpoint", default=None, help="read this checkpoint's head instead of fitting one")
    t.add_argument("--scope", default="all", choices=["all", "ready"],
                   help="the decisions read: all (a quarter of them, as the labeller), or (Gejiu) every one where the "
                        "choice and another candidate leave a ready hand, and only the alternatives in that scope")
    c = sub.add_parser("calibration", help="mean label by predicted gain, held out")
    c.add_argument("--variant", default="gejiu")
    c.add_argument("--labels", nargs="*", default=[], help="label files to fit on")
    c.add_argument("--fit", type=int, default=0, help="labels to fit on; the rest of --labels is held out")
    c.add_argument("--sizes", type=int, nargs="*", default=[], help="further fit sizes (a learning curve)")
    c.add_argument("--checkpoint", default=None, help="read this checkpoint's head instead of fitting one")
    c.add_argument("--held", nargs="*", default=[], help="held-out label files (default: the rest of --labels)")
    c.add_argument("--tau", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.3, 0.5])
    c.add_argument("--features", default=D.FEATURES, choices=sorted(D.FEATURE_SETS),
                   help="what a fitted head reads (candidate-features-v2: Gejiu only; a checkpoint's head reads its own)")
    a = p.parse_args(argv)
    if a.what == "truth" and a.labels and a.fit < 2:
        p.error("truth: --labels needs --fit (how many of them to fit the head on)")
    if a.what == "truth" and a.scope == "ready" and (a.labels or a.variant != "gejiu"):
        p.error("truth: --scope ready reads Gejiu's wait values (candidate-features-v2): a --checkpoint head, not --labels")
    import torch

    torch.set_num_threads(1)
    {"noise": noise, "truth": truth, "calibration": calibration}[a.what](a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
