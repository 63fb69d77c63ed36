"""Duplicate tournaments on the batched engine, and their statistics.

This module owns the tournament core shared by ``evaluate.py`` and ``train.py``:

* :func:`seatings` — the seat assignments every wall is replayed under (each agent sits in every seat
  equally often, so the luck of the deal cancels);
* :func:`play_duplicate` — plays ``walls × seatings`` hands on one :class:`~mjenv.engine.core.Engine`
  batch, refilling finished tables at once, asking each agent only for its own rows, and returns one
  :class:`GameRecord` per hand.  Wall ``w`` is ``Engine.reset(seed=seed, table_ids=[w])`` for every
  seating, and the arena checks that every seating of a wall was dealt the identical tile order
  (``GameRecord.wall_digest``);
* :func:`summarize` / :func:`pairwise` / :func:`mean_ci` — per-agent scores with 95% confidence
  intervals over walls (the independent unit of a duplicate tournament), rates and fan counts;
* :func:`json_text` — strict JSON of such statistics (an undefined interval, NaN, is written ``null``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from agents.players.base import agent_act, resolve_rules
from agents.players.external import BotError
from agents.players.keyrng import decision_keys, seating_code, table_keys
from mjenv.encoding.observation import encoder_for
from mjenv.engine.core import Engine, IllegalActionError

__all__ = ["GameRecord", "TournamentResult", "seatings", "play_duplicate", "mean_ci", "t_quantile", "summarize", "pairwise",
           "json_text"]


def _json_safe(x):
    """``x`` with numpy scalars as Python numbers and NaN / infinity as ``None`` (valid JSON has no NaN)."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def json_text(obj) -> str:
    """Strict JSON of ``obj`` (undefined values such as a one-wall confidence interval become ``null``;
    objects JSON has no type for are written as their ``str``)."""
    return json.dumps(_json_safe(obj), indent=2, ensure_ascii=False, allow_nan=False, default=str)


@dataclass
class GameRecord:
    """One finished hand of a tournament (seats are absolute; ``seating[s]`` is the agent index in seat s)."""

    game: int
    wall: int
    seating: tuple[int, ...]
    dealer: int
    deltas: list[float]
    how: str  # "self-draw", "discard", "rob" or "draw"
    winners: list[int]
    discarder: int | None
    values: list[int]  # per winner, uncapped hand value V
    fans: list[dict]  # per winner
    revealed: list[bool]
    baohu_paid: list[float]  # per seat
    kong_money: list[float]  # per seat, net
    discards: int  # discards made in the hand (its length)
    wall_digest: str
    config: str = ""


@dataclass
class TournamentResult:
    """All records of a run plus its timing."""

    records: list[GameRecord]
    names: list[str]
    n_seats: int
    seconds: float
    decisions: int
    config: str = ""
    cpu_seconds: float = float("nan")

    @property
    def hands_per_second(self) -> float:
        """Hands played per wall-clock second of the playing loop."""
        return len(self.records) / self.seconds if self.seconds > 0 else float("inf")

    @property
    def hands_per_cpu_second(self) -> float:
        """Hands per CPU second of this process (steady when other work shares the machine)."""
        return len(self.records) / self.cpu_seconds if self.cpu_seconds > 0 else float("nan")


def seatings(n_agents: int, n_seats: int) -> list[tuple[int, ...]]:
    """Seat assignments (agent index per seat) a wall is replayed under.

    One agent: it fills every seat.  Fewer agents than seats: every assignment that uses every agent (2 agents
    at 3 seats: AAB, ABA, BAA, ABB, BAB, BBA).  As many or more: every ordered choice of distinct agents.  Each
    set is closed under permuting the seats, so every agent sits in every seat equally often.
    """
    if n_agents < 1 or n_seats < 1:
        raise ValueError("need at least one agent and one seat")
    if n_agents == 1:
        return [(0,) * n_seats]
    if n_agents < n_seats:
        return [s for s in itertools.product(range(n_agents), repeat=n_seats) if len(set(s)) == n_agents]
    return list(itertools.permutations(range(n_agents), n_seats))


def _digest(wall: np.ndarray) -> str:
    return hashlib.blake2b(np.ascontiguousarray(wall).tobytes(), digest_size=8).hexdigest()


