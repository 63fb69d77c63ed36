"""The game reviewer: which decisions of a replay lost money, valued by search over sampled worlds.

This module owns ``mjenv review FILE`` (:func:`add_review_subcommand`, :func:`review_main`), the review itself
(:func:`review_hands`), the ``mjenv-review-v1`` JSON object it returns (specified in ``docs/review.md``), the
terminal summary (:func:`summary_text`) and the viewer page with the review on it (:func:`review_html`).  It is a
top-floor tool: it replays hands (:mod:`mjenv.replay`), plays agents and runs the search (:mod:`agents.players.search`).

For every decision of the reviewed seats it rebuilds the table from the replay (the engine re-simulates the hand
from its wall and its recorded decisions), and values a few legal candidates with
:meth:`agents.players.search.SearchAgent.evaluate`: ``worlds`` worlds sampled from what the acting seat knows
(:meth:`mjenv.engine.core.Engine.sample_worlds`), the same worlds for every candidate, each rolled out to the end
of the hand by the compiled player ``fast``.  The candidates are the action chosen in the replay, the compiled
player's ranked shortlist (the search's own candidates), the top of ``heuristic-flush``'s shortlist from the
observation (:meth:`agents.players.heuristic.HeuristicAgent.candidates`; the shipped checkpoints choose within it),
``--agent``'s choice, and in a claim window or a Gejiu kong-tile pick every legal action.  A decision's *value*
of a candidate is the seat's mean hand money over the worlds; *best* is the candidate of the highest mean; the
*loss* is best − chosen, with a 95 % Student-t interval over worlds of the per-world difference (paired: both on
the same worlds), the best of each half of the worlds being picked on the other half (:func:`_crossfit`: no
winner's-curse bias where candidates are within the noise of each other; exactly best − chosen where both halves
agree).  Decisions with one legal action, and decisions where a win is legal, are not reviewed.

A decision is named by its hand (1-based) and its *step*: the replay viewer's step that shows the table the seat
decides at (the number of events before the decision less one; ``mjenv replay FILE --html`` pages open there with
``#hand=H&step=S``).  The worlds of the ``k``-th decision of hand ``h`` are drawn from a seed made of ``seed``,
``h`` and ``k``, so a review is deterministic for a seed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.replay import Replay, ReplayError, deal_header, read_replay, verify_replay
from mjenv.tiles import SEAT_LETTERS

FORMAT = "mjenv-review-v1"
DEFAULT_WORLDS = 128
DEFAULT_CANDIDATES = 3
MISTAKES = 5
"""How many of each seat's largest mistakes the terminal summary lists."""

__all__ = ["FORMAT", "DEFAULT_WORLDS", "DEFAULT_CANDIDATES", "ReviewError", "review_hands", "parse_seats", "summary_text",
           "review_html", "write_review_html", "add_review_subcommand", "review_main"]


class ReviewError(ValueError):
    """Input the reviewer cannot review (a replay that does not verify, an unknown seat, an agent that cannot play
    the replay's rules); the message is one line naming what is wrong."""


def _kind(phase: int) -> str:
    if phase in (S.CLAIM, S.ROB):
        return "claim"
    if phase == S.PICK:
        return "pick"
    return "turn"


def _seed_of(seed: int, hand: int, index: int) -> int:
    """The world seed of the ``index``-th decision (0-based) of hand ``hand`` (1-based) for a review ``seed``."""
    from agents.players.keyrng import mix, salt_of

    key = np.asarray([(int(hand) << 20) ^ int(index)], dtype=np.uint64) ^ salt_of(int(seed))
    return int(mix(key)[0] >> np.uint64(1))  # a non-negative int64


def _t975(df: int) -> float:
    from agents.tournament.arena import t_quantile

    return t_quantile(df)


def _interval(x: np.ndarray) -> tuple[float, float, float]:
    """``(mean, low, high)`` of the 95 % Student-t interval of the mean of ``x``."""
    m = float(x.mean())
    if len(x) < 2:
        return m, m, m
    h = _t975(len(x) - 1) * float(x.std(ddof=1)) / np.sqrt(len(x))
    return m, m - h, m + h


def _crossfit(v: np.ndarray, c: int) -> np.ndarray:
    """Per world, the best candidate's value less candidate ``c``'s, the best being chosen on the *other* half of
    the worlds (``v [candidates, worlds]``).  Where both halves pick the same best this is ``v[best] - v[c]``;
    where they differ (candidates within the noise of each other) it does not carry the upward bias of taking
    the largest of noisy means (docs/review.md)."""
    n = v.shape[1]
    h = n // 2
    out = np.empty(n)
    for mine, other in ((slice(0, h), slice(h, n)), (slice(h, n), slice(0, h))):
        b = int(np.argmax(v[:, other].mean(1)))
        out[mine] = v[b, mine] - v[c, mine]
    return out


