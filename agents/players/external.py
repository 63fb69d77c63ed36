"""Outside bots at the table: a program in any language plays a seat over JSON lines on stdin/stdout.

This module owns the ``mjenv-bot-v1`` line protocol (docs/bots.md) and :class:`ExternalAgent`, the agent that
speaks it (``make_agent("cmd:python my_bot.py")``, ``evaluate.py --agents "cmd:..."``, ``mjenv play --opponents
"cmd:..."``).  The bot is started once per agent and reads one JSON object per line; it answers each with one
JSON object on one line:

* ``{"type": "hello", "protocol": "mjenv-bot-v1", "variant", "players", "options"}`` — answered with any object,
  optionally ``{"name": "my bot"}`` (the name on the leaderboard);
* ``{"type": "decide", ...the seat's view...}`` (:func:`seat_view`) — answered with ``{"action": "discard:5p"}``
  (an action name of :mod:`mjenv.encoding.actions`, or its integer id).

The view is decoded from the seat's ``mjenv-obs-v1`` observation (:class:`agents.players.base.ObsView`), so a bot sees
exactly what an in-process agent sees and never more.  A bot that exits, closes its output, answers something
that is not such an object, names an illegal action, or takes longer than ``timeout`` seconds for any answer (the
hello's included) raises
:class:`BotError`, one line naming the bot and the decision; the bot process is stopped.  What a tournament
does then is :mod:`evaluate`'s choice (docs/bots.md: the hands in progress are voided, finished ones kept).
"""

from __future__ import annotations

import json
import os
import select
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.base import Decoded, ObsView, resolve_rules
from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.rules.options import n_players, options_to_dict
from mjenv.tiles import tile_name

PROTOCOL = "mjenv-bot-v1"
PHASES = {S.TURN: "turn", S.CLAIMED: "claimed", S.CLAIM: "claim", S.ROB: "rob", S.DONE: "done", S.PICK: "pick"}
MELD_TYPES = ("pong", "chi", "kong", "added_kong", "concealed_kong")  # the rows of Decoded.melds, in order


class BotError(RuntimeError):
    """An outside bot failed at a decision: crashed, hung past its time limit, or answered an illegal action.

    ``row`` is the row of the batch being decided (the arena turns it into a wall and seat, ``where``)."""

    def __init__(self, bot: str, problem: str, decision: int, row: int | None = None, view: dict | None = None):
        self.bot, self.problem, self.decision, self.row = bot, problem, decision, row
        self.where = ""
        self.detail = ""
        if view is not None:
            legal = view.get("legal", [])
            shown = ", ".join(legal[:6]) + (f" (+{len(legal) - 6} more)" if len(legal) > 6 else "")
            self.detail = f"phase {view.get('phase')}; legal {shown}"
        super().__init__(self.bot)

    def __str__(self) -> str:
        at = "start-up (its hello)" if self.decision == 0 else f"decision {self.decision}"
        at += f" ({self.where})" if self.where else ""
        return f"bot {self.bot!r} {self.problem} at {at}" + (f" [{self.detail}]" if self.detail else "")


def _tiles(counts: np.ndarray) -> list[str]:
    """Tile names of a 34-count vector, each repeated by its count, in id order."""
    return [tile_name(t) for t in range(34) for _ in range(int(counts[t]))]


def seat_view(d: Decoded, i: int, legal: np.ndarray) -> dict:
    """Row ``i`` of a decoded observation batch as the ``decide`` message's named fields (docs/bots.md).

    Seats are relative: ``players[0]`` is the bot itself, ``players[1]`` the next player in turn order."""
    n = d.melds.shape[1]
    players = []
    for k in range(n):
        melds = [{"type": MELD_TYPES[r], "tile": tile_name(t)} for r in range(5) for t in range(34)
                 for _ in range(int(d.melds[i, k, r, t]))]
        p = {"melds": melds, "discards": _tiles(d.discards[i, k]), "liang": bool(d.revealed[i, k]),
             "shown": _tiles(d.shown[i, k]), "face_down": int(d.face_down[i, k])}
        if d.balance is not None:
            p["balance"] = float(d.balance[i, k])
            p["busted"] = bool(d.busted[i, k])
        players.append(p)
    claim = None
    if d.claim_tile[i] >= 0:
        claim = {"tile": tile_name(int(d.claim_tile[i])), "from": int(d.claim_from[i]),
                 "kind": "rob" if int(d.phase[i]) == S.ROB else "discard"}
    view = {
        "type": "decide",
        "phase": PHASES.get(int(d.phase[i]), str(int(d.phase[i]))),
        "hand": _tiles(d.hand[i]),
        "drawn": tile_name(int(d.drawn[i])) if d.drawn[i] >= 0 else None,
        "claim": claim,
        "wall_left": int(d.wall_left[i]),
        "locked": bool(d.locked[i]),
        "players": players,
        "legal": [A.action_name(int(a)) for a in np.flatnonzero(legal)],
    }
    if d.kong_tiles is not None and (d.kong_tiles[i] >= 0).any():
        view["kong_tiles"] = [tile_name(int(t)) if t >= 0 else None for t in d.kong_tiles[i]]
    return view


