"""Trained samples per CPU second of train.py's two trainers, with the same network, in one run.

Both trainers play self-play Kawuxing (default rules) with ``train.py``'s network (``--channels``, ``--hidden``,
``--value_hidden``; no advice features, no cloning) on ``--tables`` engine tables, ``--n_steps`` steps per
table per rollout, 4 PPO epochs in minibatches of 1,024, and train ``--samples`` samples each:

* ``allseat`` — ``--trainer allseat`` at train.py's default precision (``auto``: bf16, the trunk under bfloat16
  autocast, on a CPU with native bfloat16 — AVX512-BF16 or AMX —, else fp32; ``--precision`` picks another): one
  shared policy samples every seat's decision, and every decision is a trained sample (``frozen_share`` 0);
* ``sb3`` — ``--trainer sb3``: sb3-contrib ``MaskablePPO`` (always float32), one learner seat per table, the other
  seats played by a frozen snapshot of the policy (``--opponents self``): their decisions cost a forward pass each
  and are not trained on;
* ``allseat_fp32`` (or ``allseat_bf16``) — the all-seat trainer at the other precision, for comparison: measured
  when ``allseat`` runs bf16 (or runs fp32 on a CPU with native bfloat16), unless ``--no-compare``.

Then the same jobs once more with the PPO update switched off (``MaskablePPO.train`` and
:func:`agents.training.ppo.ppo_update` replaced by no-ops): samples *collected* per CPU second, where the all-seat
trainer's advantage lies (the update costs the same per sample in both, and it is most of the all-seat
trainer's time).

A sample is one decision the PPO update trains on.  The figure is samples / CPU seconds of the training loop
(``time.process_time`` of this process, which plays, encodes, runs the network and updates it: the loop's
``cpu_seconds`` in train.py's summary; the final evaluation and the warm-up are outside it).  Each trainer first
runs one small warm-up job (compiled game core loaded, torch initialised), then ``--passes`` measured jobs,
alternating; the medians are reported, and each pass's ratio (all-seat over the SB3 job of the same pass) gives
the spread.  Torch uses ``--threads`` threads in all.  The last line printed is one JSON object ``{"allseat": …,
"sb3": …, "ratio": …, "ratio_passes": [min, max], "precision": "bf16"|"fp32", "allseat_fp32": …, "ratio_fp32": …,
"ratio_fp32_passes": …, "rollout_allseat": …, "rollout_sb3": …, "rollout_allseat_fp32": …, "rollout_ratio": …}``
(samples per CPU second; ratio = allseat / sb3 at the same PPO settings, allseat at ``precision``, sb3 in float32;
ratio_fp32 = allseat_fp32 / sb3; the comparison keys are ``*_bf16`` when the other precision is bf16)::

    python bench/train_throughput.py                      # 32,768 samples each, 1 pass (≈ 1.5 CPU minutes)
    python bench/train_throughput.py --samples 65536 --passes 3
    python bench/train_throughput.py --precision fp32 --no-compare   # the float32 all-seat trainer against SB3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import train  # noqa: E402


def job(trainer: str, samples: int, a: argparse.Namespace, out: str, name: str, precision: str) -> dict:
    """One ``train.train`` run of ``trainer``; returns its samples, loop CPU seconds and samples per CPU second."""
    args = train.Args(precision=precision,
        trainer=trainer, total_timesteps=samples, num_envs=a.tables, n_steps=a.n_steps, batch_size=1024, n_epochs=4,
        channels=a.channels, hidden=a.hidden, value_hidden=a.value_hidden, opponents=["self"], opponent_weights=[1.0],
        frozen_share=0.0, snapshot_every=10**12, save_every=10**12, eval_every=0, final_eval_walls=1,
        eval_opponents=["random"], bc_rounds=0, advice=False, threads=a.threads, out=out, run_name=name,
        progress=False, tensorboard=False, curve=False, seed=a.seed)
    summary = train.train(args)
    return {"samples": summary["steps"], "cpu": summary["cpu_seconds"], "rate": summary["steps"] / summary["cpu_seconds"]}


def rollout_only(trainer: str, samples: int, a: argparse.Namespace, out: str, precision: str) -> dict:
    """:func:`job` with the PPO update replaced by a no-op: the trainer's collection cost alone."""
    import sb3_contrib

    import agents.training.ppo as selfplay

    nothing = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_fraction": 0.0}
    saved = sb3_contrib.MaskablePPO.train, selfplay.ppo_update
    sb3_contrib.MaskablePPO.train = lambda self: None
    selfplay.ppo_update = lambda *args, **kw: dict(nothing)
    try:
        return job(trainer, samples, a, out, f"rollout-{trainer}-{precision}", precision)
    finally:
        sb3_contrib.MaskablePPO.train, selfplay.ppo_update = saved