def _r(x: float) -> float:
    return round(float(x), 4)


def parse_seats(specs: Sequence[str] | None, n: int, variant: str) -> list[int]:
    """Seats from ``--seat`` words (0-based numbers or letters A..D); all ``n`` seats when none are given."""
    if not specs:
        return list(range(n))
    out: list[int] = []
    for text in specs:
        t = str(text).strip().upper()
        s = SEAT_LETTERS.index(t) if len(t) == 1 and t in SEAT_LETTERS else int(t) if t.isdigit() else -1
        if not 0 <= s < n:
            raise ReviewError(f"--seat {text!r}: {variant} has seats 0..{n - 1} ({', '.join(SEAT_LETTERS[:n])})")
        if s not in out:
            out.append(s)
    return sorted(out)


def _check_hands(hands: Sequence[Replay]) -> tuple[str, dict]:
    """The variant and options shared by every hand; :class:`ReviewError` when a hand does not verify or the hands
    were played under different rules."""
    if not hands:
        raise ReviewError("the replay holds no hand")
    variant, options = hands[0].header["variant"], hands[0].header["options"]
    for i, rep in enumerate(hands, start=1):
        if rep.header["variant"] != variant or rep.header["options"] != options:
            raise ReviewError(f"{rep.path}: hand {i} is played under other rules than hand 1 (variant or options); "
                              "review the hands one file at a time")
        try:
            verify_replay(rep)
        except ReplayError as exc:
            raise ReviewError(f"hand {i} does not verify: {exc}") from None
    return variant, options


def _make_agent(spec: str, variant: str, opts, seed: int):
    from agents import make_agent

    try:
        return make_agent(spec, variant, opts, seed=seed)
    except ImportError as exc:
        raise ReviewError(f"--agent {spec!r} needs an optional dependency: {exc}") from None
    except (ValueError, OSError) as exc:
        msg = " ".join(str(exc).split())
        raise ReviewError(f"--agent {spec!r} cannot play {variant} under this replay's rules: {msg}") from None


class _Reviewer:
    """The players and the search of one review (one variant and rule set)."""

    def __init__(self, eng, worlds: int, candidates: int, agent, seed: int):
        from agents import make_agent
        from mjenv.encoding.observation import encoder_for

        self.search = make_agent("search", eng.variant, eng.opts, seed=seed, candidates=max(2, candidates), worlds=worlds)
        self.flush = make_agent("heuristic-flush", eng.variant, eng.opts)
        self.enc = encoder_for(eng)
        self.worlds, self.k, self.agent, self.seed = worlds, candidates, agent, seed

    def _obs(self, eng):
        st = eng.state
        rows = np.array([0])
        return self.enc.encode(st, st.actor[rows], rows, engine=eng)

    def agent_choice(self, eng, obs) -> int:
        """The ``--agent`` player's choice at table 0 (a legal action, or :class:`ReviewError`)."""
        from agents.players.base import agent_act

        rows = np.array([0])
        try:
            a = int(agent_act(self.agent, obs if getattr(self.agent, "uses_obs", True) else None, eng.mask[rows],
                              engine=eng, tables=rows)[0])
        except Exception as exc:  # an agent that cannot act here cannot play these rules
            msg = " ".join(str(exc).split())
            raise ReviewError(f"--agent {self.agent.name!r} cannot play this replay: {msg}") from None
        if not (0 <= a < A.N_ACTIONS and eng.mask[0, a]):
            raise ReviewError(f"--agent {self.agent.name!r} chose an illegal action ({a}) in this replay's rules")
        return a

    def decision(self, eng, hand: int, index: int, chosen: int) -> dict:
        """Value the candidates of table 0's decision (the ``index``-th of hand ``hand``, ``chosen`` made in the
        replay); the decision's record."""
        mask = eng.mask[0]
        phase = int(eng.state.phase[0])
        kind = _kind(phase)
        obs = self._obs(eng)
        cands = [int(chosen)]

        def add(a) -> None:
            a = int(a)
            if a >= 0 and mask[a] and a not in cands:
                cands.append(a)

        agent_a = None
        if self.agent is not None:
            agent_a = self.agent_choice(eng, obs)
        if kind != "turn":
            for a in np.flatnonzero(mask):
                add(a)
        else:
            fast, nf = self.search.player.candidates(eng, np.array([0]), self.k)
            for a in fast[0, : int(nf[0])]:
                add(a)
            flush, nh = self.flush.candidates(obs, mask[None], self.k)
            for a in flush[0, : int(nh[0])]:
                add(a)
            if agent_a is not None:
                add(agent_a)
        if len(cands) < 2:  # the players agree on one action: compare it with the next legal one
            add(next(a for a in np.flatnonzero(mask) if a != chosen))
        seed = _seed_of(self.seed, hand, index)
        v = self.search.evaluate(eng, 0, cands, worlds=self.worlds, seed=seed)
        stats = [_interval(row) for row in v]
        means = np.array([m for m, _, _ in stats])
        best = int(np.argmax(means))  # ties go to the earlier: the chosen action first
        loss, lo, hi = _interval(_crossfit(v, 0))
        rec = {
            "hand": hand,
            "step": eng.event_count(0) - 1,
            "decision": index,
            "seat": int(eng.state.actor[0]),
            "kind": kind,
            "chosen": A.action_name(cands[0]),
            "best": A.action_name(cands[best]),
            "loss": _r(loss),
            "ci95": [_r(lo), _r(hi)],
            "values": [{"action": A.action_name(a), "value": _r(m), "ci95": [_r(l), _r(h)]}
                       for a, (m, l, h) in zip(cands, stats)],
        }
        if agent_a is not None:
            j = cands.index(agent_a)
            a_loss, a_lo, a_hi = _interval(_crossfit(v, j))
            rec["agent"] = {"action": A.action_name(agent_a), "loss": _r(a_loss), "ci95": [_r(a_lo), _r(a_hi)]}
        return rec


