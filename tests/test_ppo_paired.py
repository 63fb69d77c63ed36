"""Paired PPO rollouts (``train.py --paired``, :meth:`agents.training.ppo.SeatRollouts.collect_paired`): twin tables
dealt the same wall play alike on common random draws until one decision branches; tiny networks and runs."""

from __future__ import annotations

import csv

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import train  # noqa: E402
from agents.players.policy import PolicyAgent, load_checkpoint  # noqa: E402
from agents.script_args import ArgsError  # noqa: E402
from agents.training.config import check_args  # noqa: E402
from agents.training.ppo import SeatRollouts  # noqa: E402
from mjenv.encoding.observation import ObservationEncoder  # noqa: E402
from mjenv.rules import load_rules  # noqa: E402

RULES = load_rules("kawuxing3")
SHAPE = ObservationEncoder(rules=RULES).shape


def _rollouts(rate: float, tables: int = 8, steps: int = 24, greedy: bool = False, floor: float = 0.02,
              branches: int = 2, samples: str = "first") -> SeatRollouts:
    torch.manual_seed(0)
    spec = {"variant": "kawuxing3", "options": RULES.options_dict(), "obs_shape": list(SHAPE), "channels": 4,
            "hidden": 8, "value_hidden": 4, "net": None, "blocks": 1, "advice": None, "num_tables": tables,
            "n_steps": steps, "seed": 3, "gamma": 0.995, "gae_lambda": 0.95, "reward_scale": 0.1,
            "opponents": ["random"], "opponent_weights": [1.0], "frozen_share": 0.0, "threads": 1,
            "precision": "fp32", "paired": True, "paired_rate": rate, "paired_min": floor,
            "paired_greedy": greedy, **({"paired_branches": branches} if branches != 2 else {}),
            **({"paired_samples": samples} if samples != "first" else {})}
    return SeatRollouts(spec, 0)


def _twins_alike(r: SeatRollouts) -> bool:
    st = r.engine.state
    return all(np.array_equal(getattr(st, k)[0::2], getattr(st, k)[1::2]) for k in ("phase", "actor", "money")) \
        and np.array_equal(r.engine.mask[0::2], r.engine.mask[1::2]) and np.array_equal(r._episode[0::2], r._episode[1::2])


def test_twins_that_never_branch_play_move_for_move_alike():
    r = _rollouts(rate=1e-12)
    for _ in range(3):
        out = r.collect()
        assert out["stats"]["samples"] == 0 and _twins_alike(r)
    assert out["stats"]["hands"] > 0  # hands ended and both twins were dealt the next wall together


def test_only_decisions_at_least_paired_min_from_certain_branch():
    """A near-uniform tiny policy is never within 0.99 of certain (1 − max π ≤ 1 − 1/legal actions): no branch."""
    r = _rollouts(rate=1.0, floor=0.99)
    out = r.collect()
    assert out["stats"]["samples"] == 0 and out["stats"]["hands"] > 0 and _twins_alike(r)


def test_branch_decisions_are_the_samples_and_every_branched_pair_finishes_in_its_rollout():
    r = _rollouts(rate=1.0)
    out = r.collect()
    k = out["stats"]["samples"]
    assert k > 0 and len(out["obs"]) == len(out["action"]) == len(out["advantage"]) == k
    assert out["obs"].shape[1] == SHAPE[0] * SHAPE[1]
    assert out["mask"][np.arange(k), out["action"]].all()  # the sampled actions were legal
    assert (out["mask"].sum(1) >= 2).all() and np.all(out["logp"] < 0)  # branches only where there is a choice
    # a branch's advantage is (1 - pi(a)) x (money on A - money on B) x 0.1: zero exactly where the twins ended alike
    assert np.isfinite(out["advantage"]).all() and (out["advantage"] != 0).any()
    assert out["terminal"].all() and (out["nxt"] == -1).all()
    # every branched pair was played to the end of its hand and dealt again: the twins are alike again
    assert (r.diverged == -1).all() and _twins_alike(r)
    stats = out["stats"]["paired"]
    assert stats["adv_std_paired"] >= 0 and stats["adv_std_mc"] >= 0


def test_paired_rollouts_are_seeded():
    a, b = _rollouts(rate=0.5).collect(), _rollouts(rate=0.5).collect()
    for key in ("action", "advantage", "ret", "episode", "seat"):
        assert np.array_equal(a[key], b[key])