def play_duplicate(
    agents: Sequence[Any],
    variant: str = "kawuxing3",
    options: Any = None,
    *,
    walls: int = 10,
    seed: int = 0,
    first_wall: int = 0,
    batch_size: int = 256,
    seat_plan: Sequence[tuple[int, ...]] | None = None,
    replay_dir: str | Path | None = None,
    n_replays: int = 0,
    progress: Callable[[int], None] | None = None,
    config: str = "",
    on_record: Callable[[GameRecord], None] | None = None,
    on_step: Callable[..., None] | None = None,
    scored: bool = True,
) -> TournamentResult:
    """Play every wall ``first_wall .. first_wall + walls - 1`` under every seating; one record per hand.

    ``agents`` are objects with ``name`` and ``act(obs, mask)`` (an agent with ``uses_obs = False`` gets
    ``obs=None``; one with ``takes_keys = True`` also gets ``keys=``, one :mod:`agents.players.keyrng` key per row naming
    the seed, wall, seating and decision number, so its random draws — and the hands — do not depend on
    ``batch_size`` or on how the walls and seatings are split between calls or processes; one with ``uses_engine =
    True`` also gets ``engine=`` and ``tables=``, see :func:`agents.players.base.agent_act`).  ``variant`` is a variant name
    or the table's :class:`mjenv.rules.Rules`; with a name, ``options`` is a rule options value (or ``None`` for the
    variant's defaults).  Games are
    played ``batch_size`` at a time.  ``progress(k)`` is called with the number of hands just finished.
    With ``n_replays > 0`` the first hands are written to ``replay_dir`` with :func:`mjenv.replay.write_replay`
    (each to a temporary name, then renamed: a replay file is whole or absent).  ``on_record(record)`` sees
    each hand as it finishes, so a caller keeps the finished hands when a later one fails (an outside bot's
    :class:`~agents.players.external.BotError`, which leaves here naming the wall and seat of the failed decision).
    ``on_step(engine, tables, actions, games, steps, agents)`` sees every batch of decisions before it is played
    (the live tables, their actions, game numbers, decision numbers within the hand and deciding agents;
    :mod:`mjenv.dataset` records them).  ``scored=False`` keeps only each hand's money in its record (``deltas``;
    ``how`` empty, no winners, values or fans): the engine's result, whose fans and values are worked out only
    when read, is then never read.
    """
    rules = resolve_rules(variant, options)  # resolved at the door when handed in as Rules
    variant = rules.variant
    probe = Engine(rules, 1, record_events=False)
    n = probe.n
    plan = list(seat_plan) if seat_plan is not None else seatings(len(agents), n)
    for s in plan:
        if len(s) != n or any(not 0 <= a < len(agents) for a in s):
            raise ValueError(f"bad seating {s} for {len(agents)} agents at {n} seats")
    games = [(first_wall + w, s) for w in range(walls) for s in plan]
    record_events = n_replays > 0
    B = max(1, min(batch_size, len(games)))
    eng = Engine(rules, B, record_events=record_events)
    enc = encoder_for(eng)
    st = eng.state
    names = [a.name for a in agents]
    seat_of = np.asarray([s for _, s in games], dtype=np.int64).reshape(len(games), n)
    table_game = np.full(B, -1, dtype=np.int64)
    hand_key = np.zeros(B, dtype=np.uint64)
    hand_step = np.zeros(B, dtype=np.int64)
    plan_codes = {s: seating_code(s) for s in plan}
    digests: dict[int, str] = {}
    records: list[GameRecord | None] = [None] * len(games)
    next_game = 0
    if replay_dir is not None and n_replays > 0:
        Path(replay_dir).mkdir(parents=True, exist_ok=True)

    def deal(tables: np.ndarray) -> None:
        nonlocal next_game
        k = min(len(tables), len(games) - next_game)
        tables = tables[:k]
        if not k:
            return
        ids = np.arange(next_game, next_game + k)
        next_game += k
        table_game[tables] = ids
        wall_ids = np.asarray([games[g][0] for g in ids])
        hand_key[tables] = table_keys(seed, wall_ids, [plan_codes[games[g][1]] for g in ids])
        hand_step[tables] = 0
        eng.reset(seed=seed, tables=tables, table_ids=wall_ids, dealer=wall_ids % n)
        for b, g, w in zip(tables, ids, wall_ids):
            dg = _digest(st.wall[b])
            if digests.setdefault(int(w), dg) != dg:
                raise AssertionError(f"wall {w} was dealt differently for two seatings (duplicate broken)")

    def finish(b: int) -> None:
        g = int(table_game[b])
        w, plan_s = games[g]
        if not scored:
            records[g] = GameRecord(
                game=g, wall=int(w), seating=tuple(int(a) for a in plan_s), dealer=int(w % n),
                deltas=[float(x) for x in st.money[b, :n]], how="", winners=[], discarder=None, values=[], fans=[],
                revealed=[bool(x) for x in st.revealed[b]], baohu_paid=[0.0] * n, kong_money=[0.0] * n,
                discards=int(st.n_discards[b]), wall_digest=digests[int(w)], config=config)
            table_game[b] = -1
            if on_record is not None:
                on_record(records[g])
            return
        res = eng.results[b]
        winners = [int(x["seat"]) for x in res["winners"]]
        baohu = [0.0] * n
        for tr in res["transfers"]:
            if tr["reason"] == "baohu":
                baohu[tr["payer"]] += tr["amount"]
        deltas = [float(x) for x in res["deltas"]]
        kong = [d - s for d, s in zip(deltas, res["settlement_deltas"])]
        records[g] = GameRecord(
            game=g, wall=int(w), seating=tuple(int(a) for a in plan_s), dealer=int(w % n), deltas=deltas,
            how=res["how"], winners=winners, discarder=res["discarder"],
            values=[int(x["value"]) for x in res["winners"]], fans=[dict(x["fans"]) for x in res["winners"]],
            revealed=[bool(x) for x in st.revealed[b]], baohu_paid=baohu, kong_money=kong,
            discards=int(st.n_discards[b]), wall_digest=digests[int(w)], config=config,
        )
        if record_events and g < n_replays and replay_dir is not None:
            from mjenv.replay import write_replay

            path = Path(replay_dir) / f"hand_{g:05d}.jsonl"
            tmp = path.with_name(f".{path.name}.tmp")
            write_replay(tmp, eng, b, header_extra={
                "seed": seed, "table_id": int(w), "agents": [names[a] for a in plan_s], "config": config,
            })
            tmp.replace(path)
        table_game[b] = -1
        if on_record is not None:
            on_record(records[g])

    start = time.perf_counter()
    cpu_start = time.process_time()
    decisions = 0
    deal(np.arange(B))
    while True:
        fin = np.flatnonzero((table_game >= 0) & eng.done)
        if len(fin):
            for b in fin:
                finish(int(b))
            if progress is not None:
                progress(len(fin))
            deal(fin)
            continue
        live = np.flatnonzero(table_game >= 0)
        if not len(live):
            break
        actor = st.actor[live].astype(np.int64)
        who = seat_of[table_game[live], actor]
        actions = np.zeros(B, dtype=np.int64)
        keys = decision_keys(hand_key, hand_step)
        for a in np.unique(who):
            rows = live[who == a]
            agent = agents[a]
            obs = enc.encode(st, st.actor[rows], rows) if getattr(agent, "uses_obs", True) else None
            try:
                acts = agent_act(agent, obs, eng.mask[rows], engine=eng, tables=rows, keys=keys[rows])
            except BotError as exc:
                if exc.row is not None and 0 <= exc.row < len(rows):
                    t = int(rows[exc.row])
                    exc.where = (f"wall {games[table_game[t]][0]}, seat {'ABCD'[int(st.actor[t])]}, "
                                 f"step {int(hand_step[t]) + 1} of the hand")
                raise
            ok = eng.mask[rows, np.clip(acts, 0, eng.mask.shape[1] - 1)] & (acts >= 0) & (acts < eng.mask.shape[1])
            if not ok.all():
                j = int(np.flatnonzero(~ok)[0])
                raise IllegalActionError(f"agent {agent.name!r} chose illegal action {int(acts[j])} at table {int(rows[j])}")
            actions[rows] = acts
        if on_step is not None:
            on_step(eng, live, actions[live], table_game[live], hand_step[live], who)
        decisions += len(live)
        hand_step[live] += 1
        eng.step(actions)
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    return TournamentResult([r for r in records if r is not None], names, n, seconds, decisions, config, cpu)


