"""Text rendering of a table: what ``render_mode="ansi"`` returns and ``"human"`` prints.

This module owns :func:`render_table`: for every seat its declared melds (pong ``P``, chi ``C``, kongs
``K``/``A``/``X``), discards (oldest first), 亮倒 tiles and money so far, and either one seat's concealed hand
(the others' as a tile count) or every hand (``omniscient=True``); then the phase, the tiles left in the live
wall, Gejiu's face-up kong tiles and who must act.  Variants with sessions also show the round and each
seat's wind, and under a 园子 bankroll each seat's balance.  A seat's own missed-win lock and 大吊车 tile
are shown only in its own (or the omniscient) view.  Tiles are shown as Unicode glyphs followed by their
notation.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from mjenv.encoding import actions as A
from mjenv.engine import state as S
from mjenv.replay import session_at_deal
from mjenv.tiles import SEAT_LETTERS, format_counts, tile_name, tile_unicode

WIND_NAMES = "ESWN"


def _glyphs(counts) -> str:
    ids = [t for t in range(34) for _ in range(int(counts[t]))]
    return "".join(tile_unicode(t) for t in ids)


def _tiles(counts) -> str:
    text = format_counts(counts)
    return f"{_glyphs(counts)} {text}" if text else "-"


def render_table(
    engine,
    table: int = 0,
    seat: int | None = None,
    *,
    omniscient: bool = False,
    agents: Sequence[str] | None = None,
) -> str:
    """The table ``table`` of ``engine`` as text.

    ``seat``: whose concealed hand is shown (others show only their tile count and 亮倒 tiles);
    ``omniscient``: show every hand, face-down triplets and the next wall tiles.
    """
    st = engine.state
    b = int(table)
    n = engine.n
    names = list(agents) if agents else [f"player_{i}" for i in range(n)]
    phase = int(st.phase[b])
    left = int(st.back[b] - st.front[b])
    dealer_seat = int(st.dealer[b])
    dealer = SEAT_LETTERS[dealer_seat]
    head = f"{engine.variant} · phase {S.PHASE_NAMES[phase]} · live wall {left} left · dealer {dealer}"
    session = session_at_deal(engine, b)  # the session this hand is played in (also once it is over)
    if session is not None:
        rnd = min(session["passes"] // 4, session["rounds"] - 1)
        head += f" · round {rnd + 1} of {session['rounds']} ({WIND_NAMES[rnd % 4]} wind)"
    lines = [head]
    bankroll = engine.family.starting_balance() > 0
    for s in range(n):
        tags = []
        if session is not None:
            tags.append(f"{WIND_NAMES[(s - dealer_seat) % n]} wind")
        if s == st.dealer[b]:
            tags.append("dealer")
        if st.revealed[b, s]:
            tags.append(f"亮倒 #{int(st.reveal_seq[b, s]) + 1}")
        balance = float(engine.balance[b, s] + st.money[b, s])
        if bankroll and balance <= 1e-9:
            tags.append("busted")
        if phase != S.DONE and s == st.actor[b]:
            tags.append("to act")
        tag = f" [{', '.join(tags)}]" if tags else ""
        money = f"  money {float(st.money[b, s]):+g}" + (f"  balance {balance:g}" if bankroll else "")
        lines.append(f"{SEAT_LETTERS[s]} {names[s]}{tag}{money}")
        hand = st.hand[b, s]
        if omniscient or seat == s:
            drawn = int(st.drawn[b]) if phase == S.TURN and st.cur[b] == s and st.drawn[b] >= 0 else -1
            extra = f"  drew {tile_unicode(drawn)} {tile_name(drawn)}" if drawn >= 0 else ""
            lines.append(f"    hand: {_tiles(hand)}{extra}")
            if st.revealed[b, s] and st.hidden[b, s].any():
                lines.append(f"    face down: {format_counts(st.hidden[b, s].astype(np.int8) * 3)}")
            if st.lock[b, s] > 0:  # private: a player's own missed-win lock (docs/rules/common.md §1.12)
                value = f" (M = {int(st.lock[b, s])})" if engine.family.value_lock else ""
                dd = int(st.dadiaoche[b, s])
                exc = f"; 大吊车: may still win on {tile_unicode(dd)} {tile_name(dd)}" if dd >= 0 else ""
                lines.append(f"    missed-win lock{value}{exc}")
        elif st.revealed[b, s]:
            shown = hand - 3 * st.hidden[b, s].astype(np.int8)
            if phase == S.TURN and st.cur[b] == s and st.drawn[b] >= 0:
                shown = shown.copy()
                shown[int(st.drawn[b])] -= 1  # the tile just drawn is not shown until played
            down = int(st.hidden[b, s].sum()) * 3
            lines.append(f"    revealed: {_tiles(shown)}" + (f"  + {down} face down" if down else ""))
        else:
            lines.append(f"    hand: {int(hand.sum())} tiles")
        melds = " ".join(str(m) for m in engine.melds_of(b, s))
        if melds:
            lines.append(f"    melds: {melds}")
        river = st.river[b, s, : int(st.river_len[b, s])]
        if len(river):
            lines.append(
                f"    discards: {''.join(tile_unicode(t) for t in river)} {' '.join(tile_name(t) for t in river)}"
            )
    if engine.family.kong_tiles:
        shown = [
            f"{j}: {tile_unicode(int(t))} {tile_name(int(t))}" if t >= 0 else f"{j}: -"
            for j, t in enumerate(st.kong_tiles[b])
        ]
        lines.append(f"face-up kong tiles: {', '.join(shown)}")
    if phase in (S.CLAIM, S.ROB):
        if phase == S.CLAIM:
            what = "claim window on"
        elif st.rob_replacement[b]:
            what = "rob window on the chosen kong tile"
        else:
            what = "rob window on the added kong of"
        t = int(st.claim_tile[b])
        lines.append(f"{what} {tile_unicode(t)} {tile_name(t)} from {SEAT_LETTERS[int(st.claim_from[b])]}")
    if phase == S.PICK:
        lines.append(f"{SEAT_LETTERS[int(st.cur[b])]} takes one of the face-up kong tiles as its replacement")
    if phase != S.DONE and (omniscient or seat == int(st.actor[b])):
        legal = ", ".join(A.action_name(a) for a in np.flatnonzero(engine.mask[b]))
        lines.append(f"legal for {SEAT_LETTERS[int(st.actor[b])]}: {legal}")
    if omniscient and phase != S.DONE and left > 0:
        nxt = st.wall[b, int(st.front[b]) : int(st.back[b])]
        lines.append(f"wall front→back: {' '.join(tile_name(t) for t in nxt)}")
    res = engine.results[b] if phase == S.DONE else None
    if res:
        if res["how"] == "draw":
            lines.append("hand over: exhaustive draw")
        else:
            who = ", ".join(SEAT_LETTERS[w["seat"]] for w in res["winners"])
            lines.append(f"hand over: {res['how']} win by {who} on {res['tile']}")
        lines.append("deltas: " + ", ".join(f"{SEAT_LETTERS[s]} {d:+g}" for s, d in enumerate(res["deltas"])))
    return "\n".join(lines)
