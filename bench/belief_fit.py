"""Fit the search's learned belief: a classifier of the true table's hidden hands against sampled worlds' hands.

At random decisions of the compiled improved player's self-play (``--policy``, every seat; walls of ``--seed``),
the acting seat's view gives one positive (the true table: every opponent's real concealed counts) and ``--neg``
negatives (worlds of :meth:`mjenv.engine.core.Engine.sample_worlds`, the uniform deal the search samples from).
The classifier (:class:`agents.players.searchbelief.LearnedBelief`: one MLP shared by the opponents, a world's logit
the sum over them) is fitted by logistic loss with the negatives weighted to balance the positives, so its logit
estimates log p(hands | view) / p_sampler(hands | view): the importance weight of a sampled world.  The last tenth
of the decisions is held out; the script prints its loss and how often the true hands outscore a sampled world.

    python bench/belief_fit.py --decisions 60000 --seed 7200 --out /work/learn-data/search14/belief.npz

With ``--target shanten`` it fits the readiness head instead (:class:`agents.players.searchbelief.ReadinessBelief`):
each opponent's public row at each decision, labelled with the shanten class of its true hand (ready or better,
1, 2, 3 or more), a softmax MLP; the last tenth held out.

    python bench/belief_fit.py --target shanten --decisions 80000 --seed 7300 --out readiness-7300.npz

With ``--target holdings`` it fits the holdings head (:class:`agents.players.searchbelief.HoldingsBelief`): per
opponent row, the share of each kind's unseen copies the opponent holds, by the binomial log-likelihood of its
true counts.

    python bench/belief_fit.py --target holdings --decisions 80000 --seed 7301 --epochs 6 --out holdings-7301.npz
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


def generate_shanten(a):
    """``(x [N * (n-1), F], y)``: each opponent's public row (the concealed block zero) at ``a.decisions`` decisions
    and the shanten class of its true hand (``--target shanten``: y [N * (n-1)]) or its true concealed counts
    (``--target holdings``: y [N * (n-1), 34])."""
    from agents.players.fasthead import FastHeadPlayer
    from agents.players.searchbelief import public_features, shanten_class
    from mjenv.engine import state as S
    from mjenv.engine.core import Engine

    head = FastHeadPlayer(a.policy)
    B = 128
    eng = Engine("kawuxing3", B, options=head.opts, record_events=False)
    st = eng.state
    eng.reset(seed=a.seed, table_ids=np.arange(B), dealer=np.arange(B) % eng.n)
    rng = np.random.default_rng([a.seed, 7301])
    xs, ys = [], []
    nxt, count = B, 0
    while count < a.decisions:
        live = np.flatnonzero(st.phase != S.DONE)
        acts = head.decide(eng, live)
        for b in live[rng.random(len(live)) < a.prob]:
            s = int(st.actor[b])
            opp = [(s + 1 + i) % eng.n for i in range(eng.n - 1)]
            xs.append(public_features(eng, int(b), s))
            ys.append(shanten_class(st.hand[b, opp], st.n_melds[b, opp]) if a.target == "shanten" else
                      st.hand[b, opp].astype(np.int8))
            count += 1
        eng.step(acts)
        nxt, _ = eng.deal_next_walls(a.seed, nxt)
    x, y = np.concatenate(xs[: a.decisions]), np.concatenate(ys[: a.decisions])
    return x, y


def fit_shanten(a, x, y):
    """Fit the readiness head (softmax MLP, torch, one thread) on the first nine tenths; prints the held-out loss
    against the class frequencies' and its accuracy; returns the layers as numpy pairs."""
    import torch

    from agents.players.searchbelief import SHANTEN_CLASSES

    torch.set_num_threads(1)
    torch.manual_seed(a.fit_seed)
    N, F = x.shape
    cut = int(N * 0.9)
    net = torch.nn.Sequential(torch.nn.Linear(F, a.hidden), torch.nn.ReLU(), torch.nn.Linear(a.hidden, 64),
                              torch.nn.ReLU(), torch.nn.Linear(64, SHANTEN_CLASSES))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    X, Y = torch.from_numpy(x), torch.from_numpy(y)
    freq = np.bincount(y[:cut], minlength=SHANTEN_CLASSES) / cut
    prior = float(-np.log(freq[y[cut:]]).mean())
    ce = torch.nn.functional.cross_entropy
    for ep in range(a.epochs):
        perm = torch.randperm(cut)
        tot = 0.0
        for i in range(0, cut, 256):
            idx = perm[i : i + 256]
            loss = ce(net(X[idx]), Y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
        with torch.no_grad():
            out = net(X[cut:])
            hl = float(ce(out, Y[cut:]))
            acc = float((out.argmax(1) == Y[cut:]).float().mean())
            ready = out.softmax(1)[:, 0].numpy()
        yt = y[cut:] == 0
        print(f"epoch {ep + 1}: train loss {tot / cut:.4f}, held-out loss {hl:.4f} (class frequencies {prior:.4f}), "
              f"accuracy {100 * acc:.1f} %; ready: {100 * yt.mean():.1f} % of held-out rows, mean p(ready) "
              f"{ready[yt].mean():.3f} where ready, {ready[~yt].mean():.3f} where not", flush=True)
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in lin]