def warm_up(agents: Sequence[Any], variant: str = "kawuxing3", options: Any = None) -> None:
    """Build (or load) the compiled code a tournament of ``agents`` runs before its clock and progress bar start:
    one hand of the first seating, played by copies of the agents (the agents' own state is left untouched)."""
    import copy

    try:
        copies = copy.deepcopy(list(agents))
    except Exception:  # an agent that cannot be copied: its compiled code is built inside the run instead
        return
    rules = resolve_rules(variant, options)
    play_duplicate(copies, rules, walls=1, batch_size=1, seat_plan=seatings(len(copies), rules.n_players)[:1])


# ------------------------------------------------------------------------------------------ statistics

_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042]


def t_quantile(df: int, level: float = 0.95) -> float:
    """Two-sided Student-t critical value (table for ``df`` ≤ 30 at 95%, Cornish–Fisher expansion beyond)."""
    if df < 1:
        return float("nan")
    if level == 0.95 and df <= 30:
        return _T975[df - 1]
    z = _norm_ppf(0.5 + level / 2)
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2) + (
        3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)


def _norm_ppf(p: float) -> float:
    # Acklam's rational approximation (|error| < 1.2e-9), enough for a confidence level.
    a = [-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00]
    b = [-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01, -1.328068155288572e01]
    c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00]
    d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00]
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
    if p > 1 - 0.02425:
        return -_norm_ppf(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)