def test_greedy_continuations_change_only_what_follows_a_branch():
    """``paired_greedy`` plays the most likely action after a branch: the first branch (its state, action and
    probability) is the sampled run's, the money that follows it is not."""
    a, b = _rollouts(rate=1.0).collect(), _rollouts(rate=1.0, greedy=True).collect()
    assert a["stats"]["samples"] and b["stats"]["samples"]
    for key in ("obs", "action", "logp", "episode", "seat"):
        assert np.array_equal(a[key][0], b[key][0])
    k = min(len(a["ret"]), len(b["ret"]))
    assert not (np.array_equal(a["ret"][:k], b["ret"][:k]) and np.array_equal(a["advantage"][:k], b["advantage"][:k]))


def test_groups_of_four_branch_into_distinct_legal_actions_and_deal_again_alike():
    """``paired_branches`` 4: each sample's tables played distinct legal actions, the first the sample's own; a group
    with fewer legal actions than tables plays them all (its other tables copy table 1); every group ends its hand in
    the rollout and all of its tables are dealt the next wall together."""
    r = _rollouts(rate=1.0, tables=12, branches=4)
    out = r.collect()
    k = out["stats"]["samples"]
    drawn = out["stats"]["paired"]["branch_action"]
    pis = out["stats"]["paired"]["branch_pi"]
    assert k > 0 and drawn.shape == (k, 4) and np.array_equal(drawn[:, 0], out["action"])
    m = (drawn >= 0).sum(1)
    assert np.array_equal(m, np.minimum(4, out["mask"].sum(1)))
    for row, mask, n in zip(drawn, out["mask"], m):
        assert (row[n:] == -1).all() and len(set(row[:n])) == n and mask[row[:n]].all()
    assert np.allclose(pis[:, 0], np.exp(out["logp"]), rtol=1e-5) and (pis[m < 4, 3] == 0).all()
    assert np.isfinite(out["advantage"]).all() and (out["advantage"] != 0).any()
    st = r.engine.state
    assert (r.diverged == -1).all()
    for j in range(1, 4):
        assert np.array_equal(st.money[j::4], st.money[0::4]) and np.array_equal(r._episode[j::4], r._episode[0::4])


def test_with_every_branch_a_sample_each_group_gives_one_row_per_branch():
    """``paired_samples = "all"``: the same rollout as ``"first"`` (same draws), with a row per branch ``x_j`` (its
    table, action and log-probability), the first rows the ``"first"`` samples' states and actions."""
    one, every = _rollouts(rate=1.0, tables=12, branches=3).collect(), _rollouts(rate=1.0, tables=12, branches=3, samples="all").collect()
    drawn = one["stats"]["paired"]["branch_action"]
    assert np.array_equal(drawn, every["stats"]["paired"]["branch_action"])
    m = (drawn >= 0).sum(1)
    assert every["stats"]["samples"] == len(every["action"]) == m.sum() > one["stats"]["samples"]
    first = np.concatenate([[0], np.cumsum(m)[:-1]])
    assert np.array_equal(every["action"], drawn[drawn >= 0]) and np.array_equal(every["obs"][first], one["obs"])
    assert np.array_equal(every["table"][first], one["table"]) and np.array_equal(every["ret"][first], one["ret"])
    assert np.allclose(np.exp(every["logp"]), every["stats"]["paired"]["branch_pi"][drawn >= 0], rtol=1e-5)
    assert every["mask"][np.arange(len(every["action"])), every["action"]].all() and np.isfinite(every["advantage"]).all()


TOY_POLICIES = [(0.5, 0.3, 0.15, 0.05), (0.6, 0.4), (0.25, 0.25, 0.2, 0.2, 0.1)]
TOY_Q = np.array([1.0, -2.0, 3.0, 0.5, -1.0])


def _ordered_draws(pi: np.ndarray, k: int):
    """Every ordered draw of ``m = min(k, actions)`` actions from ``pi`` without replacement, as a group of ``k``
    tables plays them: ``(actions, probability, ends [1, k], pis [1, k], drawn [1, k])``, each table's money the
    toy ``Q`` of its action (tables past ``m`` play as table 1)."""
    import itertools

    m = min(k, len(pi))
    for seq in itertools.permutations(range(len(pi)), m):
        prob = np.prod([pi[x] / (1.0 - pi[list(seq[:j])].sum()) for j, x in enumerate(seq)])
        ends, pis = np.full((1, k), TOY_Q[seq[0]]), np.zeros((1, k))
        ends[0, :m], pis[0, :m] = TOY_Q[list(seq)], pi[list(seq)]
        yield seq, prob, ends, pis, np.arange(k)[None] < m


