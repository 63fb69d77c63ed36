"""How much of a decision's advantage noise the paired rollouts remove: the spread of the paired advantage
``(1 − π(a)) (G_A − G_B)`` against the Monte-Carlo return ``G_A`` at the same branch decisions.

Plays ``--rollouts`` paired rollouts (:func:`agents.training.paired.collect_paired`, the settings of
``configs/train/ppo-paired.toml`` by default) with the policy of ``--checkpoint`` in every seat, and prints, in money
× 0.1 (the trainer's reward scale): the standard deviation of the paired advantage, of the twins' money difference
``G_A − G_B`` and of ``G_A`` (the Monte-Carlo advantage with a constant baseline; a critic that explains 7–14 % of it,
docs/experiments/ppo.md, lowers it by at most 7 %), the share of pairs whose twins ended with the same money, and the
CPU cost of a branch sample.

    python bench/paired_advantages.py --checkpoint agents/checkpoints/kawuxing3-network-hand.pt
    python bench/paired_advantages.py --checkpoint agents/checkpoints/kawuxing3-network-hand.pt --greedy
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def main(argv=None) -> dict:
    """Measure the paired and the Monte-Carlo advantages' spread for one checkpoint; print and return them."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--rollouts", type=int, default=3)
    ap.add_argument("--tables", type=int, default=256)
    ap.add_argument("--steps", type=int, default=128)
    ap.add_argument("--rate", type=float, default=0.5)
    ap.add_argument("--min", type=float, default=0.02)
    ap.add_argument("--greedy", action="store_true", help="the twins play their most likely actions after a branch")
    ap.add_argument("--branches", type=int, default=2, help="paired_branches: the tables of a group (2: twins)")
    ap.add_argument("--seed", type=int, default=77)
    a = ap.parse_args(argv)
    import torch

    from agents.players.policy import load_checkpoint
    from agents.training.ppo import SeatRollouts
    from mjenv.rules import load_rules

    torch.set_num_threads(1)
    ck = load_checkpoint(a.checkpoint)
    rules = load_rules(ck["variant"], options=ck.get("options"))
    arch = ck["arch"]
    spec = {"variant": ck["variant"], "options": rules.options_dict(), "obs_shape": list(ck["obs_shape"]),
            "channels": arch["channels"], "hidden": arch["hidden"], "value_hidden": 64, "net": arch.get("net"),
            "blocks": arch.get("blocks", 4), "advice": None, "derived": ck.get("derived"), "num_tables": a.tables,
            "n_steps": a.steps, "seed": a.seed, "gamma": 0.995, "gae_lambda": 0.95, "reward_scale": 0.1,
            "opponents": ["random"], "opponent_weights": [1.0], "frozen_share": 0.0, "threads": 1, "precision": "fp32",
            "paired": True, "paired_rate": a.rate, "paired_min": a.min, "paired_greedy": a.greedy,
            "paired_branches": a.branches}
    r = SeatRollouts(spec, 0)
    r.net.trunk.load_state_dict(ck["trunk"])
    r.net.head.load_state_dict(ck["head"])
    outs = [r.collect() for _ in range(a.rollouts)]
    adv = np.concatenate([o["advantage"] for o in outs]).astype(np.float64)
    ret = np.concatenate([o["ret"] for o in outs]).astype(np.float64)
    pi = np.exp(np.concatenate([o["logp"] for o in outs]).astype(np.float64))
    diff = adv / (1.0 - pi)
    cpu = sum(o["stats"]["cpu"] for o in outs)
    g = np.concatenate([o["stats"]["paired"]["branch_money"] for o in outs]) * 0.1
    drawn = np.concatenate([o["stats"]["paired"]["branch_action"] for o in outs]) >= 0
    twin = (1.0 - pi) * (g[:, 0] - g[:, 1])  # the first two tables alone: the twins' estimator on the same samples
    bpi = np.concatenate([o["stats"]["paired"]["branch_pi"] for o in outs])
    sq = np.concatenate([o["stats"]["paired"]["pi_sq"] for o in outs])
    grad = logit_gradients(pi, sq, g, bpi, drawn, adv, twin)
    res = {"checkpoint": a.checkpoint, "greedy": a.greedy, "samples": len(adv),
           "pair_hands": sum(o["stats"]["hands"] for o in outs), "cpu_ms_per_sample": round(1000 * cpu / max(1, len(adv)), 2),
           "mean_pi_a": round(float(pi.mean()), 3), "alike_share": round(float(np.mean(diff == 0)), 3),
           "std_paired": round(float(adv.std()), 4), "std_diff": round(float(diff.std()), 4),
           "std_mc": round(float(ret.std()), 4), "variance_ratio": round(float(adv.var() / ret.var()), 3),
           "branches": a.branches, "mean_branches": round(float(drawn.sum(1).mean()), 3),
           "std_twins_same_samples": round(float(twin.std()), 4),
           "noise_var_removed": round(float(twin.var() - adv.var()), 5), **grad}
    print(f"{a.checkpoint}{' (greedy after the branch)' if a.greedy else ''}: {res['samples']} branch samples from "
          f"{res['pair_hands']} pair-hands, {res['cpu_ms_per_sample']} CPU ms a sample; mean pi(a) {res['mean_pi_a']}, "
          f"twins ended alike in {100 * res['alike_share']:.1f} %")
    print(f"  std (money x 0.1): paired advantage {res['std_paired']}, G_A - G_B {res['std_diff']}, Monte-Carlo G_A "
          f"{res['std_mc']}; variance ratio paired / Monte-Carlo {res['variance_ratio']}")
    if a.branches > 2:
        print(f"  {a.branches} branches ({res['mean_branches']} played on average): the twins' estimator on the same samples "
              f"{res['std_twins_same_samples']}, variance removed {res['noise_var_removed']}")
    print("  mean squared policy gradient in logit space (same expectation; lower = less noise): "
          + ", ".join(f"{k[5:]} {v}" for k, v in grad.items()))
    print(json.dumps(res))
    return res


