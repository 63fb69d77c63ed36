"""Text rendering: what each seat's view shows and hides, the omniscient view, finished hands, chi melds, Gejiu's
face-up kong tiles, session winds, balances and private locks."""

from __future__ import annotations

import re

import numpy as np

from mjenv.engine import state as S
from mjenv.engine.core import Engine
from mjenv.render import render_table
from mjenv.tiles import format_counts, tile_name, tile_unicode


def _midgame(seed: int = 0, steps: int = 40) -> Engine:
    """Random play that prefers pongs, kongs and 亮倒, stopped in the middle of a hand."""
    eng = Engine("kawuxing3", 1)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    bonus = np.where(np.arange(111) >= 34, 1.5, 0.0)
    bonus[108] = 0.0
    for _ in range(steps):
        if eng.done[0]:
            break
        m = eng.mask
        eng.step((m * (rng.random(m.shape) + bonus)).argmax(1))
    return eng


def _seat_lines(text: str, seat: int) -> str:
    """The lines of one seat's section (from its header line to the next seat's)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"{'ABCD'[seat]} player_{seat}"))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("    ")), len(lines))
    return "\n".join(lines[start:end])


def test_seat_view_shows_own_hand_only_and_public_information():
    eng = _midgame(4, 40)
    assert not eng.done[0] and eng.state.n_melds[0].all() and eng.state.revealed[0, 2]
    st = eng.state
    for seat in range(3):
        text = render_table(eng, 0, seat)
        for s in range(3):
            part = _seat_lines(text, s)
            assert f"money {float(st.money[0, s]):+g}" in part
            for m in eng.melds_of(0, s):
                assert str(m) in part
            river = st.river[0, s, : st.river_len[0, s]]
            if len(river):
                assert " ".join(tile_name(t) for t in river) in part
            if s == seat:
                assert format_counts(st.hand[0, s]) in part
            elif not st.revealed[0, s]:
                assert f"hand: {int(st.hand[0, s].sum())} tiles" in part
                assert format_counts(st.hand[0, s]) not in part
        assert "wall front" not in text


def test_omniscient_view_shows_every_hand_and_the_wall():
    eng = _midgame(5, 20)
    text = render_table(eng, 0, omniscient=True)
    for s in range(3):
        assert format_counts(eng.state.hand[0, s]) in _seat_lines(text, s)
    assert (
        "wall front→back: " + " ".join(tile_name(t) for t in eng.state.wall[0, eng.state.front[0] : eng.state.back[0]])
        in text
    )
    assert "legal for" in text


def test_revealed_seat_shows_face_up_tiles_but_not_face_down_kinds_or_a_fresh_draw():
    eng = Engine("kawuxing3", 1)
    eng.reset(seed=0)
    st = eng.state
    st.hand[0, 1] = 0
    for t, c in ((15, 3), (9, 1), (10, 1), (11, 1), (18, 2), (19, 1), (20, 1), (21, 1), (26, 1), (22, 1)):
        st.hand[0, 1, t] = c
    st.revealed[0, 1], st.reveal_seq[0, 1], st.hidden[0, 1, 15] = True, 0, True
    st.phase[0], st.cur[0], st.actor[0], st.drawn[0] = S.TURN, 1, 1, 26
    part = _seat_lines(render_table(eng, 0, 0), 1)
    assert "亮倒 #1" in part and "+ 3 face down" in part
    shown = st.hand[0, 1].copy()
    shown[15] -= 3
    shown[26] -= 1
    assert (
        f"revealed: {''.join(tile_unicode(t) for t in range(34) for _ in range(shown[t]))} {format_counts(shown)}"
        in part
    )
    own = _seat_lines(render_table(eng, 0, 1), 1)
    assert "face down: 777p" in own and "drew " + tile_unicode(26) in own


def test_finished_hand_shows_the_result():
    eng = _midgame(7, 400)
    assert eng.done[0]
    text = render_table(eng, 0, 0)
    assert "hand over:" in text and "deltas: A " in text and "to act" not in text


def _claim_happy(variant: str, seed: int, stop) -> Engine:
    """Random play preferring claims and kongs on one table until ``stop(engine)`` or the hand ends."""
    eng = Engine(variant, 1)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    bonus = np.where(np.arange(111) >= 68, 2.0, 0.0)
    bonus[108] = 0.0  # never pass
    while not eng.done[0] and not stop(eng):
        m = eng.mask
        eng.step((m * (rng.random(m.shape) + bonus)).argmax(1))
    return eng


def test_chi_melds_and_gejiu_face_up_kong_tiles_are_shown():
    eng = _claim_happy("gejiu", 3, lambda e: e.state.phase[0] == S.PICK)
    st = eng.state
    assert st.phase[0] == S.PICK and (st.meld_kind[0] == S.CHI_MELD).sum() >= 2
    konger = int(st.cur[0])
    for seat in range(4):
        text = render_table(eng, 0, seat)
        for s in range(4):
            part = _seat_lines(text, s)
            for j in range(int(st.n_melds[0, s])):
                if st.meld_kind[0, s, j] == S.CHI_MELD:
                    t = int(st.meld_tile[0, s, j])
                    chi = f"[C {t % 9 + 1}{t % 9 + 2}{t % 9 + 3}{'mps'[t // 9]}<{'ABCD'[int(st.meld_src[0, s, j])]}]"
                    assert chi in part  # e.g. [C 456s<D]: the sequence and whom it was claimed from
        tiles = ", ".join(f"{j}: {tile_unicode(int(t))} {tile_name(int(t))}" for j, t in enumerate(st.kong_tiles[0]))
        assert f"face-up kong tiles: {tiles}" in text  # public: every seat's view shows them
        assert f"{'ABCD'[konger]} takes one of the face-up kong tiles as its replacement" in text
        assert ("legal for " + "ABCD"[konger] + ": kongtile:0, kongtile:1" in text) == (seat == konger)
    assert "face-up kong tiles" not in render_table(_midgame(0, 10), 0, 0)  # Kawuxing has none


def test_session_winds_balances_and_private_lock_are_shown():
    eng = Engine("liuwei", 1, options={"bankroll": 1})
    eng.reset(seed=3, dealer=2)
    st = eng.state
    st.money[0] = [-1.0, 0.5, 0.25, 0.25]  # seat A has paid its whole bankroll: busted (RULES.md §7.7)
    st.lock[0, 1] = 1
    st.dadiaoche[0, 1] = 13
    text = render_table(eng, 0, 1)
    assert text.splitlines()[0].endswith("dealer C · round 1 of 8 (E wind)")
    assert _seat_lines(text, 2).startswith("C player_2 [E wind, dealer")
    assert _seat_lines(text, 3).startswith("D player_3 [S wind")
    a = _seat_lines(text, 0)
    assert a.startswith("A player_0 [W wind, busted]") and "balance 0" in a
    assert "balance 1.5" in _seat_lines(text, 1)
    assert "missed-win lock; 大吊车: may still win on " + tile_unicode(13) + " 5p" in _seat_lines(text, 1)
    assert "missed-win lock" not in render_table(eng, 0, 0)  # another seat's lock is private
    assert "missed-win lock" in render_table(eng, 0, omniscient=True)
    assert not re.search(r"\b[ESWN] wind\b", render_table(_midgame(0, 10), 0, 0))  # no sessions in Kawuxing