def main(argv: list[str] | None = None) -> dict:
    """Measure both trainers (see the module docstring); prints a table and, last, the JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=32_768, help="samples trained per measured job")
    p.add_argument("--passes", type=int, default=1, help="measured jobs per trainer (medians reported)")
    p.add_argument("--tables", type=int, default=64, help="engine tables (num_envs)")
    p.add_argument("--n_steps", type=int, default=128, help="steps per table per rollout")
    p.add_argument("--channels", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--value_hidden", type=int, default=64)
    p.add_argument("--threads", type=int, default=1, help="torch threads (both trainers)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--precision", choices=("auto", "fp32", "bf16"), default=train.Args().precision,
                   help="precision of the all-seat trainer's allseat row (default: train.py's, auto)")
    p.add_argument("--no-compare", dest="compare", action="store_false",
                   help="skip the all-seat trainer at the other precision")
    a = p.parse_args(argv)
    for name, value in (("--samples", a.samples), ("--passes", a.passes), ("--tables", a.tables), ("--n_steps", a.n_steps)):
        if value < 1:
            p.error(f"{name} must be >= 1, got {value}")
    if a.tables * a.n_steps < 1024:
        p.error(f"--tables × --n_steps must be at least the minibatch of 1,024, got {a.tables * a.n_steps}")
    from agents.training.ppo import bf16_native, resolve_precision

    if a.precision == "bf16" and not bf16_native():
        p.error("--precision bf16: this CPU has no native bfloat16 (AVX512-BF16 or AMX)")
    used = resolve_precision(a.precision, "allseat")
    other = "fp32" if used == "bf16" else "bf16"
    # name: (trainer, precision); the same PPO settings and network for all
    kinds = {"allseat": ("allseat", used), "sb3": ("sb3", "fp32")}
    if a.compare and (other == "fp32" or bf16_native()):
        kinds[f"allseat_{other}"] = ("allseat", other)
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    rows = []
    with tempfile.TemporaryDirectory() as out:
        for name, (trainer, precision) in kinds.items():  # warm-up: compiled code, torch, first allocations
            job(trainer, 1024, a, out, f"warm-{name}", precision)
        for i in range(a.passes):
            for name, (trainer, precision) in kinds.items():
                r = job(trainer, a.samples, a, out, f"{name}-{i}", precision)
                rates[name].append(r["rate"])
                rows.append((name, i, r))
        collect = {name: rollout_only(trainer, a.samples, a, out, precision) for name, (trainer, precision) in kinds.items()}
    print(f"{'trainer':<13} {'pass':>4} {'samples':>9} {'CPU s':>8} {'samples/CPU s':>14} {'ratio to sb3':>13}")
    for name, i, r in rows:
        print(f"{name:<13} {i:>4} {r['samples']:>9,} {r['cpu']:>8.1f} {r['rate']:>14,.0f} {r['rate'] / rates['sb3'][i]:>13.2f}")
    for name, r in collect.items():
        print(f"{name:<13} {'roll':>4} {r['samples']:>9,} {r['cpu']:>8.1f} {r['rate']:>14,.0f}   (no update)")
    result = {k: round(statistics.median(v), 1) for k, v in rates.items()}
    result["precision"] = used
    for name in kinds:
        if name != "sb3":
            suffix = name[len("allseat"):]
            result[f"ratio{suffix}"] = round(result[name] / result["sb3"], 2)
            per_pass = [x / y for x, y in zip(rates[name], rates["sb3"])]
            result[f"ratio{suffix}_passes"] = [round(min(per_pass), 2), round(max(per_pass), 2)]
    for name, r in collect.items():
        result[f"rollout_{name}"] = round(r["rate"], 1)
    result["rollout_ratio"] = round(result["rollout_allseat"] / result["rollout_sb3"], 2)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