def logit_gradients(pi, sq, g, bpi, drawn, adv, twin) -> dict:
    """The mean squared norm, over the branch samples, of the policy-gradient estimate in logit space
    (``∇_z log π(x) = e_x − π`` for a softmax over logits ``z``) of three estimators computed on the same groups, all
    unbiased for the same gradient ``Σ_a π(a) A(a) (e_a − π)``, so a lower value is less noise:

    * ``twins``: the sampled action with ``(1 − π(x_1)) (G_1 − G_2)`` (the first two tables alone);
    * ``first``: the sampled action with ``(1 − π(x_1)) (G_1 − W)`` (the trainer's estimate with every branch);
    * ``all``: every branch ``x_i`` as a sample, weighted ``π(x_i)`` (``i < m``) and ``R_m`` (the last), each with
      advantage ``G_i − c``, ``c`` the ``π``-weighted mean of ``G_1 … G_{m−1}`` (the sum-and-sample estimator of
      the gradient with a baseline that does not depend on the last draw: ``paired_samples = "all"``,
      :func:`agents.training.paired.all_branch_advantages`).

    ``pi`` ``π(x_1)``, ``sq`` ``Σ π²``, ``g [N, K]`` the branches' money, ``bpi [N, K]`` their ``π(x_j)``,
    ``drawn [N, K]`` which tables played their own branch; ``adv`` and ``twin`` the first two estimates (× 0.1)."""
    first_sq = lambda a: a**2 * (1.0 - 2.0 * pi + sq)  # noqa: E731  ||a (e_x1 − π)||²
    from agents.training.paired import all_branch_advantages

    a = all_branch_advantages(g, bpi, drawn)  # the samples' advantages (0 past m)
    S = a.sum(1)
    all_sq = (a**2).sum(1) - 2.0 * S * (a * bpi).sum(1) + S**2 * sq
    return {"grad_twins": round(float(first_sq(twin).mean()), 5), "grad_first": round(float(first_sq(adv).mean()), 5),
            "grad_all": round(float(all_sq.mean()), 5)}


if __name__ == "__main__":
    main()
