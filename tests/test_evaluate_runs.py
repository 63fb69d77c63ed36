"""evaluate.py's run folder: every output written atomically with the summary last, a reused --run_name refused,
and a run that stops part-way (here: Ray giving up on a shard) keeps its finished hands and resumes."""

from __future__ import annotations

import csv
import json

import pytest

import evaluate
from agents.tournament.distributed import plan_shards, play_shard
from agents.tournament.arena import seatings

QUIET = ["--no-progress", "--no-rating", "--quiet"]


def _run(tmp_path, name, *extra):
    return evaluate.main(["--agents", "random", "heuristic", "--walls", "2", "--out", str(tmp_path), "--run_name", name,
                          *QUIET, *extra])


def test_every_output_is_renamed_into_place_and_the_summary_comes_last(tmp_path, monkeypatch):
    placed = []
    real = evaluate.os.replace

    def replace(src, dst):
        placed.append(str(dst).rsplit("/", 1)[-1])
        return real(src, dst)

    monkeypatch.setattr(evaluate.os, "replace", replace)
    assert _run(tmp_path, "a", "--no-plots") == 0
    files = {p.name for p in (tmp_path / "a").iterdir()}
    assert files >= {"run.json", "records.jsonl", "hands.csv", "leaderboard.csv", "pairwise.csv", "summary.json"}
    assert set(placed) == files  # nothing written in place, no temporary left behind
    assert placed[-1] == "summary.json" and placed[0] == "run.json"


def test_a_write_failing_part_way_leaves_no_cut_file(tmp_path, monkeypatch):
    real_writer = csv.writer

    class Dying:
        """A csv writer that fails after 5 rows (a full disk, a kill while writing)."""

        def __init__(self, f):
            self.w, self.rows = real_writer(f), 0

        def writerow(self, row):
            self.rows += 1
            if self.rows > 5:
                raise OSError(28, "No space left on device")
            return self.w.writerow(row)

        def writerows(self, rows):
            for r in rows:
                self.writerow(r)

    monkeypatch.setattr(evaluate.csv, "writer", Dying)
    with pytest.raises(OSError):
        _run(tmp_path, "cut", "--no-plots")
    left = {p.name for p in (tmp_path / "cut").iterdir()}
    assert "hands.csv" not in left and "summary.json" not in left
    assert not [n for n in left if n.endswith(".tmp")] or all(n.startswith(".") for n in left if n.endswith(".tmp"))


def test_a_reused_run_name_is_refused_and_the_earlier_run_untouched(tmp_path, capsys):
    assert _run(tmp_path, "same", "--no-plots") == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "same").iterdir()}
    capsys.readouterr()
    assert _run(tmp_path, "same", "--no-plots", "--seed", "1") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--run_name 'same'" in err[0] and "already holds a run" in err[0]
    assert {p.name: p.read_bytes() for p in (tmp_path / "same").iterdir()} == before


class _FakeRayTaskError(Exception):
    """What ray.get raises when a task failed past its retries: a long traceback text, the original in .cause."""

    def __init__(self, cause):
        super().__init__("ray::shard_task() (pid=1, ip=10.0.0.2)\n  File ...\n" * 14 + str(cause))
        self.cause = cause


def test_a_ray_failure_is_one_line_keeps_the_finished_shards_and_resumes(tmp_path, monkeypatch, capsys):
    import agents.tournament.distributed as dist

    def dying_ray(jobs, *, address=None, workers=0, progress=True, on_shard=None, **_):
        job = jobs[0]
        n_plan = len(seatings(len(job.agents), 3))
        first = plan_shards(job.walls, n_plan, 3, first_wall=job.first_wall)[0]
        on_shard(first, play_shard(job.agents, job, first))  # one shard came back...
        raise _FakeRayTaskError(RuntimeError("the worker node died"))  # ...then Ray gave up

    monkeypatch.setattr(dist, "play_on_ray", dying_ray)
    monkeypatch.setattr(evaluate, "ray_problem", lambda args: None)
    argv = ["--agents", "random", "heuristic", "--walls", "3", "--out", str(tmp_path), "--run_name", "r", *QUIET,
            "--no-plots"]
    assert evaluate.main(argv + ["--ray"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Ray failed: RuntimeError: the worker node died" in err[0]
    assert f"--resume {tmp_path / 'r'}" in err[0]
    folder = tmp_path / "r"
    kept = evaluate.load_records(folder)
    assert len(kept) == 6 and {r.wall for r in kept} == {0} and not (folder / "summary.json").exists()
    assert evaluate.main(["--resume", str(folder), *QUIET]) == 0  # without --ray: this command line says how to play
    assert evaluate.main(["--agents", "random", "heuristic", "--walls", "3", "--out", str(tmp_path), "--run_name",
                          "straight", *QUIET, "--no-plots"]) == 0
    resumed = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    straight = json.loads((tmp_path / "straight" / "summary.json").read_text(encoding="utf-8"))
    assert resumed["hands"] == straight["hands"] == 18
    assert resumed["agents"] == straight["agents"] and resumed["pairwise"] == straight["pairwise"]
