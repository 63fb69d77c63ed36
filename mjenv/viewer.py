"""The browser replay viewer: ``mjenv replay FILE --html OUT.html`` writes one self-contained page.

This module owns

* :func:`hand_frames`: the table after every event of one hand of a replay (:mod:`mjenv.replay`), folded from
  the events alone: every seat's concealed hand and the tile just drawn, its melds with their sources, its
  discards in order (those claimed by another seat kept and marked), 亮倒 with the tiles kept face down,
  kong money so far, the live wall count, Gejiu's face-up kong tiles, the claim window and its replies;
  then the settlement with every transfer, the winners' fans and the deltas;
* :func:`build_html` / :func:`write_html`: the page.  The HTML, CSS and JavaScript are the package file
  ``mjenv/viewer_template.html``; the frames are inlined into it as JSON, so the page needs no network, no
  build step and no other file.  Tiles are drawn as inline SVG (rank numerals and suit marks in the suit's
  colour, honours as their characters, 白 as its blue frame).  The page steps with ←/→, Home/End, ↑/↓
  (previous/next hand), ``v`` (cycle the view) and buttons; the view is every hand face up or one seat's
  view (the other seats' concealed tiles face down, 亮倒 tiles face up, every hand shown once the hand is over).

A replay whose events do not fit together (a tile discarded that its seat does not hold) raises
:class:`~mjenv.replay.ReplayError` naming the file and line.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np

from mjenv.replay import Replay, ReplayError
from mjenv.tiles import SEAT_LETTERS, format_counts, parse_tiles, tile_id, tile_name

TEMPLATE = "viewer_template.html"
DATA_MARK = "/*MJENV_DATA*/null"
"""Where the template takes the page's data (a JSON object)."""


def _family(variant: str):
    from mjenv.rules.families import RULE_FAMILIES as FAMILIES
    from mjenv.rules.options import get_variant

    return FAMILIES[get_variant(variant).family], get_variant(variant).family


def fan_names(family: str) -> dict[str, str]:
    """Fan id -> ``"中文 english"`` for one rule family (its family class's fan table); empty for an unknown one."""
    from mjenv.rules.families import RULE_FAMILIES as FAMILIES

    cls = FAMILIES.get(family)
    table = cls.fans() if cls is not None else {}
    return {k: f"{v[0]} {v[1]}" for k, v in table.items()}


class _Seat:
    """One seat while the events are folded."""

    def __init__(self, hand: Sequence[int]):
        self.hand = np.bincount(np.asarray(hand, dtype=np.int64), minlength=34).astype(np.int64)
        self.drawn: int | None = None
        self.melds: list[list] = []  # [letter, notation, source seat or None]
        self.river: list[list] = []  # [tile, 1 for the 亮倒 discard else 0, seat that claimed it or -1]
        self.revealed = False
        self.hidden = np.zeros(34, dtype=np.int64)  # 亮倒 tiles kept face down
        self.money = 0.0

    def take(self, tile: int, k: int, where: str) -> None:
        if self.hand[tile] < k:
            raise ReplayError(f"{where}: the seat holds {int(self.hand[tile])} of {tile_name(tile)}, not {k}")
        self.hand[tile] -= k
        if self.drawn == tile and self.hand[tile] == 0:
            self.drawn = None

    def view(self) -> dict:
        rest = self.hand.copy()
        if self.drawn is not None:
            rest[self.drawn] -= 1
        return {
            "h": format_counts(rest),
            "d": "" if self.drawn is None else tile_name(self.drawn),
            "x": format_counts(self.hidden) if self.revealed else "",
            "rev": self.revealed,
            "m": [list(m) for m in self.melds],
            "r": [list(r) for r in self.river],
            "money": round(self.money, 6),
        }


def _caption(ev: dict, L: str = SEAT_LETTERS) -> str:
    """One line for an event; ``{5p}`` marks a tile the page draws."""
    kind = ev["type"]
    if kind == "deal":
        return f"Deal; dealer {L[ev['dealer']]} holds 14 tiles"
    if kind == "draw":
        return f"{L[ev['seat']]} draws" + (" a replacement" if ev.get("replacement") else "") + f" {{{ev['tile']}}}"
    if kind == "discard":
        return f"{L[ev['seat']]} discards {{{ev['tile']}}}" + (" and declares 亮倒" if ev.get("liang") else "")
    if kind == "reveal":
        down = f", {ev['face_down']} face down" if ev.get("face_down") else ""
        return f"{L[ev['seat']]} reveals (亮倒){down}"
    if kind == "reply":
        return f"{L[ev['seat']]} replies: {ev['action']}"
    if kind == "pong":
        return f"{L[ev['seat']]} pongs {{{ev['tile']}}} from {L[ev['from']]}"
    if kind == "chi":
        return f"{L[ev['seat']]} chis {{{ev['tile']}}} from {L[ev['from']]}: " + "".join(
            f"{{{tile_name(t)}}}" for t in parse_tiles(ev["meld"])
        )
    if kind == "add_kong_declared":
        return f"{L[ev['seat']]} declares an added kong of {{{ev['tile']}}}"
    if kind == "kong":
        src = f" from {L[ev['from']]}" if ev.get("from") is not None else ""
        pay = ", ".join(f"{L[t['payer']]}→{L[t['payee']]} {t['amount']:g}" for t in ev.get("transfers", ()))
        return f"{L[ev['seat']]}: {ev['kind']} kong {{{ev['tile']}}}{src}" + (f" (kong money {pay})" if pay else "")
    if kind == "kong_pick":
        return f"{L[ev['seat']]} takes face-up kong tile {ev['slot']}: {{{ev['tile']}}}"
    if kind == "end":
        if ev["how"] == "draw":
            return "Exhaustive draw (荒庄)"
        who = ", ".join(L[w["seat"]] for w in ev["winners"])
        frm = f" from {L[ev['discarder']]}" if ev.get("discarder") is not None else ""
        how = {"self-draw": "self-draw", "discard": "on a discard", "rob": "robbing a kong"}.get(ev["how"], ev["how"])
        return f"{who} wins {how} {{{ev['tile']}}}{frm}"
    return kind