def review_hands(hands: Sequence[Replay], *, seats: Sequence[str] | Sequence[int] | None = None,
                 worlds: int = DEFAULT_WORLDS, candidates: int = DEFAULT_CANDIDATES, agent: str | None = None,
                 seed: int = 0, source: str = "") -> dict:
    """Review the decisions of ``seats`` (all by default; numbers or letters) in ``hands`` (one replay file's);
    returns the ``mjenv-review-v1`` object (docs/review.md).  Raises :class:`ReviewError` on bad input (the file,
    the seats and the agent are checked before anything is valued; an agent that fails at a decision stops the
    review there)."""
    if int(worlds) < 2:
        raise ReviewError(f"--worlds must be at least 2 (an interval needs two worlds), got {worlds}")
    if int(candidates) < 1:
        raise ReviewError(f"--candidates must be at least 1, got {candidates}")
    variant, options = _check_hands(hands)
    from mjenv.rules.options import n_players

    n = n_players(variant)
    chosen_seats = parse_seats([str(s) for s in seats] if seats else None, n, variant)
    eng = deal_header(hands[0].header)
    bot = _make_agent(agent, variant, eng.opts, seed) if agent else None
    rev = _Reviewer(eng, int(worlds), int(candidates), bot, int(seed))
    decisions: list[dict] = []
    agents_of: list[list[str]] = []
    try:
        for h, rep in enumerate(hands, start=1):
            eng = deal_header(rep.header)
            agents_of.append(list(rep.header.get("agents") or [f"player_{i}" for i in range(n)]))
            lines = rep.lines or [None] * len(rep.records)
            acts = [(r, ln) for r, ln in zip(rep.records, lines) if r["type"] == "action"]
            for index, (act, line) in enumerate(acts):
                a = int(act["action"])
                mask = eng.mask[0]
                if int(eng.state.actor[0]) in chosen_seats and int(mask.sum()) >= 2 and not mask[A.WIN]:
                    rec = rev.decision(eng, h, index, a)
                    rec["line"] = line
                    rec["player"] = agents_of[-1][rec["seat"]]
                    decisions.append(rec)
                eng.step(np.array([a]))
    finally:
        if bot is not None and hasattr(bot, "close"):
            bot.close()
    header = hands[0].header
    out = {
        "format": FORMAT,
        "variant": variant,
        "rules": {"options": options, **({"names": header["rules"]} if isinstance(header.get("rules"), dict) else {})},
        "worlds": int(worlds),
        "candidates": int(candidates),
        "seed": int(seed),
        "source": source,
        "hands": len(hands),
        "reviewed_seats": chosen_seats,
        "agent": agent,
        "decisions": decisions,
    }
    out["seats"] = [_totals(decisions, len(hands), agent is not None, seat=s) | {"seat": s} for s in chosen_seats]
    players = sorted({a[s] for a in agents_of for s in chosen_seats})
    out["players"] = [_totals(decisions, sum(a.count(p) for a in agents_of), agent is not None, player=p)
                      | {"player": p} for p in players]
    return out