@pytest.mark.parametrize("pi", TOY_POLICIES)
@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_branch_as_a_sample_gives_an_unbiased_gradient(pi, k):
    """Exactly, over every ordered draw without replacement, in logit space (``∇ log π(x) = e_x − π``):
    ``E[Σ_i adv_i (e_{x_i} − π)] = Σ_a π(a) (Q(a) − V) (e_a − π)`` (``all_branch_advantages``)."""
    from agents.training.paired import all_branch_advantages

    pi, q = np.array(pi), TOY_Q[: len(pi)]
    expect = np.zeros(len(pi))
    for seq, prob, ends, pis, drawn in _ordered_draws(pi, k):
        adv = all_branch_advantages(ends, pis, drawn)[0]
        expect += prob * sum(adv[i] * (np.eye(len(pi))[x] - pi) for i, x in enumerate(seq))
    assert np.allclose(expect, pi * (q - pi @ q))


@pytest.mark.parametrize("pi", TOY_POLICIES)
@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_several_branch_advantage_is_unbiased(pi, k):
    """Exactly, over every ordered draw without replacement: E[(1 − π(a)) (Q(a) − W) | a] = Q(a) − V for every a
    (``branch_difference``, the estimator of :func:`agents.training.paired.collect_paired`)."""
    from agents.training.paired import branch_difference

    pi, q = np.array(pi), TOY_Q[: len(pi)]
    expect = np.zeros(len(pi))
    for seq, prob, ends, pis, drawn in _ordered_draws(pi, k):
        expect[seq[0]] += prob / pi[seq[0]] * (1.0 - pi[seq[0]]) * branch_difference(ends, pis, drawn)[0]
    assert np.allclose(expect, q - pi @ q)


def test_paired_is_refused_with_frozen_seats_or_an_odd_table_count():
    for kw in ({"frozen_share": 0.25}, {"num_envs": 7}):
        with pytest.raises(ArgsError, match="--paired"):
            check_args(train.Args(paired=True, opponents=["random"], opponent_weights=[1.0], **kw))
    with pytest.raises(ArgsError, match="paired_rate"):
        check_args(train.Args(paired=True, paired_rate=1.5))
    for kw, match in (({"paired_branches": 1}, ">= 2"), ({"paired_branches": 9}, "<= 8"),
                      ({"paired_branches": 3, "num_envs": 8}, "not a multiple"),
                      ({"paired_branches": 3, "num_envs": 6, "paired": False}, "only with --paired"),
                      ({"paired_samples": "some"}, "not one of"), ({"paired_samples": "all", "paired": False}, "only with")):
        with pytest.raises(ArgsError, match=f"--paired_(branches|samples).*{match}"):
            check_args(train.Args(**{"paired": True, "opponents": ["random"], "opponent_weights": [1.0], **kw}))