def hand_frames(rep: Replay) -> dict:
    """The page's data for one hand: header facts, one frame per event and the settlement.

    Each frame has ``s`` (per seat: ``h`` concealed tiles without the one just drawn, ``d`` that tile, ``x`` the
    亮倒 face-down tiles, ``rev``, ``m`` melds ``[letter, tiles, source]``, ``r`` discards, ``money`` so far),
    ``w`` (tiles left in the live wall), ``k`` (face-up kong tiles, slot 0 first), ``c`` (caption), ``t`` (the
    event type), ``a`` (the seat the event is about), ``cl`` (the open claim window: tile, from, replies) and ``line`` (the file line).
    """
    h = rep.header
    variant = h["variant"]
    family, family_name = _family(variant)
    events = [(r, ln) for r, ln in zip(rep.records, rep.lines or [0] * len(rep.records)) if r["type"] != "action"]
    deal = events[0][0]
    n = len(deal["hands"])
    wall = parse_tiles(deal["wall"])
    W, k = len(wall), int(family.kong_tiles)
    front, back = 13 * n + 1, W - k
    kong_tiles: list[int | None] = [wall[W - 1 - j] for j in range(k)]
    seats = [_Seat(parse_tiles(x)) for x in deal["hands"]]
    seats[int(deal["dealer"])].drawn = wall[13 * n]
    claim: dict | None = None
    pending_add: tuple[int, int] | None = None
    frames = []
    result = None
    for ev, ln in events:
        where = f"{rep.path}:{ln}"
        kind = ev["type"]
        s = ev.get("seat")
        st = seats[s] if isinstance(s, int) else None
        if kind == "draw":
            t = tile_id(ev["tile"])
            if not ev.get("replacement"):
                front += 1
            elif k == 0:
                back -= 1
            for o in seats:
                o.drawn = None
            st.hand[t] += 1
            st.drawn = t
            claim = None
        elif kind == "kong_pick":
            slot = int(ev["slot"])
            if back > front:
                back -= 1
                kong_tiles[slot] = wall[back]
            else:
                kong_tiles[slot] = None
        elif kind == "discard":
            t = tile_id(ev["tile"])
            st.take(t, 1, where)
            st.drawn = None
            st.river.append([ev["tile"], int(bool(ev.get("liang"))), -1])
            claim = {"t": ev["tile"], "f": s, "r": {}}
        elif kind == "reveal":
            st.revealed = True
            shown = np.bincount(np.asarray(parse_tiles(ev["shown"]), dtype=np.int64), minlength=34)
            st.hidden = st.hand - shown
            if (st.hidden < 0).any() or int(st.hidden.sum()) != int(ev.get("face_down", 0)):
                raise ReplayError(f"{where}: the revealed tiles {ev['shown']} do not fit seat {s}'s hand")
        elif kind == "reply":
            if claim is not None:
                claim["r"][str(s)] = ev["action"]
        elif kind in ("pong", "chi"):
            t, frm = tile_id(ev["tile"]), int(ev["from"])
            meld = [t] * 3 if kind == "pong" else parse_tiles(ev["meld"])
            rest = list(meld)
            rest.remove(t)
            for x in rest:
                st.take(x, 1, where)
            st.melds.append(["P" if kind == "pong" else "C", format_counts(np.bincount(meld, minlength=34)), frm])
            _mark_claimed(seats[frm], s)
            claim = None
        elif kind == "add_kong_declared":
            pending_add = (s, tile_id(ev["tile"]))
            claim = {"t": ev["tile"], "f": s, "r": {}, "rob": True}
        elif kind == "kong":
            t = tile_id(ev["tile"])
            name = _group(t, 4)
            if ev["kind"] == "concealed":
                st.take(t, 4, where)
                st.hidden[t] = 0
                st.melds.append(["X", name, None])
            elif ev["kind"] == "added":
                st.take(t, 1, where)
                for m in st.melds:
                    if m[0] == "P" and m[1] == _group(t, 3):
                        m[0], m[1] = "A", name
                        break
                else:
                    raise ReplayError(f"{where}: an added kong of {tile_name(t)} without its pong")
            else:
                frm = int(ev["from"])
                st.take(t, 3, where)
                st.melds.append(["K", name, frm])
                _mark_claimed(seats[frm], s)
            st.drawn = None
            pending_add = None
            claim = None
            for tr in ev.get("transfers", ()):
                seats[tr["payer"]].money -= tr["amount"]
                seats[tr["payee"]].money += tr["amount"]
        elif kind == "end":
            if ev["how"] == "rob" and pending_add is not None:
                seats[pending_add[0]].take(pending_add[1], 1, where)
            if ev["how"] == "discard" and ev["winners"]:
                _mark_claimed(seats[int(ev["discarder"])], ev["winners"][0]["seat"])
            for i, d in enumerate(ev["deltas"]):
                seats[i].money = float(d)
            result = _result(ev, family_name)
        views = [o.view() for o in seats]
        if kind == "end":
            for w in ev["winners"]:  # the winning tile beside each winner's hand
                views[w["seat"]]["won"] = True
                if ev["how"] != "self-draw":
                    views[w["seat"]]["d"] = ev["tile"]
        frames.append(
            {
                "s": views,
                "w": back - front,
                "k": [None if x is None else tile_name(x) for x in kong_tiles],
                "c": _caption(ev),
                "t": kind,
                "a": s if isinstance(s, int) else None,
                "cl": None if claim is None or kind == "end" else json.loads(json.dumps(claim)),
                "line": ln,
                "end": kind == "end",
            }
        )
    return {
        "variant": variant,
        "n": n,
        "dealer": int(h["dealer"]),
        "agents": list(h.get("agents") or [f"player_{i}" for i in range(n)]),
        "title": _title(rep),
        "frames": frames,
        "result": result,
    }