def mean_ci(x, level: float = 0.95) -> tuple[float, float]:
    """Mean and the half-width of its two-sided Student-t confidence interval (``nan`` width below 2 samples)."""
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    if len(x) == 0:
        return float("nan"), float("nan")
    m = float(x.mean())
    if len(x) < 2:
        return m, float("nan")
    se = float(x.std(ddof=1)) / math.sqrt(len(x))
    return m, t_quantile(len(x) - 1, level) * se


def _per_wall_scores(records: Sequence[GameRecord], n_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """(walls [W], mean delta per hand of each agent on each wall [W, n_agents], nan where it did not play)."""
    walls = sorted({r.wall for r in records})
    index = {w: i for i, w in enumerate(walls)}
    tot = np.zeros((len(walls), n_agents))
    cnt = np.zeros((len(walls), n_agents))
    for r in records:
        i = index[r.wall]
        for s, a in enumerate(r.seating):
            tot[i, a] += r.deltas[s]
            cnt[i, a] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(walls), np.where(cnt > 0, tot / np.maximum(cnt, 1), np.nan)


def summarize(result: TournamentResult) -> list[dict]:
    """Per-agent statistics: mean score per hand with its 95% CI (over walls), rates, 包胡, fans."""
    names = result.names
    k = len(names)
    _, per_wall = _per_wall_scores(result.records, k)
    rows = []
    for a in range(k):
        hands = wins = selfdraw = dealin = liang = baohu_n = 0
        baohu_amount = kong = value_sum = 0.0
        fans: Counter = Counter()
        for r in result.records:
            for s, who in enumerate(r.seating):
                if who != a:
                    continue
                hands += 1
                liang += r.revealed[s]
                kong += r.kong_money[s]
                if r.baohu_paid[s] > 0:
                    baohu_n += 1
                    baohu_amount += r.baohu_paid[s]
                if s in r.winners:
                    wins += 1
                    j = r.winners.index(s)
                    value_sum += r.values[j]
                    fans.update(r.fans[j].keys())
                    selfdraw += r.how == "self-draw"
                if r.discarder == s and r.how in ("discard", "rob"):
                    dealin += 1
        col = per_wall[:, a]
        mean, hw = mean_ci(col[~np.isnan(col)])
        rows.append({
            "agent": names[a],
            "hands": hands,
            "mean": mean,
            "ci95": hw,
            "win_rate": wins / hands if hands else float("nan"),
            "deal_in_rate": dealin / hands if hands else float("nan"),
            "self_draw_rate": selfdraw / hands if hands else float("nan"),
            "liang_rate": liang / hands if hands else float("nan"),
            "baohu_paid_hands": baohu_n,
            "baohu_paid": baohu_amount,
            "kong_money": kong / hands if hands else float("nan"),
            "mean_win_value": value_sum / wins if wins else float("nan"),
            "fans": {f: c / wins for f, c in fans.most_common()} if wins else {},
            "wins": wins,
        })
    return rows


def pairwise(result: TournamentResult) -> list[dict]:
    """Head-to-head margins: for every pair, the mean over walls of the better agent's minus the other's score
    per hand, with its 95% CI (paired by wall, so the luck of the deal cancels)."""
    _, per_wall = _per_wall_scores(result.records, len(result.names))
    out = []
    for i, j in itertools.combinations(range(len(result.names)), 2):
        diff = per_wall[:, i] - per_wall[:, j]
        diff = diff[~np.isnan(diff)]
        m, hw = mean_ci(diff)
        if m < 0:
            i, j, m = j, i, -m
        out.append({"a": result.names[i], "b": result.names[j], "margin": m, "ci95": hw, "walls": int(len(diff))})
    return out


def table_stats(records: Sequence[GameRecord]) -> dict:
    """Whole-table facts of a set of hands: draw rate, mean winning hand value, 亮倒 rate per seat, hand length."""
    n = len(records)
    if not n:
        return {}
    values = [v for r in records for v in r.values]
    return {
        "hands": n,
        "draw_rate": sum(r.how == "draw" for r in records) / n,
        "self_draw_share": sum(r.how == "self-draw" for r in records) / n,
        "mean_hand_value": float(np.mean(values)) if values else float("nan"),
        "liang_rate": float(np.mean([np.mean(r.revealed) for r in records])),
        "mean_discards": float(np.mean([r.discards for r in records])),
        "multi_win_rate": sum(len(r.winners) > 1 for r in records) / n,
    }