def _totals(decisions: list[dict], hands: int, with_agent: bool, *, seat: int | None = None,
            player: str | None = None) -> dict:
    """Per-seat (or per-player) totals: decisions, mean loss per decision with its 95 % interval over decisions,
    total loss, loss per hand, agreement with the search's best; with ``--agent``, the agent's."""
    mine = [d for d in decisions if (seat is None or d["seat"] == seat) and (player is None or d["player"] == player)]
    losses = np.array([d["loss"] for d in mine], dtype=np.float64)
    m, lo, hi = _interval(losses) if len(losses) else (0.0, 0.0, 0.0)
    out = {
        "decisions": len(mine),
        "mean_loss": _r(m),
        "mean_loss_ci95": [_r(lo), _r(hi)],
        "total_loss": _r(losses.sum()),
        "hands": hands,
        "loss_per_hand": _r(losses.sum() / hands) if hands else 0.0,
        "agreement": _r(np.mean([d["chosen"] == d["best"] for d in mine])) if mine else None,
    }
    if with_agent:
        out["agent_agreement"] = _r(np.mean([d["agent"]["action"] == d["chosen"] for d in mine])) if mine else None
        out["agent_search_agreement"] = _r(np.mean([d["agent"]["action"] == d["best"] for d in mine])) if mine else None
        out["agent_mean_loss"] = _r(np.mean([d["agent"]["loss"] for d in mine])) if mine else 0.0
    return out


# ---------------------------------------------------------------------------------------------- text


def _ci(c: Sequence[float]) -> str:
    return f"± {(c[1] - c[0]) / 2:.2f}"


