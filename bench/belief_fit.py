"""Fit the search's learned belief: a classifier of the true table's hidden hands against sampled worlds' hands.

At random decisions of the compiled improved player's self-play (``--policy``, every seat; walls of ``--seed``),
the acting seat's view gives one positive (the true table: every opponent's real concealed counts) and ``--neg``
negatives (worlds of :meth:`mjenv.engine.core.Engine.sample_worlds`, the uniform deal the search samples from).
The classifier (:class:`agents.players.searchbelief.LearnedBelief`: one MLP shared by the opponents, a world's logit
the sum over them) is fitted by logistic loss with the negatives weighted to balance the positives, so its logit
estimates log p(hands | view) / p_sampler(hands | view): the importance weight of a sampled world.  The last tenth
of the decisions is held out; the script prints its loss and how often the true hands outscore a sampled world.

    python bench/belief_fit.py --decisions 60000 --seed 7200 --out /work/learn-data/search14/belief.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def generate(a):
    """``(pos [N, n-1, F], neg [N, J, n-1, F])`` float32 feature rows of ``a.decisions`` decisions."""
    from agents.players.fasthead import FastHeadPlayer
    from agents.players.searchbelief import public_features, world_features
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    head = FastHeadPlayer(a.policy)
    B = 128
    eng = Engine("kawuxing3", B, options=head.opts, record_events=False)
    st = eng.state
    eng.reset(seed=a.seed, table_ids=np.arange(B), dealer=np.arange(B) % eng.n)
    rng = np.random.default_rng([a.seed, 7201])
    pos, neg = [], []
    nxt, count, worlds = B, 0, None
    while count < a.decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        acts = head.decide(eng, live)
        for b in live[rng.random(len(live)) < a.prob]:
            s = int(st.actor[b])
            try:
                worlds = eng.sample_worlds(int(b), s, a.neg, seed=int(rng.integers(2**62)), out=worlds)
            except RuntimeError:
                continue
            pub = public_features(eng, int(b), s)
            pos.append(world_features(pub, eng, [b], s)[0])
            neg.append(world_features(pub, worlds, np.arange(a.neg), s))
            count += 1
        eng.step(acts)
        nxt, _ = eng.deal_next_walls(a.seed, nxt)
    return np.stack(pos)[: a.decisions], np.stack(neg)[: a.decisions]


def fit(a, pos, neg):
    """Fit the MLP (torch, one thread); returns its layers as numpy ``(w [in, out], b [out])`` pairs."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(a.fit_seed)
    N, J = neg.shape[:2]
    cut = int(N * 0.9)
    F = pos.shape[-1]
    net = torch.nn.Sequential(torch.nn.Linear(F, a.hidden), torch.nn.ReLU(), torch.nn.Linear(a.hidden, 64),
                              torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)

    def logit(x):  # [M, n-1, F] -> [M]
        return net(x).squeeze(-1).sum(-1)

    P = torch.from_numpy(pos)
    Q = torch.from_numpy(neg)
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def loss_of(idx):
        lp = logit(P[idx])
        lq = logit(Q[idx].reshape(-1, *Q.shape[2:]))
        return (bce(lp, torch.ones_like(lp)) + bce(lq, torch.zeros_like(lq))) / 2, lp, lq.reshape(len(idx), J)

    for ep in range(a.epochs):
        perm = torch.randperm(cut)
        tot = 0.0
        for i in range(0, cut, 256):
            idx = perm[i : i + 256]
            loss, _, _ = loss_of(idx)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
        with torch.no_grad():
            hl, lp, lq = loss_of(torch.arange(cut, N))
            wins = float((lp[:, None] > lq).float().mean())
        print(f"epoch {ep + 1}: train loss {tot / cut:.4f}, held-out loss {float(hl):.4f} (chance 0.6931), "
              f"true hands outscore a sampled world {100 * wins:.1f} %", flush=True)
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in lin]


def main(argv=None) -> int:
    """Command line (module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="agents/checkpoints/kawuxing3-default.pt")
    p.add_argument("--decisions", type=int, default=60000)
    p.add_argument("--seed", type=int, default=7200)
    p.add_argument("--prob", type=float, default=0.2)
    p.add_argument("--neg", type=int, default=3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--fit_seed", type=int, default=1)
    p.add_argument("--data", default=None, help="cache the feature rows here (.npz): read if it exists")
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    t0 = time.process_time()
    if a.data and Path(a.data).exists():
        z = np.load(a.data)
        pos, neg = z["pos"], z["neg"]
    else:
        pos, neg = generate(a)
        if a.data:
            np.savez_compressed(a.data, pos=pos, neg=neg)
    print(f"{len(pos):,} decisions, {neg.shape[1]} sampled worlds each, {time.process_time() - t0:.0f} CPU s",
          flush=True)
    layers = fit(a, pos, neg)
    np.savez(a.out, depth=len(layers), **{f"w{i}": w for i, (w, _) in enumerate(layers)},
             **{f"b{i}": b for i, (_, b) in enumerate(layers)}, seed=a.seed, decisions=len(pos))
    print(f"-> {a.out} ({time.process_time() - t0:.0f} CPU s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
