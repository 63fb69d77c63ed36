"""Observation encodings: layout vs the documented tables, a per-table reference encoder, no leaks."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from mjenv.encoding import observation as O
from mjenv.engine import state as S
from mjenv.engine.core import Engine

VARIANTS = ("kawuxing3", "kawuxing4")
DOCS = Path(__file__).resolve().parents[1] / "docs" / "observation.md"


def _random_states(variant: str, batch: int, seed: int, every: int = 7):
    """Yield the engine at several points of random play (all tables advance together)."""
    eng = Engine(variant, batch, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    step = 0
    while not eng.done.all():
        if step % every == 0:
            yield eng
        m = eng.mask
        eng.step((rng.random(m.shape) * m).argmax(1))
        step += 1
    yield eng


# ------------------------------------------------------------------------------------------ layout


def _doc_tables(text: str) -> list[list[tuple[str, str]]]:
    """Every markdown table with a ``block | rows | meaning`` header, as (block, rows) pairs."""
    tables, cur = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.strip().startswith("|") else None
        if cells and cells[:2] == ["block", "rows"]:
            cur = []
            tables.append(cur)
        elif cells and cur is not None and not set(cells[0]) <= {"-", ":"}:
            cur.append((cells[0].strip("`"), cells[1]))
        elif not cells:
            cur = None
    return tables


def _rows(expr: str, enc: O.ObservationEncoder) -> int:
    """Value of a rows cell: a sum of terms ``4``, ``5n``, ``n``, ``opt`` or ``L``."""
    names = {"n": enc.n, "opt": enc.option_rows, "L": enc.live_wall}
    total = 0
    for term in expr.split("+"):
        m = re.fullmatch(r"\s*(\d*)\s*(n|opt|L)?\s*", term)
        assert m and (m.group(1) or m.group(2)), f"cannot read rows {expr!r}"
        coef = int(m.group(1)) if m.group(1) else 1
        total += coef * (names[m.group(2)] if m.group(2) else 1)
    return total


@pytest.mark.parametrize("source", ["docstring", "docs"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_documented_block_tables_match_the_encoders(variant, source):
    text = O.__doc__ if source == "docstring" else DOCS.read_text(encoding="utf-8")
    v1, oracle_extra = _doc_tables(text)[:2]
    eng = Engine(variant, 1)
    enc, orc = O.ObservationEncoder.for_engine(eng), O.OracleEncoder.for_engine(eng)
    assert [name for name, _ in v1] == [b.name for b in enc.blocks]
    assert [_rows(r, enc) for _, r in v1] == [b.rows for b in enc.blocks]
    extra = orc.blocks[len(enc.blocks) :]
    assert [name for name, _ in oracle_extra] == [b.name for b in extra]
    assert [_rows(r, orc) for _, r in oracle_extra] == [b.rows for b in extra]
    assert enc.n_channels == sum(b.rows for b in enc.blocks) == 22 + 21 * enc.n + enc.option_rows


def test_versions_and_channel_counts():
    e3, e4 = Engine("kawuxing3", 1), Engine("kawuxing4", 1)
    assert O.ObservationEncoder.for_engine(e3).version == O.OBS_VERSION == "mjenv-obs-v1"
    assert O.OracleEncoder.for_engine(e3).version == O.ORACLE_VERSION == "mjenv-oracle-v1"
    assert O.ObservationEncoder.for_engine(e3).shape == (88, 34)
    assert O.ObservationEncoder.for_engine(e4).shape == (108, 34)
    assert O.OracleEncoder.for_engine(e3).shape == (88 + 12 + 3 + 44, 34)


def test_option_slots_follow_the_options_and_skip_match_level_ones():
    eng = Engine("kawuxing3", 1, preset="crazy")
    enc = O.ObservationEncoder.for_engine(eng)
    names = {s.name for s in enc.option_slots}
    assert "seat_rotation" not in names and "escape_penalty" not in names
    assert "suits" in names and "suits" not in {
        s.name for s in O.ObservationEncoder.for_engine(Engine("kawuxing4", 1)).option_slots
    }
    flat = enc.block(enc.encode(eng.state, [0]), "options")[0].reshape(-1)
    on = {(s.name, s.value) for s, v in zip(enc.option_slots, flat) if v == 1 and not s.numeric}
    assert ("cap", None) in on and ("tingtou", "each") in on and ("kaikou", "hard") in on
    assert ("cap", 8) not in on
    base = next(i for i, s in enumerate(enc.option_slots) if s.name == "base")
    assert flat[base] == 1.0
    # Every option that stays has exactly one slot on.
    for name in names - {"base"}:
        assert sum(v for s, v in zip(enc.option_slots, flat) if s.name == name) == 1


# ------------------------------------------------------------------------------------------ reference encoder


def _reference(eng: Engine, b: int, seat: int) -> dict[str, np.ndarray]:
    """Plain per-table implementation of every v1 block, written from the documented meanings."""
    st, n = eng.state, eng.n
    enc = O.ObservationEncoder.for_engine(eng)
    out = {blk.name: np.zeros((blk.rows, 34), np.float32) for blk in enc.blocks}
    therm = lambda c: (np.asarray(c)[None, :] > np.arange(4)[:, None]).astype(np.float32)  # noqa: E731
    phase, cur = int(st.phase[b]), int(st.cur[b])
    out["hand"][:] = therm(st.hand[b, seat])
    if phase == S.TURN and cur == seat and st.drawn[b] >= 0:
        out["drawn"][0, st.drawn[b]] = 1
    out["kinds"][0] = eng.kinds
    for k in range(n):
        a = (seat + k) % n
        for j in range(int(st.n_melds[b, a])):
            out["melds"][5 * k + int(st.meld_kind[b, a, j]) - 1, st.meld_tile[b, a, j]] += 1
        counts = np.zeros(34, int)
        rec = np.zeros(34)
        for p in range(int(st.river_len[b, a])):
            t = int(st.river[b, a, p])
            counts[t] += 1
            rec[t] += O.RECENCY_DECAY ** (int(st.n_discards[b]) - 1 - int(st.river_time[b, a, p]))
        out["discards"][5 * k : 5 * k + 4] = therm(counts)
        out["discards"][5 * k + 4] = rec
        if st.revealed[b, a]:
            shown = st.hand[b, a].astype(int) - 3 * st.hidden[b, a]
            if k != 0 and phase == S.TURN and cur == a and st.drawn[b] >= 0:
                shown[st.drawn[b]] -= 1
            out["reveal"][7 * k] = 1
            out["reveal"][7 * k + 1] = 1 if st.reveal_seq[b, a] == 0 else 0
            out["reveal"][7 * k + 2 : 7 * k + 6] = therm(shown)
            out["reveal"][7 * k + 6] = 3 * st.hidden[b, a].sum() / 12
    if phase in (S.CLAIM, S.ROB):
        out["claim"][0, st.claim_tile[b]] = 1
        out["claim"][1 if phase == S.CLAIM else 2] = 1
        out["claim"][3 + (int(st.claim_from[b]) - seat) % n] = 1
    if phase == S.TURN:
        out["kong_chain"][0] = st.after_kong[b] / 4
    if phase == S.CLAIM:
        out["kong_chain"][1] = st.claim_kong_pos[b] / 4
    left = int(st.back[b]) - int(st.front[b])
    out["wall"][0] = left / enc.live_wall
    out["wall"][1] = 1 if left == 0 and phase != S.DONE else 0
    out["seats"][(int(st.dealer[b]) - seat) % n] = 1
    out["seats"][n + (cur - seat) % n] = 1
    out["seats"][2 * n] = 1 if st.actor[b] == seat and phase != S.DONE else 0
    out["phase"][phase] = 1
    out["phase"][5] = 1 if st.turns[b, seat] == 0 else 0
    out["lock"][0] = 1 if st.lock[b, seat] > 0 else 0
    out["lock"][1] = st.lock[b, seat] / 16
    for k in range(n):
        out["money"][k] = st.money[b, (seat + k) % n] / (8 * eng.opts.base)
    flat = np.zeros(enc.option_rows * 34, np.float32)
    for i, sl in enumerate(enc.option_slots):
        v = getattr(eng.opts, sl.name)
        flat[i] = float(v) if sl.numeric else float(v == sl.value and type(v) is type(sl.value))
    out["options"][:] = flat.reshape(enc.option_rows, 34)
    return out


@pytest.mark.parametrize(
    "variant,preset,seed", [("kawuxing3", None, 1), ("kawuxing4", None, 2), ("kawuxing3", "crazy", 3)]
)
def test_vectorized_encoder_equals_the_reference(variant, preset, seed):
    B = 8
    eng = Engine(variant, B, preset=preset, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    enc = O.ObservationEncoder.for_engine(eng)
    seen = set()
    step = 0
    while not eng.done.all():
        for seat in range(eng.n) if step % 3 == 0 else ():
            obs = enc.encode(eng.state, np.full(B, seat))
            assert obs.dtype == np.float32 and obs.shape == (B,) + enc.shape
            assert np.all(obs >= enc.low) and np.all(obs <= enc.high)
            for b in range(B):
                ref = _reference(eng, b, seat)
                full = np.concatenate([ref[blk.name] for blk in enc.blocks])
                if not np.allclose(obs[b], full, atol=1e-6):
                    bad = [
                        blk.name
                        for blk in enc.blocks
                        if not np.allclose(enc.block(obs[b], blk.name), ref[blk.name], atol=1e-6)
                    ]
                    pytest.fail(f"table {b} seat {seat}: blocks {bad} differ from the reference")
                seen.update(blk.name for blk in enc.blocks if enc.block(obs[b], blk.name).any())
        m = eng.mask
        # Prefer pongs, kongs and 亮倒 so that the rarer blocks are exercised.
        pri = m * (rng.random(m.shape) + 2.0 * m * (np.arange(111) >= 34))
        eng.step(pri.argmax(1))
        step += 1
    assert {"melds", "reveal", "claim", "money", "drawn"} <= seen


def test_tables_argument_encodes_any_table_and_seat_pairs():
    eng = next(s for i, s in enumerate(_random_states("kawuxing3", 5, 4)) if i == 3)
    enc = O.ObservationEncoder.for_engine(eng)
    full = {s: enc.encode(eng.state, np.full(5, s)) for s in range(3)}
    tables, seats = np.array([4, 0, 4, 2]), np.array([1, 2, 0, 0])
    part = enc.encode(eng.state, seats, tables)
    for j in range(4):
        np.testing.assert_array_equal(part[j], full[seats[j]][tables[j]])
    with pytest.raises(ValueError):
        enc.encode(eng.state, [0, 1], [0])


def test_oracle_adds_hands_locks_and_wall_in_order():
    eng = next(s for i, s in enumerate(_random_states("kawuxing3", 3, 5)) if i == 4)
    orc = O.OracleEncoder.for_engine(eng)
    enc = O.ObservationEncoder.for_engine(eng)
    obs = orc.encode(eng.state, [1, 1, 1])
    np.testing.assert_array_equal(obs[:, : enc.n_channels], enc.encode(eng.state, [1, 1, 1]))
    st = eng.state
    for b in range(3):
        hands = orc.block(obs[b], "oracle_hands").reshape(3, 4, 34)
        for k in range(3):
            np.testing.assert_array_equal(hands[k].sum(0), st.hand[b, (1 + k) % 3])
        wall = orc.block(obs[b], "oracle_wall")
        live = st.wall[b, st.front[b] : st.back[b]]
        assert wall.sum() == len(live)
        np.testing.assert_array_equal(wall[: len(live)].argmax(1), live)


# ------------------------------------------------------------------------------------------ no leaks


def _perturb_private(eng: Engine, b: int, observer: int, rng: np.random.Generator) -> S.State:
    """A copy of the state with everything private to the seats other than ``observer`` changed at table b.

    Tile conservation is not kept (the encoder never checks it); what the observer may know is.
    """
    st = eng.state
    new = st.copy()
    kinds = np.flatnonzero(eng.kinds)
    front, back = int(new.front[b]), int(new.back[b])
    new.wall[b, front:back] = rng.permutation(new.wall[b, front:back])
    for a in range(eng.n):
        if a == observer:
            continue
        new.lock[b, a] = rng.integers(0, 40)
        new.claim_value[b, a] = rng.integers(0, 40)
        new.claim_opts[b, a] = rng.integers(0, 8)
        new.claim_reply[b, a] = rng.integers(-1, 111)
        holding = new.phase[b] == S.TURN and new.cur[b] == a and new.drawn[b] >= 0
        if not new.revealed[b, a]:
            size = int(new.hand[b, a].sum())
            fresh = np.bincount(rng.choice(kinds, size=size), minlength=34)
            while fresh.max() > 4:
                fresh = np.bincount(rng.choice(kinds, size=size), minlength=34)
            new.hand[b, a] = fresh
            if holding:
                new.drawn[b] = int(rng.choice(np.flatnonzero(fresh)))
            continue
        drawn = int(new.drawn[b]) if holding else -1
        for t in np.flatnonzero(new.hidden[b, a]):
            u = int(rng.choice([u for u in kinds if new.hand[b, a, u] == 0 and u != drawn]))
            new.hand[b, a, t] -= 3
            new.hand[b, a, u] += 3
            new.hidden[b, a, t], new.hidden[b, a, u] = False, True
        if holding and new.hand[b, a, drawn] - 3 * new.hidden[b, a, drawn] >= 1:
            u = int(rng.choice([u for u in kinds if new.hand[b, a, u] == 0]))
            new.hand[b, a, drawn] -= 1
            new.hand[b, a, u] += 1
            new.drawn[b] = u
    return new


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_private_information_reaches_the_v1_encoding(variant):
    rng = np.random.default_rng(11)
    checked = 0
    for eng in _random_states(variant, 6, 21, every=9):
        enc, orc = O.ObservationEncoder.for_engine(eng), O.OracleEncoder.for_engine(eng)
        for observer in range(eng.n):
            seats = np.full(6, observer)
            base = enc.encode(eng.state, seats)
            for b in range(6):
                other = _perturb_private(eng, b, observer, rng)
                one = ([observer], [b])
                np.testing.assert_array_equal(
                    enc.encode(other, *one)[0], base[b], err_msg=f"leak at table {b}, observer {observer}"
                )
                # The oracle sees the difference, so the perturbation did change hidden state.
                if eng.state.phase[b] != S.DONE:
                    assert not np.array_equal(orc.encode(other, *one)[0], orc.encode(eng.state, *one)[0])
                checked += 1
    assert checked > 60


def test_opponent_face_down_triplets_and_fresh_draw_are_hidden():
    """A revealed seat's face-down triplet kinds and just-drawn tile are invisible; its own view shows them."""
    eng = Engine("kawuxing3", 1)
    eng.reset(seed=0)
    st = eng.state
    # Hand-made state: seat 1 revealed with a face-down 777p triplet, on turn having drawn 9s.
    st.hand[0, 1] = 0
    for t, c in ((15, 3), (9, 1), (10, 1), (11, 1), (18, 2), (19, 1), (20, 1), (21, 1), (26, 1), (22, 1)):
        st.hand[0, 1, t] = c
    st.revealed[0, 1] = True
    st.reveal_seq[0, 1] = 0
    st.hidden[0, 1, 15] = True
    st.phase[0], st.cur[0], st.actor[0], st.drawn[0] = S.TURN, 1, 1, 26
    enc = O.ObservationEncoder.for_engine(eng)
    obs0 = enc.encode(st, [0])[0]
    rv = enc.block(obs0, "reveal").reshape(3, 7, 34)
    shown = rv[1, 2:6].sum(0)
    assert shown[15] == 0 and shown[26] == 0 and shown[9] == 1 and shown[18] == 2
    assert rv[1, 0].all() and rv[1, 1].all() and np.allclose(rv[1, 6], 3 / 12)
    obs1 = enc.encode(st, [1])[0]
    assert enc.block(obs1, "hand")[:, 15].sum() == 3 and enc.block(obs1, "drawn")[0, 26] == 1
    assert enc.block(obs0, "drawn").sum() == 0


def test_module_encode_helper_uses_the_cached_encoder():
    eng = Engine("kawuxing4", 2)
    eng.reset(seed=1)
    assert O.encoder_for(eng) is O.encoder_for(eng)
    np.testing.assert_array_equal(O.encode(eng, [0, 3]), O.encoder_for(eng).encode(eng.state, [0, 3]))
    assert O.encode(eng, [0, 0], oracle=True).shape == (2,) + O.OracleEncoder.for_engine(eng).shape
    assert math.isinf(O.encoder_for(eng).high[O.encoder_for(eng).slices["money"]].max())