@pytest.mark.parametrize("branches,samples", [(2, "first"), (4, "all")])
def test_a_short_paired_run_changes_the_policy(tmp_path, branches, samples):
    common = dict(channels=8, hidden=16, value_hidden=8, num_envs=8, n_steps=24, batch_size=32, n_epochs=2,
                  learning_rate=0.003, opponents=["random"], opponent_weights=[1.0], eval_every=0, final_eval_walls=1,
                  eval_opponents=["random"], out=str(tmp_path), progress=False, tensorboard=False, curve=False,
                  bc_rounds=0, threads=1, precision="fp32", seed=1)
    train.train(train.Args(total_timesteps=0, run_name="start", **common))
    start = tmp_path / "start" / "final.pt"
    summary = train.train(train.Args(total_timesteps=40, run_name="paired", paired=True, paired_rate=1.0, vf_coef=0.0,
                                     init_checkpoint=str(start), kl_coef=0.1, paired_branches=branches,
                                     paired_samples=samples, **common))
    assert summary["steps"] >= 40
    with open(tmp_path / "paired" / "progress.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(float(r["adv_std_mc"]) >= 0 for r in rows)
    before, after = load_checkpoint(start), load_checkpoint(tmp_path / "paired" / "final.pt")
    assert after["checksum"] != before["checksum"]
    obs = np.random.default_rng(0).random((64, *SHAPE), dtype=np.float32)
    mask = np.ones((64, 111), bool)
    assert not np.allclose(PolicyAgent(before).logits(obs, mask), PolicyAgent(after).logits(obs, mask))


def test_with_a_constant_learning_rate_a_save_is_the_shorter_runs_final(tmp_path):
    """``anneal_lr`` false: the checkpoint a run saves after N samples has the checksum of the final policy of the same
    run with ``total_timesteps`` N (how ``configs/train/ppo-paired-dh.toml`` ships a save of a longer run), and
    ``progress.csv`` is written at each save (a run stopped early keeps its CPU seconds)."""
    common = dict(channels=8, hidden=16, value_hidden=8, num_envs=8, n_steps=24, batch_size=32, n_epochs=2,
                  learning_rate=0.003, anneal_lr=False, opponents=["random"], opponent_weights=[1.0], eval_every=0,
                  final_eval_walls=1, eval_opponents=["random"], out=str(tmp_path), progress=False, tensorboard=False,
                  curve=False, bc_rounds=0, threads=1, precision="fp32", seed=1, paired=True, paired_rate=1.0,
                  vf_coef=0.0, kl_coef=0.1, save_every=1)
    train.train(train.Args(total_timesteps=0, run_name="start", **{**common, "paired": False}))
    start = str(tmp_path / "start" / "final.pt")
    train.train(train.Args(total_timesteps=60, run_name="long", init_checkpoint=start, **common))
    saves = sorted((tmp_path / "long" / "checkpoints").glob("step_*.pt"))
    assert len(saves) >= 2
    first = int(saves[0].stem.split("_")[1])
    train.train(train.Args(total_timesteps=first, run_name="short", init_checkpoint=start, **common))
    assert load_checkpoint(saves[0])["checksum"] == load_checkpoint(tmp_path / "short" / "final.pt")["checksum"]
    assert load_checkpoint(saves[1])["checksum"] != load_checkpoint(saves[0])["checksum"]
    with open(tmp_path / "short" / "checkpoints" / ".." / "progress.csv", encoding="utf-8") as f:
        assert [int(r["samples"]) for r in csv.DictReader(f)] == [first]


@pytest.mark.parametrize("name,config,start_name", [
    ("kawuxing3-network-ppo-paired.pt", "ppo-paired", "kawuxing3-network-hand.pt"),
    ("kawuxing3-network-ppo-dh2.pt", "ppo-paired-dh2", "kawuxing3-network-dh2.pt"),
])
def test_the_shipped_paired_ppo_checkpoints_load_and_play(name, config, start_name):
    """``kawuxing3-network-ppo-paired.pt`` (``python train.py --config ppo-paired``) and ``kawuxing3-network-ppo-dh2.pt``
    (``--config ppo-paired-dh2``: three tables a group, every branch a sample) are network-only, read the derived
    hand rows like the clones they started from, differ from them and play legal moves."""
    from agents import CHECKPOINT_DIR, make_agent
    from mjenv.engine.core import Engine
    from mjenv.encoding.observation import encode

    from agents.script_args import parse_args

    args, _ = parse_args(train.Args, ["--config", config], config_dir=train.CONFIG_DIR)
    assert args.paired and args.init_checkpoint == f"agents/checkpoints/{start_name}"
    ck = load_checkpoint(CHECKPOINT_DIR / name)
    start = load_checkpoint(CHECKPOINT_DIR / start_name)
    assert ck["network_only"] is True and ck["derived"] == start["derived"] == "mjenv-hand-v1"
    assert ck["arch"] == start["arch"] and ck["checksum"] != start["checksum"]
    assert ck["meta"]["config"] == config and ck["meta"]["algo"] == "allseat-ppo"
    agent = make_agent(f"network:{CHECKPOINT_DIR / name}", "kawuxing3")
    eng = Engine("kawuxing3", 2)
    eng.reset(seed=5)
    for _ in range(10):
        acts = agent.act(encode(eng, eng.state.actor), eng.mask)
        live = ~eng.done
        assert eng.mask[live, acts[live]].all()
        eng.step(np.where(live, acts, 0))