def _group(t: int, k: int) -> str:
    """``k`` copies of tile ``t`` in compact notation (``"5555p"``)."""
    return tile_name(t)[0] * k + tile_name(t)[1]


def _mark_claimed(seat: _Seat, by: int) -> None:
    """Mark the seat's last discard as taken by seat ``by``."""
    if seat.river and seat.river[-1][2] < 0:
        seat.river[-1][2] = int(by)


def _fan_factors(family: str) -> bool:
    """Whether the family's fan values are factors (the page writes them ×v)."""
    from mjenv.rules.families import RULE_FAMILIES as FAMILIES

    cls = FAMILIES.get(family)
    return bool(cls is not None and cls.fan_factors)


def _result(ev: dict, family: str) -> dict:
    names = fan_names(family)
    return {
        "how": ev["how"],
        "tile": ev.get("tile"),
        "discarder": ev.get("discarder"),
        "multiply": _fan_factors(family),
        "winners": [
            {
                "seat": w["seat"],
                "reading": w.get("reading", ""),
                "fans": [[names.get(f, f), f, v] for f, v in w.get("fans", {}).items()],
                "value": w.get("value"),
                "cap": w.get("cap"),
            }
            for w in ev.get("winners", ())
        ],
        "transfers": [dict(t) for t in ev.get("transfers", ())],
        "settlement_deltas": list(ev.get("settlement_deltas", ())),
        "deltas": list(ev["deltas"]),
        "next_dealer": ev.get("next_dealer"),
        "session_over": bool(ev.get("session_over")),
    }


def _title(rep: Replay) -> str:
    from mjenv.replay import format_header

    return format_header(rep).lstrip("= ")


def build_html(hands: Sequence[Replay], source: str = "", seat: int | None = None) -> str:
    """The self-contained page for the hands of one replay file (``seat``: the view it opens with)."""
    data = {
        "source": source,
        "view": "all" if seat is None else int(seat),
        "hands": [_packed(hand_frames(rep)) for rep in hands],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/").replace("<!--", "<\\!--")  # safe inside <script>
    page = resources.files("mjenv").joinpath(TEMPLATE).read_text(encoding="utf-8")
    if DATA_MARK not in page:
        raise RuntimeError(f"{TEMPLATE} lacks the data mark {DATA_MARK!r}")
    page = page.replace("<title>mjenv replay</title>", f"<title>mjenv replay · {html.escape(Path(source).name)}</title>")
    return page.replace(DATA_MARK, text)


def _packed(hand: dict) -> dict:
    """The hand with each seat that did not change since the previous frame written as ``null`` (the page fills
    it back in when it loads): most events change one seat, so this keeps the page about a third as large."""
    prev = None
    for f in hand["frames"]:
        full = f["s"]
        if prev is not None:
            f["s"] = [None if a == b else a for a, b in zip(full, prev)]
        prev = full
    return hand


def write_html(path, hands: Sequence[Replay], source: str = "", seat: int | None = None) -> None:
    """Write :func:`build_html` to ``path``."""
    Path(path).write_text(build_html(hands, source, seat), encoding="utf-8")