class ExternalAgent:
    """An agent played by an outside program speaking ``mjenv-bot-v1`` (see the module docstring).

    ``command`` is a shell-like command line (split with :func:`shlex.split`, run without a shell, in the
    current folder).  The program starts on the first decision and stops at :meth:`close` (or when the agent is
    garbage-collected); a pickled copy (a Ray worker's) starts its own.  ``timeout``: seconds allowed for every
    answer, the first (to ``hello``, which includes the program's start-up) included, unless ``start_timeout``
    gives that one its own limit."""

    uses_obs = True

    def __init__(self, command: str, variant: str = "kawuxing3", options: Any = None, *, name: str | None = None,
                 timeout: float = 10.0, start_timeout: float | None = None):
        self.command = command.strip()
        try:
            self.argv = shlex.split(self.command)
        except ValueError as exc:
            raise ValueError(f"cmd: cannot split {command!r}: {exc}") from None
        if not self.argv:
            raise ValueError("cmd: empty command; write e.g. 'cmd:python my_bot.py'")
        start_timeout = timeout if start_timeout is None else start_timeout
        for value in (timeout, start_timeout):
            if not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"bot timeout must be > 0 seconds, got {value}")
        self.rules = resolve_rules(variant, options)  # variant: a name, or a mjenv.rules.Rules
        self.variant, self.opts = self.rules.variant, self.rules.options
        self.timeout, self.start_timeout = float(timeout), float(start_timeout)
        self.view = ObsView(self.rules)
        self.name = name or _default_name(self.argv)
        self._named = name is not None
        self.decisions = 0
        self._proc: subprocess.Popen | None = None
        self._buf = b""

    # ------------------------------------------------------------------ process

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_proc"], state["_buf"] = None, b""  # a copy starts its own process
        return state

    def _start(self) -> None:
        try:
            self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            raise BotError(self.name, f"could not start ({self.command}: {exc.strerror or exc})", self.decisions) from None
        hello = {"type": "hello", "protocol": PROTOCOL, "variant": self.variant, "players": n_players(self.variant),
                 "options": options_to_dict(self.opts, self.variant)}
        reply = self._ask(hello, self.start_timeout, None, None)
        if not self._named and isinstance(reply.get("name"), str) and reply["name"].strip():
            self.name = reply["name"].strip()[:40]

    def close(self) -> None:
        """Close the bot's input and stop it (it gets 2 s to exit on its own)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout:
                proc.stdout.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing sensible left to do
            pass

    def _fail(self, problem: str, row: int | None, view: dict | None) -> BotError:
        proc = self._proc
        if proc is not None:
            proc.kill()
            proc.wait()
            self._proc = None
        self._buf = b""
        return BotError(self.name, problem, self.decisions, row, view)

    def _ask(self, message: dict, timeout: float, row: int | None, view: dict | None) -> dict:
        """Send one line and read one JSON object back within ``timeout`` seconds."""
        proc = self._proc
        try:
            proc.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
        except (BrokenPipeError, OSError):
            raise self._fail(f"exited (status {proc.poll()}) before reading its input", row, view) from None
        deadline = time.monotonic() + timeout
        fd = proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise self._fail(f"timed out (no answer within {timeout:g} s)", row, view)
            chunk = os.read(fd, 65536)
            if not chunk:
                status = proc.wait()
                raise self._fail(f"exited (status {status}) without answering", row, view)
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            reply = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise self._fail(f"answered {_clip(line)}, which is not a JSON object", row, view) from None
        if not isinstance(reply, dict):
            raise self._fail(f"answered {_clip(line)}, which is not a JSON object", row, view)
        return reply

    # ------------------------------------------------------------------ agent protocol

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Same as :meth:`act` (so the agent can be an env's opponent policy)."""
        return self.act(obs, mask)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row, each asked of the bot in turn (one ``decide`` line per row)."""
        mask = np.asarray(mask, dtype=bool)
        if self._proc is None:
            self._start()
        d = self.view.decode(obs)
        out = np.empty(mask.shape[0], np.int64)
        for i in range(mask.shape[0]):
            self.decisions += 1
            view = seat_view(d, i, mask[i])
            view["decision"] = self.decisions
            reply = self._ask(view, self.timeout, i, view)
            out[i] = self._action(reply, mask[i], i, view)
        return out

    def _action(self, reply: dict, legal: np.ndarray, row: int, view: dict) -> int:
        a = reply.get("action")
        if isinstance(a, bool) or not isinstance(a, (int, str)):
            raise self._fail(f"answered {_clip(json.dumps(reply))} without an \"action\" name or id", row, view)
        try:
            aid = int(a) if isinstance(a, int) else A.action_id(a)
        except ValueError:
            raise self._fail(f"answered the unknown action {a!r}", row, view) from None
        if not 0 <= aid < len(legal) or not legal[aid]:
            label = A.action_name(aid) if 0 <= aid < A.N_ACTIONS else str(aid)
            raise self._fail(f"answered the illegal action {label!r}", row, view)
        return aid


_INTERPRETERS = ("python", "python3", "pypy", "pypy3", "node", "ruby", "perl", "bash", "sh", "java", "julia", "Rscript")


def _default_name(argv: list[str]) -> str:
    """The bot's leaderboard name until it says one: its program's file stem (``my_bot`` of ``python my_bot.py``,
    ``bot`` of ``./bot --fast``)."""
    if Path(argv[0]).name in _INTERPRETERS:
        for word in argv[1:]:
            if not word.startswith("-"):
                return Path(word).stem or word
    return Path(argv[0]).stem or argv[0]


def _clip(text: bytes | str, size: int = 60) -> str:
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return repr(s if len(s) <= size else s[:size] + "...")