def summary_text(review: dict, mistakes: int = MISTAKES) -> str:
    """The terminal summary: per seat (per player when the hands seat players differently, as a tournament's do),
    decisions reviewed, mean loss per decision with its 95 % interval over decisions, total loss and loss per hand,
    agreement with the search's best (with ``--agent``: the agent's agreement and loss), and the ``mistakes``
    largest mistakes (hand, step, chosen, best, loss ± half-width of its 95 % interval)."""
    lines = [f"review of {review['source'] or 'the replay'}: {review['variant']}, {review['hands']} hand(s), "
             f"{review['worlds']} worlds per candidate, seed {review['seed']} (loss = best - chosen, money per hand)"]
    decs = review["decisions"]
    by_seat = all(len({d["player"] for d in decs if d["seat"] == t["seat"]}) <= 1 for t in review["seats"])
    groups = []
    for tot in review["seats"] if by_seat else review["players"]:
        if by_seat:
            s = tot["seat"]
            names = sorted({d["player"] for d in decs if d["seat"] == s})
            label = f"seat {SEAT_LETTERS[s]}" + (f" ({names[0]})" if names else "")
            mine = [d for d in decs if d["seat"] == s]
        else:
            label = f"player {tot['player']}"
            mine = [d for d in decs if d["player"] == tot["player"]]
        groups.append((label, tot, mine))
    for label, tot, mine in groups:
        if not tot["decisions"]:
            lines.append(f"{label}: no decision to review")
            continue
        line = (f"{label}: {tot['decisions']} decisions, mean loss {tot['mean_loss']:.3f} "
                f"[{tot['mean_loss_ci95'][0]:.3f}, {tot['mean_loss_ci95'][1]:.3f}] per decision, total "
                f"{tot['total_loss']:.2f} ({tot['loss_per_hand']:.2f} per hand over {tot['hands']}), agrees with the "
                f"search {100 * tot['agreement']:.0f}%")
        if "agent_agreement" in tot:
            line += (f"; {review['agent']} agrees with it {100 * tot['agent_agreement']:.0f}% and with the search "
                     f"{100 * tot['agent_search_agreement']:.0f}%, its mean loss {tot['agent_mean_loss']:.3f}")
        lines.append(line)
        worst = sorted(mine, key=lambda d: (-d["loss"], d["hand"], d["step"]))
        for d in worst[:mistakes]:
            if d["loss"] <= 0:
                break
            lines.append(f"  hand {d['hand']} step {d['step']} ({SEAT_LETTERS[d['seat']]}): chose {d['chosen']}, best "
                         f"{d['best']}, loss {d['loss']:.2f} {_ci(d['ci95'])}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- page

REVIEW_TEMPLATE = "review_template.html"
"""The review's part of the page (styles, boxes and script), inserted into the viewer's page before ``</body>``."""


def review_html(hands: Sequence[Replay], review: dict, source: str = "") -> str:
    """The viewer's page (:func:`mjenv.viewer.build_html`) of ``hands`` with ``review`` on it: at each reviewed
    decision the candidates' values as bars and the loss, a list of the largest mistakes that jumps to them, and
    a strip of each reviewed seat's cumulative loss over the hand.  One self-contained file; a review of one seat
    opens in that seat's view (what it knew when it decided)."""
    from importlib import resources

    from mjenv.viewer import build_html

    seats = review.get("reviewed_seats") or []
    page = build_html(hands, source, seat=seats[0] if len(seats) == 1 else None)  # one seat: open in its view
    part = resources.files("mjenv").joinpath(REVIEW_TEMPLATE).read_text(encoding="utf-8")
    data = {k: review[k] for k in ("format", "variant", "worlds", "seed", "seats", "agent")}
    data["decisions"] = review["decisions"]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/").replace("<!--", "<\\!--")
    part = part.replace("/*MJENV_REVIEW*/null", text)
    if "</body>" not in page:
        raise RuntimeError("the viewer page lacks </body>")
    return page.replace("<title>mjenv replay", "<title>mjenv review", 1).replace("</body>", part + "\n</body>", 1)


def write_review_html(path, hands: Sequence[Replay], review: dict, source: str = "") -> None:
    """Write :func:`review_html` to ``path``."""
    Path(path).write_text(review_html(hands, review, source), encoding="utf-8")


# ---------------------------------------------------------------------------------------------- command


def add_review_subcommand(subparsers) -> argparse.ArgumentParser:
    """Add ``review FILE [--seat S ...] [--worlds N] [--candidates K] [--agent NAME] [--seed N] [--json OUT]
    [--html OUT]`` to an argparse subparsers object."""
    p = subparsers.add_parser(
        "review", help="value every decision of a replay by search and list the costly ones",
        description="Review a replay: value each decision's candidates by search over worlds sampled from the acting "
        "seat's view, and report each decision's estimated loss (best - chosen, money per hand) with a 95 % "
        "interval (docs/review.md).")
    p.add_argument("file", help="replay file (mjenv-replay-v1), e.g. from mjenv play or evaluate.py --replays")
    p.add_argument("--seat", nargs="+", action="extend", default=None, metavar="S",
                   help="seats to review: 0..n-1 or A..D (default all); --seat A C or --seat A --seat C")
    p.add_argument("--worlds", type=int, default=DEFAULT_WORLDS,
                   help=f"sampled worlds per candidate (default {DEFAULT_WORLDS}); the same worlds for every candidate")
    p.add_argument("--candidates", type=int, default=DEFAULT_CANDIDATES,
                   help=f"how many of each player's shortlist to value on a seat's own turn (default {DEFAULT_CANDIDATES})")
    p.add_argument("--agent", default=None, metavar="NAME",
                   help="a second player whose choice is valued at each decision (built-in name, *.pt checkpoint)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled worlds (default 0)")
    p.add_argument("--json", default=None, metavar="OUT", help="write the review as mjenv-review-v1 JSON")
    p.add_argument("--html", default=None, metavar="OUT", help="write the replay viewer's page with the review on it")
    p.set_defaults(func=review_main)
    return p


def review_main(args: argparse.Namespace, out=None) -> int:
    """Run ``mjenv review``; returns 0, or 2 after one ``mjenv: error: ...`` line for bad input (a file that cannot
    be read or does not verify, an unknown seat, an agent that cannot play the rules, an unwritable output)."""
    out = out or sys.stdout
    try:
        hands = read_replay(args.file)
        for path in (args.json, args.html):
            if path and not Path(path).resolve().parent.is_dir():
                raise ReviewError(f"cannot write {path}: no such folder {Path(path).resolve().parent}")
        review = review_hands(hands, seats=args.seat, worlds=args.worlds, candidates=args.candidates,
                              agent=args.agent, seed=args.seed, source=str(args.file))
    except (OSError, ReplayError, ReviewError) as exc:
        msg = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, OSError):
            msg = f"{args.file}: {msg}"
        print(f"mjenv: error: {' '.join(msg.split())}", file=sys.stderr)
        return 2
    print(summary_text(review), file=out)
    try:
        if args.json:
            Path(args.json).write_text(json.dumps(review, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {args.json}", file=out)
        if args.html:
            write_review_html(args.html, hands, review, str(args.file))
            print(f"wrote {args.html}", file=out)
    except OSError as exc:
        print(f"mjenv: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
    return 0