def fit_holdings(a, x, y):
    """Fit the holdings head (MLP, torch, one thread): per opponent row and kind, the share ``p`` of the kind's
    unseen copies (``x[:, 136:170] * 4``) the opponent holds, by the binomial log-likelihood of its true count
    ``y``; prints the held-out loss against the sampler's own share (the opponent's tiles over the unseen ones)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(a.fit_seed)
    N, F = x.shape
    cut = int(N * 0.9)
    net = torch.nn.Sequential(torch.nn.Linear(F, a.hidden), torch.nn.ReLU(), torch.nn.Linear(a.hidden, 128),
                              torch.nn.ReLU(), torch.nn.Linear(128, 34))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    X = torch.from_numpy(x)
    H = torch.from_numpy(y.astype(np.float32))
    U = torch.round(X[:, 136:170] * 4)
    H = torch.minimum(H, U)

    def nll(logit, h, u):
        return -(h * torch.nn.functional.logsigmoid(logit) + (u - h) * torch.nn.functional.logsigmoid(-logit)).sum(1).mean()

    with torch.no_grad():
        share = (U[cut:] * 0 + (H[cut:].sum(1, keepdim=True) / U[cut:].sum(1, keepdim=True).clamp(min=1))).clamp(1e-4, 1 - 1e-4)
        base = float(nll(torch.log(share / (1 - share)), H[cut:], U[cut:]))
    for ep in range(a.epochs):
        perm = torch.randperm(cut)
        tot = 0.0
        for i in range(0, cut, 256):
            idx = perm[i : i + 256]
            loss = nll(net(X[idx]), H[idx], U[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
        with torch.no_grad():
            hl = float(nll(net(X[cut:]), H[cut:], U[cut:]))
        print(f"epoch {ep + 1}: train loss {tot / cut:.4f}, held-out loss {hl:.4f} (the sampler's share {base:.4f}) "
              f"per opponent row", flush=True)
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in lin]


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
    p.add_argument("--policy", default="agents/checkpoints/kawuxing3-long.pt")
    p.add_argument("--decisions", type=int, default=60000)
    p.add_argument("--seed", type=int, default=7200)
    p.add_argument("--prob", type=float, default=0.2)
    p.add_argument("--neg", type=int, default=3)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--fit_seed", type=int, default=1)
    p.add_argument("--data", default=None, help="cache the feature rows here (.npz): read if it exists")
    p.add_argument("--out", required=True)
    p.add_argument("--target", default="hands", choices=["hands", "shanten", "holdings"],
                   help="hands: the classifier of true against sampled hands; shanten: the readiness head; holdings: "
                        "the head of each opponent's share of each kind's unseen copies")
    a = p.parse_args(argv)
    t0 = time.process_time()
    if a.target in ("shanten", "holdings"):
        if a.data and Path(a.data).exists():
            z = np.load(a.data)
            x, y = z["x"], z["y"]
        else:
            x, y = generate_shanten(a)
            if a.data:
                np.savez_compressed(a.data, x=x, y=y)
        print(f"{len(x):,} opponent rows, {time.process_time() - t0:.0f} CPU s", flush=True)
        layers = (fit_shanten if a.target == "shanten" else fit_holdings)(a, x, y)
        np.savez(a.out, depth=len(layers), **{f"w{i}": w for i, (w, _) in enumerate(layers)},
                 **{f"b{i}": b for i, (_, b) in enumerate(layers)}, seed=a.seed, decisions=a.decisions, kind=a.target)
        print(f"-> {a.out} ({time.process_time() - t0:.0f} CPU s)")
        return 0
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
