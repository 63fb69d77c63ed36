"""Duplicate tournaments among mjenv agents, played on the batched engine.

This script owns the tournament command line: which agents (built-in names or ``train.py`` checkpoints),
which variant and rules, how many walls; the leaderboard it prints; the files it writes (CSV, JSON,
PNG plots, optional replays); and ``--compare``, which plays the same agents on the same walls under
several rule configurations side by side (with ``--report``: the measures of :mod:`agents.tournament.report` with 95 %
intervals over walls, skill tournaments and paired differences, in report.md and PNGs).  The playing itself is :mod:`agents.tournament.arena`.

Duplicate format: wall ``w`` is the engine's seeded wall ``(seed, w)``; it is replayed under every seat
assignment of the agents (:func:`agents.tournament.arena.seatings`), and the arena checks that every replay was
dealt the same tiles.  Scores are money per hand (units of the base stake); confidence intervals are
95% Student-t intervals over walls, the independent unit of a duplicate tournament.

Examples::

    python evaluate.py                                   # random vs heuristic (+ a shipped checkpoint)
    python evaluate.py --agents heuristic random --walls 500 --preset crazy
    python evaluate.py --agents runs/x/final.pt heuristic --variant kawuxing3
    python evaluate.py --agents heuristic random --compare kwx004 kwx004/simple kwx004/crazy "kwx004:kaikou=none"
    python evaluate.py --agents heuristic --compare kwx004 qdjt001 suizhou000 --report   # report.md (docs/compare.md)
    python evaluate.py --walls 2000 --ray --ray-workers 2   # sharded over a local Ray (agents/tournament/distributed.py)
    python evaluate.py --agents "cmd:python examples/simple_bot.py" heuristic   # an outside bot (docs/bots.md)
    python evaluate.py --resume runs/eval/NAME              # finish a run that stopped part-way
    python evaluate.py --agents runs/x/final.pt heuristic --review 6   # its largest mistakes (docs/review.md)

Run folder: ``<out>/<run_name>``, which must be new or empty (a reused name is refused: an earlier run is never
mixed with or overwritten by a new one).  Every file is written to a temporary name and renamed, so a file is
whole or absent; run.json (the arguments) comes first and summary.json (compare.json under ``--compare``) last,
so a folder without it holds a run that did not finish.  A run that stops part-way -- an outside bot fails
(docs/bots.md), Ray gives up on a shard, Ctrl-C -- prints one line, keeps its finished hands in records.jsonl
(the hands in play are voided) and exits with status 1; ``--resume FOLDER`` plays the walls not yet complete
and writes the outputs as one uninterrupted run would.

Ratings need ``openskill``, plots ``matplotlib``, the progress bar ``tqdm`` (``pip install -e .[eval]``);
without them those parts are skipped with a note.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Sequence

# One BLAS/OpenMP thread unless the user says otherwise: the batched play is single-threaded, and idle
# BLAS and torch threads spinning beside it cost 2-4x the CPU per hand on a busy machine (docs/ray.md).
# Set before numpy (and torch) load their thread pools.
for _threads_var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads_var, "1")

import numpy as np  # noqa: E402

from agents import default_checkpoint, make_agent
from agents.players.base import resolve_rules
from agents.players.external import BotError
from agents.tournament.report import grouped_bars
from agents.tournament.arena import (GameRecord, TournamentResult, json_text, pairwise, play_duplicate, seatings, summarize,
                          table_stats, warm_up)
from agents.script_args import ArgsError, check_numbers, parse_args, usage_errors
from mjenv.rules import load_rules
from mjenv.rules.families import rule_family
from mjenv.rules.options import OptionError, get_variant, n_players, options_to_dict, parse_option_assignments


# The skill pairs of --report: the strongest built-in agent with a measured margin over the heuristic
# (heuristic-flush: +0.06 to +0.08 per hand in Kawuxing, docs/experiments/heuristic.md; `search` spends rollouts at every
# decision and has no measured margin yet), and the heuristic over random.
DEFAULT_SKILL = ("heuristic-flush vs heuristic", "heuristic vs random")


@dataclass
class Args:
    """Duplicate tournament among mjenv agents (see the module docstring of evaluate.py)."""

    agents: list[str] = field(default_factory=list)
    """agents: built-in names (random, heuristic, heuristic-flush, fast, search or search:worlds=N,..., policy-search) or checkpoint
    paths (*.pt); empty = random, heuristic and the shipped checkpoint of the variant if there is one"""
    variant: str = "kawuxing3"
    """game variant: kawuxing3, kawuxing4, gejiu, diedaohu, yangzhou, yangzhou_new or liuwei"""
    ruleset: str | None = None
    """ruleset name (when not given: the variant's default; `mjenv rules --variant V` lists them)"""
    preset: str | None = None
    """preset name applied on top of the ruleset (simple, barbaric, crazy)"""
    options: list[str] = field(default_factory=list)
    """explicit rule options as name=value, applied last"""
    walls: int = 300
    """number of walls (>= 1); each is replayed under every seat assignment"""
    seed: int = 0
    """wall seed (>= 0): wall w is the engine's seeded wall (seed, w)"""
    first_wall: int = 0
    """id of the first wall (>= 0; to continue a tournament on fresh walls)"""
    batch_size: int = 256
    """tables played at once (>= 1)"""
    out: str = "runs/eval"
    """output folder; each run writes into a subfolder named after the run"""
    run_name: str | None = None
    """subfolder name (default: <variant>__<seed>__<unix time>)"""
    replays: int = 0
    """write the first N >= 0 hands as mjenv-replay-v1 files (slower: events are recorded for every hand)"""
    review: int = 0
    """review the first K >= 0 hands with mjenv review (writes their replays too): every decision valued by search,
    the agents' estimated losses and largest mistakes printed, review.json and review.html in the run folder
    (docs/review.md)"""
    compare: list[str] = field(default_factory=list)
    """rule configurations to compare on the same walls: 'RULESET', 'RULESET/PRESET', 'RULESET:opt=v,opt=v',
    'RULESET/PRESET:opt=v' or 'default'"""
    report: bool = False
    """with --compare: also write report.md and report_*.png in the run folder -- win, draw, deal-in, self-draw and
    亮倒 rates, hand value (mean, distribution), dealer advantage, hand length, money variance and skill margins per
    variant, with 95-percent intervals over the shared walls and paired differences from the first variant (docs/compare.md)"""
    skill: list[str] = field(default_factory=lambda: list(DEFAULT_SKILL))
    """with --report: 'STRONG vs WEAK' agent pairs whose duplicate margin, on the same walls, measures how much each
    variant rewards skill (none: --skill with no value)"""
    deterministic: bool = True
    """checkpoint agents play their most likely action (else they sample, seeded)"""
    allow_rules_mismatch: bool = False
    """let checkpoints play rule options they were not trained on (variant and observation must still match)"""
    plots: bool = True
    """write PNG plots (needs matplotlib)"""
    rating: bool = True
    """compute openskill ratings (needs openskill)"""
    progress: bool = True
    """show a progress bar (needs tqdm)"""
    quiet: bool = False
    """print only the leaderboard"""
    ray: str | None = field(default=None, metadata={"const": "local"})
    """shard walls × seatings over Ray tasks (pip install -e .[ray]; same results as without): bare --ray starts
    a local Ray on this machine's cores, --ray ADDRESS joins a cluster (auto, HOST:6379 or ray://HOST:10001)"""
    ray_workers: int = 0
    """with --ray: worker processes of the local Ray (0 = all cores); on a cluster, shards in flight (0 = its CPUs)"""
    bot_timeout: float = 10.0
    """seconds an outside bot (an agent 'cmd:COMMAND', docs/bots.md) may take per decision (> 0)"""
    resume: str | None = None
    """finish a run that stopped part-way: its folder (agents, rules, walls and seeds come from its run.json, the
    walls it completed are kept; how to play -- --ray, --batch_size, --bot_timeout, output switches -- comes from
    this command line)"""


# Fields --resume takes from the command line: how to play and what to print, never what is played.
RESUME_OWN = ("batch_size", "progress", "quiet", "ray", "ray_workers", "bot_timeout", "plots", "rating", "resume")


# ------------------------------------------------------------------------------------------ set-up


def rule_options(variant: str, ruleset: str | None, preset: str | None, options: Sequence[str]):
    """The rule options value of a variant / ruleset / preset / ``name=value`` list, resolved once
    (:func:`mjenv.rules.load_rules`: one resolution per rule configuration of a run)."""
    return load_rules(variant, ruleset=ruleset, preset=preset, options=parse_option_assignments(options)).options


def check_args(args: Args):
    """``(options, configs)``: the rule options value of the run and its ``--compare`` configurations (``(label,
    options)`` each, :func:`parse_compare`), each resolved here once; raises :class:`~agents.script_args.ArgsError`
    naming the field for a value :func:`run` cannot use (counts, seed, variant, ruleset, preset, options,
    ``--compare`` entries, ``--ray``); agents are checked as they are built."""
    check_numbers(args, {"walls": (1, None), "seed": (0, None), "first_wall": (0, None), "batch_size": (1, None),
                         "replays": (0, None), "review": (0, None)})
    if args.review and args.compare:
        raise ArgsError("--review reviews one tournament's hands; it does not go with --compare")
    if not (isinstance(args.bot_timeout, (int, float)) and math.isfinite(args.bot_timeout) and args.bot_timeout > 0):
        raise ArgsError(f"--bot_timeout must be a number of seconds > 0, got {args.bot_timeout}")
    try:
        opts = rule_options(args.variant, args.ruleset, args.preset, args.options)
    except OptionError as exc:
        raise ArgsError(str(exc)) from None
    configs = [parse_compare(spec, args.variant) for spec in args.compare]
    if args.report and not args.compare:
        raise ArgsError("--report needs --compare with one or more rule configurations")
    for spec in args.skill:
        parse_skill(spec)
    problem = ray_problem(args)
    if problem:
        raise ArgsError(problem)
    return opts, configs


def parse_compare(spec: str, variant: str) -> tuple[str, Any]:
    """``(label, options)`` of one ``--compare`` entry (``RULESET[/PRESET][:opt=v,...]`` or ``default``)."""
    text = spec.strip()
    rules, _, extra = text.partition(":")
    ruleset, _, preset = rules.partition("/")
    ruleset = None if ruleset in ("", "default") else ruleset
    opts = [x for x in extra.split(",") if x.strip()] if extra else []
    try:
        return text, rule_options(variant, ruleset, preset or None, opts)
    except OptionError as exc:
        raise ArgsError(f"--compare {spec!r}: {exc}") from None


def parse_skill(spec: str) -> tuple[str, str]:
    """``(strong, weak)`` of one ``--skill`` entry ``'STRONG vs WEAK'``."""
    strong, sep, weak = str(spec).partition(" vs ")
    if not sep or not strong.strip() or not weak.strip():
        raise ArgsError(f"--skill {spec!r}: write a pair as 'STRONG vs WEAK', e.g. 'heuristic vs random'")
    return strong.strip(), weak.strip()


def rerun_command(args: Args) -> str:
    """The ``python evaluate.py ...`` line that plays this run again (the output folder aside)."""
    import shlex

    words = ["python", "evaluate.py", "--agents", *args.agents, "--variant", args.variant]
    for name in ("ruleset", "preset"):
        if getattr(args, name):
            words += [f"--{name}", getattr(args, name)]
    if args.options:
        words += ["--options", *args.options]
    words += ["--walls", str(args.walls), "--seed", str(args.seed)]
    if args.first_wall:
        words += ["--first_wall", str(args.first_wall)]
    if args.compare:
        words += ["--compare", *args.compare]
    if args.report:
        words.append("--report")
        if list(args.skill) != list(DEFAULT_SKILL):
            words += ["--skill", *args.skill]
    return " ".join(shlex.quote(w) for w in words)


def default_agents(variant: str, configs: Sequence[tuple[str | None, Any]]) -> list[str]:
    """random, heuristic and, when torch is installed and it can play every one of ``configs`` (``(label, rule
    options)``: the run's rules, or each ``--compare`` entry) under this observation encoding, the
    variant's default bot (:func:`agents.default_checkpoint`; in Kawuxing the network-only
    ``kawuxing3-network-qfit3.pt``).  A checkpoint left out is named in one ``note:`` line on stderr."""
    names = ["random", "heuristic"]
    ck = [default_checkpoint(variant)] if default_checkpoint(variant).exists() else []
    if ck:
        try:
            from agents.players.policy import CheckpointMismatch, check_compatible, load_checkpoint
        except ModuleNotFoundError:
            return names
        try:
            payload = load_checkpoint(ck[0], resolve_rules(variant, configs[0][1]))
            for label, opts in configs:
                check_compatible(payload, variant, opts, where=ck[0].name if label is None else f"{ck[0].name} ({label})")
        except ModuleNotFoundError:
            print(f"note: {ck[0].name} is shipped but torch is not installed; playing without it", file=sys.stderr)
        except CheckpointMismatch as exc:
            print(f"note: playing without the shipped checkpoint: {exc}", file=sys.stderr)
        else:
            names.append(str(ck[0]))
    return names


def build_agents(specs: Sequence[str], variant: str, opts, args: Args) -> list:
    """Agents for ``specs``; repeated names get a ``#2``, ``#3`` suffix so the leaderboard tells them apart.

    An unknown name, a missing or unreadable checkpoint, or one trained on other rules is an
    :class:`~agents.script_args.ArgsError` naming the agent."""
    agents, seen = [], {}
    for i, spec in enumerate(specs):
        kwargs: dict[str, Any] = {}
        if spec.endswith(".pt") or spec.startswith("policy:"):
            kwargs = {"deterministic": args.deterministic, "strict_options": not args.allow_rules_mismatch}
        elif spec.startswith("cmd:"):
            kwargs = {"timeout": args.bot_timeout}
        try:
            agent = make_agent(spec, variant, opts, seed=args.seed * 1000 + i, **kwargs)
        except (ValueError, ModuleNotFoundError) as exc:
            raise ArgsError(f"--agents {spec!r}: {exc}") from None
        seen[agent.name] = seen.get(agent.name, 0) + 1
        if seen[agent.name] > 1:
            agent.name = f"{agent.name}#{seen[agent.name]}"
        agents.append(agent)
    return agents


class _Progress:
    """tqdm when available and wanted, else nothing."""

    def __init__(self, total: int, desc: str, enabled: bool):
        self.bar = None
        if enabled:
            try:
                from tqdm import tqdm
            except ModuleNotFoundError:
                print("note: pip install tqdm for a progress bar", file=sys.stderr)
            else:
                self.bar = tqdm(total=total, desc=desc, unit="hand", dynamic_ncols=True, file=sys.stderr)

    def __call__(self, k: int) -> None:
        if self.bar is not None:
            self.bar.update(k)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class RunStopped(Exception):
    """A run stopped part-way (an outside bot failed, Ray gave up, Ctrl-C); ``finished`` holds every hand that
    ended, per configuration label, for :func:`run` to keep."""

    def __init__(self, message: str, finished: dict[str, list[GameRecord]]):
        super().__init__(message)
        self.finished = finished


def _wall_ranges(walls: Sequence[int]) -> list[tuple[int, int]]:
    """``(first_wall, count)`` runs of consecutive wall ids."""
    out: list[tuple[int, int]] = []
    for w in sorted(walls):
        if out and out[-1][0] + out[-1][1] == w:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((w, 1))
    return out


def complete_walls(records: Sequence[GameRecord], n_seatings: int) -> set[int]:
    """Walls every seating of which has a finished hand among ``records``."""
    count = Counter(r.wall for r in records)
    return {w for w, c in count.items() if c >= n_seatings}


def play_all(jobs: Sequence[tuple], args: Args, kept: dict[str, list[GameRecord]] | None = None) -> list[TournamentResult]:
    """Play ``(label, agents, opts, replay_dir)`` tournaments: one after another in this process, or, with
    ``--ray``, all at once sharded over Ray workers (:mod:`agents.tournament.distributed`; Ray is imported only then).

    ``kept`` holds hands of an earlier, stopped attempt (``--resume``) per label: their complete walls are not
    played again.  A failure part-way raises :class:`RunStopped` with every hand finished so far."""
    kept = kept or {}
    finished: dict[str, list[GameRecord]] = {}
    tasks = []  # (label, agents, opts, replay_dir, first_wall, walls)
    for label, agents, opts, replay_dir in jobs:
        n_plan = len(seatings(len(agents), n_players(args.variant)))
        done = complete_walls(kept.get(label, []), n_plan)
        finished[label] = [r for r in kept.get(label, []) if r.wall in done]
        todo = [w for w in range(args.first_wall, args.first_wall + args.walls) if w not in done]
        for first, count in _wall_ranges(todo):
            # replay files are numbered by game from the first wall: only a range starting there writes them
            tasks.append((label, agents, opts, replay_dir if first == args.first_wall else None, first, count))
    timing = {label: [0.0, 0, 0.0] for label in finished}  # seconds, decisions, CPU seconds
    try:
        if args.ray is None:
            for label, agents, opts, replay_dir, first, count in tasks:
                res = play(agents, args.variant, opts, args, label, replay_dir, first, count, finished[label].append)
                timing[label] = [t + x for t, x in zip(timing[label], (res.seconds, res.decisions, res.cpu_seconds))]
        elif tasks:
            _play_ray(tasks, args, finished, timing)
    except BotError as exc:
        raise RunStopped(str(exc), finished) from None
    except KeyboardInterrupt:
        raise RunStopped("interrupted (Ctrl-C)", finished) from None
    results = []
    for label, agents, _, _ in jobs:
        plan = seatings(len(agents), n_players(args.variant))
        index = {p: i for i, p in enumerate(plan)}
        for r in finished[label]:
            r.game = (r.wall - args.first_wall) * len(plan) + index[tuple(r.seating)]
        records = sorted(finished[label], key=lambda r: r.game)
        seconds, decisions, cpu = timing[label]
        results.append(TournamentResult(records, [a.name for a in agents], n_players(args.variant), seconds, decisions,
                                        label, cpu))
    return results


def _play_ray(tasks: list[tuple], args: Args, finished: dict[str, list[GameRecord]], timing: dict) -> None:
    """The tasks of :func:`play_all` as Ray jobs; each finished shard's hands land in ``finished`` at once, so
    a Ray failure (a worker lost past its retries) keeps them."""
    from agents.tournament.distributed import Job, RayUnavailable, play_on_ray

    jobs = [Job(label, agents, args.variant, opts, count, args.seed, first, args.batch_size, replay_dir,
                args.replays if replay_dir is not None else 0) for label, agents, opts, replay_dir, first, count in tasks]

    def on_shard(shard, part: dict) -> None:
        finished[jobs[shard.job].label].extend(part["records"])

    try:
        results = play_on_ray(jobs, address=args.ray, workers=args.ray_workers,
                              progress=args.progress and not args.quiet, on_shard=on_shard)
    except (RayUnavailable, ValueError) as exc:  # one line and exit status 2 through main
        raise ArgsError(str(exc)) from None
    except (BotError, KeyboardInterrupt):
        raise
    except Exception as exc:  # Ray gave up (a task failed past its retries, a worker died, a node left)
        cause = getattr(exc, "cause", None) or exc
        lines = [x.strip() for x in str(cause).splitlines() if x.strip()]
        raise RunStopped(f"Ray failed: {type(cause).__name__}: {lines[-1] if lines else ''}", finished) from None
    for job, res in zip(jobs, results):
        timing[job.label] = [t + x for t, x in zip(timing[job.label], (res.seconds, res.decisions, res.cpu_seconds))]


def play(agents, variant: str, opts, args: Args, label: str, replay_dir: Path | None, first_wall: int | None = None,
         walls: int | None = None, on_record=None) -> TournamentResult:
    """One tournament of ``walls`` walls from ``first_wall`` (default: the run's) with a progress bar."""
    first_wall = args.first_wall if first_wall is None else first_wall
    walls = args.walls if walls is None else walls
    plan = seatings(len(agents), n_players(variant))
    warm_up(agents, variant, opts)  # compiled code built or loaded first: the bar and the clock start after it
    bar = _Progress(walls * len(plan), label, args.progress and not args.quiet)
    try:
        return play_duplicate(agents, variant, opts, walls=walls, seed=args.seed, first_wall=first_wall,
                              batch_size=args.batch_size, replay_dir=replay_dir, n_replays=args.replays,
                              progress=bar, config=label, on_record=on_record)
    finally:
        bar.close()


# ------------------------------------------------------------------------------------------ ratings


def openskill_ratings(result: TournamentResult) -> dict[str, dict] | None:
    """PlackettLuce ratings over the hands in play order; each hand ranks the agents at the table by their
    summed money (an agent in two seats is one team).  ``None`` when openskill is not installed."""
    try:
        from openskill.models import PlackettLuce
    except ModuleNotFoundError:
        return None
    model = PlackettLuce()
    ratings = [model.rating(name=n) for n in result.names]
    for r in sorted(result.records, key=lambda r: r.game):
        present = sorted(set(r.seating))
        if len(present) < 2:
            continue
        score = {a: 0.0 for a in present}
        for s, a in enumerate(r.seating):
            score[a] += r.deltas[s]
        new = model.rate([[ratings[a]] for a in present], scores=[score[a] for a in present])
        for a, team in zip(present, new):
            ratings[a] = team[0]
    return {n: {"mu": r.mu, "sigma": r.sigma, "ordinal": r.mu - 3 * r.sigma} for n, r in zip(result.names, ratings)}


# ------------------------------------------------------------------------------------------ reporting


def _pct(x: float) -> str:
    return "  n/a" if x != x else f"{100 * x:5.1f}"


def fan_names(variant: str) -> dict[str, str]:
    """Fan (pattern, hand class) id -> its Chinese name, from the fan table of ``variant``'s own family, in the
    table's order."""
    return {f: row[0] for f, row in rule_family(get_variant(variant).family).fans().items()}


def leaderboard_text(stats: list[dict], ratings: dict | None, result: TournamentResult, variant: str = "kawuxing3") -> str:
    """The leaderboard as an aligned text table, best mean score first; fans named from ``variant``'s family."""
    names = fan_names(variant)
    order = sorted(stats, key=lambda s: -s["mean"])
    head = f"{'#':>2} {'agent':<22} {'hands':>6} {'score/hand ± 95% CI':>21} {'win%':>5} {'dealin%':>7} {'tsumo%':>6} {'亮倒%':>5} {'包胡 paid':>10} {'rating μ±σ':>12}  top fans"
    lines = [head, "-" * len(head)]
    for i, s in enumerate(order, 1):
        rt = ratings.get(s["agent"]) if ratings else None
        rating = f"{rt['mu']:6.1f}±{rt['sigma']:<4.1f}" if rt else "   n/a"
        fans = ", ".join(f"{names.get(f, f)} {100 * v:.0f}%" for f, v in list(s["fans"].items())[:3])
        ci = f"{s['mean']:+7.3f} ± {s['ci95']:.3f}" if s["ci95"] == s["ci95"] else f"{s['mean']:+7.3f}"
        lines.append(
            f"{i:>2} {s['agent'][:22]:<22} {s['hands']:>6} {ci:>21} {_pct(s['win_rate'])} {_pct(s['deal_in_rate']):>7} "
            f"{_pct(s['self_draw_rate']):>6} {_pct(s['liang_rate']):>5} {s['baohu_paid_hands']:>4}/{s['baohu_paid']:<5.0f} {rating:>12}  {fans}"
        )
    return "\n".join(lines)


def pairwise_text(pairs: list[dict]) -> str:
    """Head-to-head margins, one line per pair."""
    lines = ["head to head (A − B, money per hand, over walls):"]
    for p in pairs:
        sig = "" if p["ci95"] != p["ci95"] else ("  *" if abs(p["margin"]) > p["ci95"] else "")
        lines.append(f"  {p['a']} − {p['b']}: {p['margin']:+.3f} ± {p['ci95']:.3f}  ({p['walls']} walls){sig}")
    return "\n".join(lines)


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it: a reader (or a run killed while
    writing) sees the whole file or none of it, never a cut one."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _csv_text(header: Sequence[str], rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def save_records(folder: Path, records: Sequence[GameRecord]) -> Path:
    """records.jsonl: every finished hand as one JSON object (the fields of :class:`~agents.tournament.arena.GameRecord`);
    what ``--resume`` reads back."""
    path = folder / "records.jsonl"
    _write_atomic(path, "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in records))
    return path


def load_records(folder: Path) -> list[GameRecord]:
    """The hands of a run folder's records.jsonl (none when it has no such file)."""
    path = folder / "records.jsonl"
    if not path.exists():
        return []
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            d = json.loads(line)
            d["seating"] = tuple(d["seating"])
            out.append(GameRecord(**d))
        except (ValueError, TypeError, KeyError) as exc:
            raise ArgsError(f"--resume: {path} line {i} is not a hand record ({exc})") from None
    return out


def write_outputs(folder: Path, args: Args, result: TournamentResult, stats, pairs, ratings, tstats, opts) -> dict:
    """records.jsonl, hands.csv, leaderboard.csv and pairwise.csv in ``folder``, each written atomically;
    returns the summary for summary.json, which :func:`run` writes last (a folder without it is incomplete)."""
    folder.mkdir(parents=True, exist_ok=True)
    save_records(folder, result.records)
    hand_rows = []
    for r in result.records:
        for s, a in enumerate(r.seating):
            won = s in r.winners
            value = r.values[r.winners.index(s)] if won else ""
            fans = " ".join(r.fans[r.winners.index(s)]) if won else ""
            hand_rows.append([r.config, r.game, r.wall, r.wall_digest, s, result.names[a], r.dealer, r.deltas[s], r.how,
                              int(won), int(r.discarder == s and r.how in ("discard", "rob")), int(r.revealed[s]),
                              r.baohu_paid[s], r.kong_money[s], value, fans, r.discards])
    _write_atomic(folder / "hands.csv", _csv_text(
        ["config", "game", "wall", "wall_digest", "seat", "agent", "dealer", "delta", "how", "won", "dealt_in",
         "revealed", "baohu_paid", "kong_money", "value", "fans", "discards"], hand_rows))
    board = []
    for s in stats:
        rt = (ratings or {}).get(s["agent"], {})
        board.append([s["agent"], s["hands"], s["mean"], s["ci95"], s["win_rate"], s["deal_in_rate"], s["self_draw_rate"],
                      s["liang_rate"], s["baohu_paid_hands"], s["baohu_paid"], s["kong_money"], s["mean_win_value"],
                      rt.get("mu", ""), rt.get("sigma", "")])
    _write_atomic(folder / "leaderboard.csv", _csv_text(
        ["agent", "hands", "mean", "ci95", "win_rate", "deal_in_rate", "self_draw_rate", "liang_rate",
         "baohu_paid_hands", "baohu_paid", "kong_money", "mean_win_value", "rating_mu", "rating_sigma"], board))
    _write_atomic(folder / "pairwise.csv", _csv_text(["a", "b", "margin", "ci95", "walls"],
                                                     [[p["a"], p["b"], p["margin"], p["ci95"], p["walls"]] for p in pairs]))
    return {
        "args": asdict(args),
        "variant": args.variant,
        "options": options_to_dict(opts, args.variant),
        "hands": len(result.records),
        "seconds": result.seconds,
        "hands_per_second": result.hands_per_second,
        "hands_per_cpu_second": result.hands_per_cpu_second,
        "decisions": result.decisions,
        "agents": stats,
        "pairwise": pairs,
        "ratings": ratings,
        "table": tstats,
    }


def _savefig(fig, path: Path) -> Path:
    """Save a figure atomically (temporary file, then rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, dpi=110, format=path.suffix.lstrip(".") or "png")
    os.replace(tmp, path)
    return path


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ModuleNotFoundError:
        print("note: pip install matplotlib for plots", file=sys.stderr)
        return None
    return plt


def write_plots(folder: Path, stats: list[dict], variant: str = "kawuxing3") -> list[Path]:
    """scores.png (mean ± CI per agent), rates.png (win / deal-in / self-draw / 亮倒) and fans.png."""
    plt = _pyplot()
    if plt is None:
        return []
    names = [s["agent"] for s in stats]
    x = np.arange(len(names))
    paths = []
    fig, ax = plt.subplots(figsize=(max(4, 1.5 * len(names)), 3.5))
    ax.bar(x, [s["mean"] for s in stats], yerr=[0 if s["ci95"] != s["ci95"] else s["ci95"] for s in stats], capsize=6,
           color="tab:blue")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x, names, rotation=15)
    ax.set_ylabel("money per hand (base stakes)")
    ax.set_title("mean score per hand, 95% CI over walls")
    fig.tight_layout()
    paths.append(_savefig(fig, folder / "scores.png"))
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(5, 2 * len(names)), 3.5))
    keys = [("win_rate", "win"), ("deal_in_rate", "deal-in"), ("self_draw_rate", "self-draw"), ("liang_rate", "liangdao")]
    grouped_bars(ax, x, [(label, [s[k] for s in stats], None) for k, label in keys])
    ax.set_xticks(x, names, rotation=15)
    ax.set_ylabel("share of hands")
    ax.legend(fontsize=8)
    ax.set_title("rates per hand")
    fig.tight_layout()
    paths.append(_savefig(fig, folder / "rates.png"))
    plt.close(fig)

    order = list(fan_names(variant))  # the family's table order
    fans = sorted({f for s in stats for f in s["fans"]}, key=lambda f: order.index(f) if f in order else len(order))
    if fans:
        fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(fans) * len(names)), 3.5))
        fx = np.arange(len(fans))
        grouped_bars(ax, fx, [(s["agent"], [s["fans"].get(f, 0.0) for f in fans], None) for s in stats])
        ax.set_xticks(fx, fans, rotation=30, ha="right")
        ax.set_ylabel("share of the agent's wins")
        ax.legend(fontsize=8)
        ax.set_title("fan frequencies")
        fig.tight_layout()
        paths.append(_savefig(fig, folder / "fans.png"))
        plt.close(fig)
    return paths


# ------------------------------------------------------------------------------------------ compare


def compare_rows(results: list[TournamentResult]) -> list[dict]:
    """One row per configuration: table facts and per-agent win rate and score."""
    rows = []
    for res in results:
        row = {"config": res.config, **table_stats(res.records), "hands_per_second": res.hands_per_second}
        for s in summarize(res):
            row[f"win_rate[{s['agent']}]"] = s["win_rate"]
            row[f"score[{s['agent']}]"] = s["mean"]
        rows.append(row)
    return rows


def compare_text(rows: list[dict], names: list[str]) -> str:
    """Side-by-side table of the configurations."""
    head = f"{'config':<28} {'hand value':>10} {'draw%':>6} {'亮倒%':>5} {'discards':>8}" + "".join(f" {('win% ' + n)[:14]:>14}" for n in names)
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['config'][:28]:<28} {r['mean_hand_value']:>10.2f} {_pct(r['draw_rate']):>6} {_pct(r['liang_rate']):>5} "
                     f"{r['mean_discards']:>8.1f}" + "".join(f" {_pct(r[f'win_rate[{n}]']):>14}" for n in names))
    return "\n".join(lines)


def compare_plot(folder: Path, rows: list[dict], names: list[str]) -> Path | None:
    """compare.png: win rate by agent, draw and 亮倒 rates, hand value and game length per configuration."""
    plt = _pyplot()
    if plt is None:
        return None
    labels = [r["config"] for r in rows]
    x = np.arange(len(rows))
    fig, axes = plt.subplots(2, 2, figsize=(max(8, 1.8 * len(rows)), 6.5))
    grouped_bars(axes[0, 0], x, [(n, [r[f"win_rate[{n}]"] for r in rows], None) for n in names])
    axes[0, 0].set_title("win rate by agent")
    axes[0, 0].legend(fontsize=7)
    axes[0, 1].plot(x, [r["draw_rate"] for r in rows], "o-", label="draw")
    axes[0, 1].plot(x, [r["liang_rate"] for r in rows], "s-", label="liangdao")
    axes[0, 1].set_title("draw and liangdao rates")
    axes[0, 1].legend(fontsize=7)
    axes[1, 0].bar(x, [r["mean_hand_value"] for r in rows], color="tab:green")
    axes[1, 0].set_title("average winning hand value")
    axes[1, 1].bar(x, [r["mean_discards"] for r in rows], color="tab:gray")
    axes[1, 1].set_title("game length (discards per hand)")
    for ax in axes.flat:
        ax.set_xticks(x, labels, rotation=20, ha="right", fontsize=8)
    fig.tight_layout()
    path = _savefig(fig, folder / "compare.png")
    plt.close(fig)
    return path


def write_report(folder: Path, args: Args, results: list[TournamentResult], skills: dict, say) -> dict:
    """report.md and its plots (:mod:`agents.tournament.report`); prints the skill lines; returns the report's numbers."""
    from agents.tournament.report import build_report, report_markdown, report_plots

    rep = build_report(results, skills)
    for v in rep["variants"]:
        for sk in v["skill"]:
            need = "n/a" if sk["hands_needed"] != sk["hands_needed"] else f"{sk['hands_needed']:,.0f}"
            say(f"skill {v['config']}: {sk['strong']} − {sk['weak']} {sk['margin']:+.3f} ± {sk['ci95']:.3f} per hand; "
                f"hands to tell them apart at 95%: {need}")
    images = []
    if args.plots:
        plt = _pyplot()
        if plt is not None:
            images = report_plots(folder, rep, plt, _savefig)
    _write_atomic(folder / "report.md", report_markdown(rep, rerun_command(args), results[0].names, images))
    say(f"report: {folder / 'report.md'}")
    return rep


# ------------------------------------------------------------------------------------------ main


def run(args: Args) -> dict:
    """Run the tournament (or the comparison) described by ``args``; returns what summary.json holds.

    Bad arguments raise :class:`~agents.script_args.ArgsError` before anything is played or written.  A run
    that stops part-way (an outside bot fails, Ray gives up, Ctrl-C) keeps its finished hands in the run folder's
    records.jsonl, writes no summary, and raises :class:`RunStopped` saying how to finish it (``--resume``)."""
    folder, kept = None, {}
    if args.resume:
        args, folder, kept = _resume_args(args)
    opts, configs = check_args(args)  # the rules, resolved once here and handed down
    args.replays = max(args.replays, args.review)  # the reviewed hands are read from their replays
    if args.agents:
        specs = list(args.agents)
    elif args.compare:  # the agents play every configuration: a checkpoint that cannot play one of them stays out
        specs = default_agents(args.variant, configs)
    else:
        specs = default_agents(args.variant, [(None, opts)])
    args.agents = specs  # a resumed run plays the very agents this one chose
    if folder is None:
        run_name = args.run_name or f"{args.variant}__{args.seed}__{int(time.time())}"
        folder = Path(args.out) / run_name
        if folder.is_dir() and any(folder.iterdir()):
            raise ArgsError(f"--run_name {run_name!r}: {folder} already holds a run; choose another name, or finish "
                            f"a stopped run with --resume {folder}")
    say = (lambda *a: None) if args.quiet else print

    if args.compare:
        teams = [(label, build_agents(specs, args.variant, opts, args), opts, None) for label, opts in configs]
        pairs = [parse_skill(p) for p in args.skill] if args.report else []
        for label, opts in configs:  # --report: the skill tournaments, on the same walls
            teams += [(f"{label} | skill {a} vs {b}", build_agents([a, b], args.variant, opts, args), opts, None)
                      for a, b in pairs]
        _start_folder(folder, args)
        results = _play_or_keep(folder, teams, args, kept)
        skills = {label: results[len(configs) + i * len(pairs):len(configs) + (i + 1) * len(pairs)]
                  for i, (label, _) in enumerate(configs)}
        results = results[:len(configs)]
        for res in results:
            say(f"{res.config}: {len(res.records)} hands in {res.seconds:.1f} s ({res.hands_per_second:.1f} hands/s, "
                f"{res.hands_per_cpu_second:.1f} per CPU second)")
        names = results[0].names
        rows = compare_rows(results)
        print(compare_text(rows, names))
        save_records(folder, [r for res in [*results, *(x for v in skills.values() for x in v)] for r in res.records])
        _write_atomic(folder / "compare.csv", _csv_text(list(rows[0]), [list(r.values()) for r in rows]))
        if args.plots:
            p = compare_plot(folder, rows, names)
            if p:
                say(f"plot: {p}")
        out = {"args": asdict(args), "rows": rows}
        if args.report:
            out["report"] = write_report(folder, args, results, skills, say)
        _write_atomic(folder / "compare.json", json_text(out))  # last: the run is whole
        say(f"wrote {folder}")
        return {"rows": rows, "folder": str(folder)} | ({"report": out["report"]} if args.report else {})

    agents = build_agents(specs, args.variant, opts, args)
    _start_folder(folder, args)
    plan = seatings(len(agents), n_players(args.variant))
    say(f"{args.variant}, {args.walls} walls × {len(plan)} seatings = {args.walls * len(plan)} hands; agents: {', '.join(a.name for a in agents)}")
    replay_dir = folder / "replays" if args.replays > 0 else None
    (result,) = _play_or_keep(folder, [("tournament", agents, opts, replay_dir)], args, kept)
    stats = summarize(result)
    pairs = pairwise(result)
    ratings = openskill_ratings(result) if args.rating else None
    if args.rating and ratings is None:
        print("note: pip install openskill for ratings", file=sys.stderr)
    tstats = table_stats(result.records)
    print(leaderboard_text(stats, ratings, result, args.variant))
    say(pairwise_text(pairs))
    say(f"table: draw {_pct(tstats['draw_rate'])}%, mean winning value {tstats['mean_hand_value']:.2f}, "
        f"{tstats['mean_discards']:.1f} discards per hand")
    if result.seconds > 0:
        print(f"throughput: {len(result.records)} hands in {result.seconds:.1f} s = {result.hands_per_second:.1f} hands/s "
              f"({result.decisions / result.seconds:.0f} decisions/s; {result.hands_per_cpu_second:.1f} hands per CPU second)")
    summary = write_outputs(folder, args, result, stats, pairs, ratings, tstats, opts)
    if args.plots:
        for p in write_plots(folder, stats, args.variant):
            say(f"plot: {p}")
    if args.review:
        summary["review"] = review_hands_of(folder, args, say)
    _write_atomic(folder / "summary.json", json_text(summary))  # last: a folder without it is incomplete
    say(f"wrote {folder}")
    return json.loads((folder / "summary.json").read_text(encoding="utf-8")) | {"folder": str(folder)}


def review_hands_of(folder: Path, args: Args, say) -> dict:
    """``--review K``: review the run's first K replayed hands (:mod:`mjenv.review`, seed ``--seed``); prints the
    summary, writes review.json and review.html; returns the per-agent totals for summary.json."""
    from mjenv.replay import read_replay
    from mjenv.review import review_hands, review_html, summary_text

    files = sorted((folder / "replays").glob("hand_*.jsonl"))[: args.review]
    hands = [h for f in files for h in read_replay(f)]
    review = review_hands(hands, seed=args.seed, source=str(folder / "replays"))
    print(summary_text(review))
    _write_atomic(folder / "review.json", json.dumps(review, ensure_ascii=False, indent=1) + "\n")
    _write_atomic(folder / "review.html", review_html(hands, review, str(folder / "replays")))
    say(f"review: {folder / 'review.json'}, {folder / 'review.html'}")
    return {"hands": len(hands), "worlds": review["worlds"], "players": review["players"]}


def _start_folder(folder: Path, args: Args) -> None:
    """Create the run folder and write run.json (the arguments, what ``--resume`` reads back)."""
    _make_folder(folder)
    _write_atomic(folder / "run.json", json_text({"args": asdict(args)}))


def _play_or_keep(folder: Path, jobs: Sequence[tuple], args: Args, kept: dict) -> list[TournamentResult]:
    """:func:`play_all`, and when it stops part-way: the finished hands saved to records.jsonl and
    :class:`RunStopped` raised with the one line to print."""
    try:
        return play_all(jobs, args, kept)
    except RunStopped as exc:
        records = [r for recs in exc.finished.values() for r in recs]
        path = save_records(folder, records)
        hint = f"python evaluate.py --resume {folder}"
        raise RunStopped(f"{exc}; the run stopped: its {len(records)} finished hands are kept in {path} (hands in play "
                         f"were voided; no summary.json), finish it with: {hint}", exc.finished) from None
    finally:
        for _, agents, _, _ in jobs:
            for a in agents:
                if hasattr(a, "close"):
                    a.close()


def _resume_args(args: Args) -> tuple[Args, Path, dict]:
    """The arguments, folder and kept hands (per configuration) of the stopped run ``args.resume``."""
    folder = Path(args.resume)
    try:
        saved = json.loads((folder / "run.json").read_text(encoding="utf-8"))["args"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ArgsError(f"--resume {folder}: not a run folder of evaluate.py (no readable run.json: {exc})") from None
    for done in ("summary.json", "compare.json"):
        if (folder / done).exists():
            raise ArgsError(f"--resume {folder}: that run is complete ({done} exists)")
    known = {f.name for f in fields(Args)}
    merged = {k: v for k, v in saved.items() if k in known and k not in RESUME_OWN}
    merged.update({k: getattr(args, k) for k in RESUME_OWN})
    new = Args(**merged)
    kept: dict[str, list[GameRecord]] = {}
    for r in load_records(folder):
        kept.setdefault(r.config, []).append(r)
    return new, folder, kept


def ray_problem(args: Args) -> str | None:
    """Why the ``--ray`` settings cannot run (a one-line message naming the field), or ``None``."""
    if args.ray_workers < 0:
        return f"--ray_workers must be 0 (all cores) or more, got {args.ray_workers}"
    if args.ray is not None:
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            return '--ray: Ray is not installed; pip install -e ".[ray]"'
    return None


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArgsError(f"--out / --run_name: cannot create {folder}: {exc.strerror or exc}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status: 0; 2 after one ``evaluate.py: error: ...`` line on
    stderr for bad input (nothing is played or written then); 1 after one such line when the run stopped part-way
    (its finished hands kept, see :func:`run`)."""
    try:
        with usage_errors("evaluate.py"):
            args, _ = parse_args(Args, argv)
            run(args)
    except SystemExit as exc:  # a usage error (2) or --help (0)
        return exc.code if isinstance(exc.code, int) else 0
    except RunStopped as exc:
        print(f"evaluate.py: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
