"""What qfit's labels cost with each rollout player: the compiled improved player of a checkpoint against the
network itself (:meth:`agents.players.policy.PolicyAgent.rollout`, ``exit label --rollout_network``).

Both label the same ``--decisions`` decisions of ``--policy``'s own states (hands-true worlds, ``--worlds`` a
candidate, ``--policy_candidates`` of the policy's own moves beside the compiled shortlist; label seed ``--seed``)
with :func:`agents.training.distill.label_states`, and print CPU seconds per chunk of 5,000 labelled decisions and
their ratio.  One torch thread; CPU time (``time.process_time``) of this process, so the two compare within one run.

    python bench/rollout_labels.py --decisions 400
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's agents, not an installed copy

CHECKPOINTS = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"


def main(argv=None) -> int:
    """Measure and print (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default=str(CHECKPOINTS / "kawuxing3-network-qfit3.pt"),
                    help="network-only checkpoint whose states are labelled and whose network rolls out")
    ap.add_argument("--compiled", default=str(CHECKPOINTS / "kawuxing3-long.pt"),
                    help="checkpoint whose compiled improved player is the other rollout player")
    ap.add_argument("--decisions", type=int, default=400)
    ap.add_argument("--worlds", type=int, default=16)
    ap.add_argument("--policy_candidates", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7999)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from agents.players.fasthead import FastHeadPlayer
    from agents.players.policy import PolicyAgent
    from agents.training.distill import label_states

    policy = PolicyAgent(args.policy, "kawuxing3")
    seconds = {}
    for name, roller in (("compiled " + Path(args.compiled).stem, FastHeadPlayer(args.compiled, "kawuxing3")),
                         ("network " + Path(args.policy).stem, PolicyAgent(args.policy, "kawuxing3"))):
        cpu0 = time.process_time()
        label_states("kawuxing3", decisions=args.decisions, tables=64, worlds=args.worlds, candidates=3,
                     seed=args.seed, policy=policy, rollout_player=roller, world_source="hands_true",
                     policy_candidates=args.policy_candidates)
        seconds[name] = time.process_time() - cpu0
        print(f"{name:40s} {args.decisions} labelled decisions in {seconds[name]:7.1f} CPU s = "
              f"{seconds[name] / args.decisions * 5000:6.0f} CPU s a chunk of 5,000", flush=True)
    a, b = seconds.values()
    print(f"network / compiled: {b / a:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
