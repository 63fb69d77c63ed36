"""Tests of tournaments that do not depend on how they are split: keyed agent randomness (agents/players/keyrng.py),
shards and their merge (agents/tournament/distributed.py), and ``evaluate.py --ray`` against the local run on a local
Ray with 2 workers (skipped when Ray is not installed: ``pip install -e .[ray]``)."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import evaluate
from agents import make_agent, shipped_checkpoints
from agents.tournament.arena import play_duplicate, seatings
from agents.tournament.distributed import Job, merge_shards, pack_agents, plan_shards, play_shard, shard_count, unpack_agents
from agents.players.keyrng import decision_keys, seating_code, table_keys, uniforms

ROOT = Path(__file__).resolve().parent.parent
HAVE_RAY = importlib.util.find_spec("ray") is not None
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _hands(res) -> list[tuple]:
    return [(r.game, r.wall, r.seating, r.deltas, r.how, r.winners, r.values, r.fans, r.discards, r.wall_digest)
            for r in res.records]


def _agents(policy: bool = False) -> list:
    agents = [make_agent("heuristic"), make_agent("random", seed=11)]
    if policy:
        agents.append(make_agent(str(shipped_checkpoints("kawuxing3")[0]), deterministic=False, seed=5))
    return agents


# ------------------------------------------------------------------------------------------ keyed randomness


def test_keyed_uniforms_are_a_function_of_key_and_salt():
    keys = decision_keys(table_keys(7, [0, 0, 1], [seating_code((0, 1, 1))] * 3), [0, 1, 0])
    assert len(set(keys.tolist())) == 3
    u = uniforms(keys, 111, salt=3)
    assert u.shape == (3, 111) and 0 <= u.min() and u.max() < 1
    np.testing.assert_array_equal(u[1:2], uniforms(keys[1:2], 111, salt=3))  # a row does not see its batch
    assert not np.array_equal(u, uniforms(keys, 111, salt=4))
    big = uniforms(np.arange(2000, dtype=np.uint64), 111).ravel()
    assert abs(big.mean() - 0.5) < 0.005 and np.histogram(big, 10, (0, 1))[0].min() > 0.09 * len(big)


def test_the_keyed_random_choice_is_legal_uniform_and_per_row():
    rng = np.random.default_rng(0)
    mask = rng.random((4000, 111)) < 0.05
    mask[:, 7] = True
    mask[3] = False
    keys = decision_keys(table_keys(1, np.arange(4000), np.zeros(4000)), np.zeros(4000))
    agent = make_agent("random", seed=9)
    with pytest.raises(ValueError, match="at least one legal action"):
        agent.act(None, mask, keys=keys)
    mask[3, 50] = True
    out = agent.act(None, mask, keys=keys)
    assert mask[np.arange(4000), out].all()
    np.testing.assert_array_equal(out[100:200], agent.act(None, mask[100:200], keys=keys[100:200]))
    assert (out != make_agent("random", seed=10).act(None, mask, keys=keys)).mean() > 0.5
    # uniform: among rows with exactly c legal actions, action 7 is chosen about 1/c of the time
    c = mask.sum(1)
    for k in (5, 6, 7):
        rows = c == k
        assert abs((out[rows] == 7).mean() - 1 / k) < 4 * np.sqrt(1 / k / rows.sum())
    with pytest.raises(ValueError, match="keys"):
        agent.act(None, mask, keys=keys[:10])


def test_hands_do_not_depend_on_the_batch_size():
    a = play_duplicate(_agents(), walls=3, seed=4, batch_size=5)
    b = play_duplicate(_agents(), walls=3, seed=4, batch_size=64)
    assert _hands(a) == _hands(b)


@pytest.mark.skipif(not HAVE_TORCH, reason="a sampling checkpoint agent needs torch (pip install -e .[train])")
def test_a_sampling_checkpoint_agent_does_not_depend_on_the_batch_size():
    a = play_duplicate(_agents(policy=True), walls=1, seed=4, batch_size=4)
    b = play_duplicate(_agents(policy=True), walls=1, seed=4, batch_size=32)
    assert _hands(a) == _hands(b)


# ------------------------------------------------------------------------------------------ shards


@pytest.mark.parametrize("walls, n_seat, k", [(10, 6, 3), (3, 6, 7), (1, 24, 5), (5, 1, 9), (4, 6, 1)])
def test_shards_cover_every_hand_once(walls, n_seat, k):
    shards = plan_shards(walls, n_seat, k, first_wall=100)
    hands = Counter((s.first_wall + w, q) for s in shards for w in range(s.walls) for q in range(s.seat_start, s.seat_stop))
    assert set(hands.values()) == {1} and len(hands) == walls * n_seat
    assert {w for w, _ in hands} == set(range(100, 100 + walls))
    k = min(k, walls * n_seat)
    assert len(shards) == k if k <= walls else k <= len(shards) < k + walls
    sizes = [s.hands for s in shards]
    assert min(sizes) >= 1 and max(sizes) <= 2 * min(sizes) + n_seat  # near-equal


def test_shard_count_keeps_workers_busy_and_batches_full():
    assert shard_count(1800, 2, 1, 256) == 2  # too few hands for full shards: one per worker
    assert shard_count(12000, 2, 1, 256) == 8  # many hands: up to 4 shards per worker
    assert shard_count(6000, 2, 1, 256) == 6  # whole rounds of shards: 5 would leave a worker idle
    assert shard_count(1800, 2, 4, 256) == 1  # four compare configurations already give 4 shards
    assert shard_count(3, 8, 1, 256) == 3


def test_shards_played_apart_and_merged_equal_one_local_run(tmp_path):
    local = play_duplicate(_agents(), walls=3, seed=8, first_wall=5, batch_size=16, replay_dir=tmp_path / "a", n_replays=4,
                           config="tournament")
    job = Job("tournament", [], "kawuxing3", None, walls=3, seed=8, first_wall=5, batch_size=16,
              replay_dir=tmp_path / "b", n_replays=4)
    shards = plan_shards(3, len(seatings(2, 3)), 5, first_wall=5)  # single walls split by seatings
    parts = [play_shard(_agents(), job, s, want_replays=s.first_wall == 5) for s in reversed(shards)]
    merged = merge_shards(job, ["heuristic", "random"], parts, seconds=1.0)
    assert _hands(merged) == _hands(local)
    assert merged.decisions == local.decisions
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir()) == [f"hand_{g:05d}.jsonl" for g in range(4)]
    for n in names:
        assert (tmp_path / "a" / n).read_text(encoding="utf-8") == (tmp_path / "b" / n).read_text(encoding="utf-8")


def test_a_missing_shard_is_an_error():
    job = Job("t", [], "kawuxing3", None, walls=2, seed=1)
    part = play_shard(_agents(), job, plan_shards(2, 6, 2)[0])
    with pytest.raises(AssertionError, match="expected 12"):
        merge_shards(job, ["heuristic", "random"], [part], seconds=1.0)


@pytest.mark.skipif(not HAVE_TORCH, reason="checkpoint agents need torch (pip install -e .[train])")
def test_checkpoints_travel_as_bytes_not_paths():
    store: list[bytes] = []

    def put(data: bytes) -> int:
        store.append(data)
        return len(store) - 1

    agents = _agents(policy=True) + [make_agent(str(shipped_checkpoints("kawuxing3")[0]), seed=6)]
    packed = pack_agents(agents, put)
    assert len(store) == 1 and isinstance(store[0], bytes)  # one shared checkpoint, put once
    assert [p[0] for p in packed] == ["object", "object", "policy", "policy"]
    assert not any(isinstance(x, (str, Path)) and str(x).endswith(".pt") for p in packed for x in p)
    rebuilt = unpack_agents(packed, store.__getitem__)
    assert [a.name for a in rebuilt] == [a.name for a in agents]
    a = play_duplicate(agents[1:3], walls=1, seed=2)
    b = play_duplicate(rebuilt[1:3], walls=1, seed=2)
    assert _hands(a) == _hands(b)


# ------------------------------------------------------------------------------------------ evaluate.py


@pytest.mark.slow
def test_the_default_run_does_not_import_ray(tmp_path):
    code = ("import sys, evaluate; evaluate.main(['--agents', 'heuristic', 'random', '--walls', '1', '--no-plots', "
            f"'--no-progress', '--quiet', '--out', {str(tmp_path)!r}]); print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_bad_ray_settings_exit_2(capsys):
    assert evaluate.main(["--ray", "--ray-workers", "-1", "--walls", "1"]) == 2
    assert "ray_workers" in capsys.readouterr().err


@pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install -e .[ray])")
def test_an_unreachable_cluster_exits_2(monkeypatch, tmp_path, capsys):
    import agents.tournament.distributed as dist

    def refuse(jobs, **kw):
        raise dist.RayUnavailable(f"ray: cannot join the cluster at {kw['address']!r} (refused)")

    monkeypatch.setattr(dist, "play_on_ray", refuse)
    assert evaluate.main(["--agents", "random", "random", "--walls", "1", "--ray", "10.9.9.9:6379", "--out", str(tmp_path),
                          "--no-plots", "--no-progress", "--quiet"]) == 2
    assert "cannot join the cluster at '10.9.9.9:6379'" in capsys.readouterr().err


def test_the_ray_flag_takes_an_optional_address():
    from agents.script_args import parse_args

    assert parse_args(evaluate.Args, [])[0].ray is None
    assert parse_args(evaluate.Args, ["--ray", "--walls", "2"])[0].ray == "local"
    assert parse_args(evaluate.Args, ["--ray", "ray://head:10001"])[0].ray == "ray://head:10001"


def _csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install -e .[ray]); the --ray equality test is skipped")
@pytest.mark.skipif(not HAVE_TORCH, reason="the --ray equality test ships a checkpoint agent, which needs torch")
def test_a_ray_run_gives_the_local_results(tmp_path):
    """Leaderboard, pairwise table, per-hand CSV and replays of ``--ray --ray-workers 2`` equal the local run's,
    for a tournament with a sampling checkpoint agent and replays, and for ``--compare``."""
    ck = str(shipped_checkpoints("kawuxing3")[0])
    base = ["--agents", "heuristic", "random", ck, "--no-deterministic", "--walls", "3", "--seed", "5", "--batch-size", "8",
            "--replays", "2", "--no-plots", "--no-progress", "--quiet", "--out", str(tmp_path)]
    compare = ["--agents", "heuristic", "random", "--walls", "2", "--seed", "5", "--no-plots", "--no-progress", "--quiet",
               "--out", str(tmp_path), "--compare", "kwx004/crazy", "kwx004:kaikou=none"]
    import ray

    try:
        # One local Ray (2 workers) serves both runs: evaluate.py uses a Ray already running in its process.
        from agents.tournament.distributed import connect

        connect(None, 2)
        assert ray.cluster_resources()["CPU"] == 2
        assert evaluate.main(base + ["--run-name", "ray", "--ray", "--ray-workers", "2"]) == 0
        assert evaluate.main(compare + ["--run-name", "ray-compare", "--ray", "--ray-workers", "2"]) == 0
        # The workers never read a checkpoint path: this one is deleted before the shards run.
        import shutil

        from agents.tournament.distributed import play_on_ray

        copy = tmp_path / "gone.pt"
        shutil.copy(ck, copy)
        agents = [make_agent("heuristic"), make_agent(str(copy), seed=3)]
        copy.unlink()
        (gone,) = play_on_ray([Job("t", agents, "kawuxing3", None, walls=1, seed=5)], progress=False, shards_per_job=2)
        assert _hands(gone) == _hands(play_duplicate(agents, walls=1, seed=5, config="t"))
        assert gone.names == ["heuristic", "gone"]
    finally:
        ray.shutdown()
    assert evaluate.main(base + ["--run-name", "local"]) == 0
    assert evaluate.main(compare + ["--run-name", "local-compare"]) == 0
    local, remote = tmp_path / "local", tmp_path / "ray"
    for name in ("leaderboard.csv", "pairwise.csv", "hands.csv"):
        assert _csv(remote / name) == _csv(local / name), name
    assert len(_csv(local / "hands.csv")) == 1 + 3 * 6 * 3
    reps = sorted(p.name for p in (local / "replays").iterdir())
    assert reps == sorted(p.name for p in (remote / "replays").iterdir()) and len(reps) == 2
    assert all((local / "replays" / n).read_bytes() == (remote / "replays" / n).read_bytes() for n in reps)
    drop = {"hands_per_second"}  # timing differs; everything else must not
    rows = [[{k: v for k, v in r.items() if k not in drop} for r in csv.DictReader(open(d / "compare.csv", encoding="utf-8"))]
            for d in (tmp_path / "local-compare", tmp_path / "ray-compare")]
    assert rows[0] == rows[1] and len(rows[0]) == 2
