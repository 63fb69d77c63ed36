"""Observation encodings: layout vs the documented tables, a per-table reference encoder, no leaks, sessions."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import mjenv
from mjenv.encoding import actions as A
from mjenv.encoding import observation as O
from mjenv.engine import state as S
from mjenv.engine.core import Engine
from mjenv.rules.scoring.yangzhou import seat_wind

VARIANTS = mjenv.VARIANTS
DOCS = Path(__file__).resolve().parents[1] / "docs" / "observation.md"


# Random play that prefers claims, kongs, kong-tile picks and 亮倒 (every id from 34 on but ``pass``),
# so that melds, chi, reveals, kong tiles and kong money show up in a few short games.
_BONUS = np.where(np.arange(A.N_ACTIONS) >= A.LIANG, 2.0, 0.0)
_BONUS[A.PASS] = 0.0


def _biased(rng: np.random.Generator, m: np.ndarray) -> np.ndarray:
    return (m * (rng.random(m.shape) + _BONUS)).argmax(1)


def _random_states(variant: str, batch: int, seed: int, every: int = 7, options=None):
    """Yield the engine at several points of claim-happy random play (all tables advance together)."""
    eng = Engine(variant, batch, options=options, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    step = 0
    while not eng.done.all():
        if step % every == 0:
            yield eng
        eng.step(_biased(rng, eng.mask))
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
    assert enc.n_channels == sum(b.rows for b in enc.blocks) == 28 + 23 * enc.n + enc.option_rows


@pytest.mark.parametrize(
    "variant,channels,oracle",
    [
        ("kawuxing3", 100, 100 + 18 + 44),
        ("kawuxing4", 122, 122 + 24 + 67),
        ("gejiu", 121, 121 + 24 + 83),
        ("diedaohu", 121, 228),
        ("yangzhou", 121, 228),
        ("yangzhou_new", 121, 228),
        ("liuwei", 121, 228),
    ],
)
def test_versions_and_channel_counts(variant, channels, oracle):
    eng = Engine(variant, 1)
    assert O.ObservationEncoder.for_engine(eng).version == O.OBS_VERSION == "mjenv-obs-v1"
    assert O.OracleEncoder.for_engine(eng).version == O.ORACLE_VERSION == "mjenv-oracle-v1"
    assert O.ObservationEncoder.for_engine(eng).shape == (channels, 34)
    assert O.OracleEncoder.for_engine(eng).shape == (oracle, 34)


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


def _option_columns(variant: str, **options) -> dict:
    """``{(name, value or "#"): column value}`` of the options block (``"#"`` = a number's column)."""
    eng = Engine(variant, 1, options=options or None)
    eng.reset(seed=0)
    enc = O.ObservationEncoder.for_engine(eng)
    flat = enc.block(O.encode(eng, [0]), "options")[0].reshape(-1)
    return {(s.name, "#" if s.numeric else s.value): float(v) for s, v in zip(enc.option_slots, flat)}


def test_bankroll_and_min_fan_options_are_scaled_numbers_with_none_as_its_own_flag():
    liuwei = _option_columns("liuwei")
    assert liuwei[("bankroll", None)] == 0.0 and liuwei[("bankroll", "#")] == pytest.approx(0.5)  # 50 / 100
    assert liuwei[("rounds", 8)] == 1.0 and liuwei[("base", "#")] == 1.0
    unlimited = _option_columns("liuwei", bankroll="none")
    assert unlimited[("bankroll", None)] == 1.0 and unlimited[("bankroll", "#")] == 0.0
    assert _option_columns("diedaohu", bankroll=200)[("bankroll", "#")] == pytest.approx(2.0)
    assert _option_columns("diedaohu")[("bankroll", None)] == 1.0  # 紧淌 by default
    assert _option_columns("yangzhou")[("min_fan", "#")] == pytest.approx(0.75)  # 15 / 20
    new = _option_columns("yangzhou_new")
    assert new[("min_fan", "#")] == pytest.approx(1.0) and new[("yz_style", "new")] == 1.0
    gejiu = _option_columns("gejiu", gejiu_qianggang="replacement_tile")
    assert gejiu[("gejiu_qianggang", "replacement_tile")] == 1.0 and gejiu[("gejiu_qianggang", "add_kong")] == 0.0
    # Every variant's every option is encoded: numbers one column, optional numbers two, choices one per value.
    for variant in VARIANTS:
        eng = Engine(variant, 1)
        enc = O.ObservationEncoder.for_engine(eng)
        per_option = {}
        for sl in enc.option_slots:
            per_option[sl.name] = per_option.get(sl.name, 0) + 1
        assert per_option["base"] == 1
        if "bankroll" in per_option:
            assert per_option["bankroll"] == 2


# ------------------------------------------------------------------------------------------ reference encoder


def _reference(eng: Engine, b: int, seat: int, round_wind: int | None = None) -> dict[str, np.ndarray]:
    """Plain per-table implementation of every v1 block, written from the documented meanings.

    ``round_wind``: the round wind's tile id of the hand (recorded when it was dealt), for variants with
    sessions.
    """
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
    for j in range(2):
        if st.kong_tiles[b, j] >= 0:
            out["kong_tiles"][j, st.kong_tiles[b, j]] = 1
    out["seats"][(int(st.dealer[b]) - seat) % n] = 1
    out["seats"][n + (cur - seat) % n] = 1
    out["seats"][2 * n] = 1 if st.actor[b] == seat and phase != S.DONE else 0
    if eng.sessions[b] is not None:
        out["winds"][0, seat_wind(seat, int(st.dealer[b]))] = 1
        out["winds"][1, round_wind] = 1
    out["phase"][phase] = 1
    out["phase"][6] = 1 if st.turns[b, seat] == 0 else 0
    out["lock"][0] = 1 if st.lock[b, seat] > 0 else 0
    out["lock"][1] = st.lock[b, seat] / 16
    if st.dadiaoche[b, seat] >= 0:
        out["dadiaoche"][0, st.dadiaoche[b, seat]] = 1
    for k in range(n):
        a = (seat + k) % n
        out["money"][k] = st.money[b, a] / (8 * eng.opts.base)
        if getattr(eng.opts, "bankroll", None) is not None:
            balance = eng.balance[b, a] + st.money[b, a]
            out["bankroll"][k] = balance / (eng.opts.bankroll * eng.opts.base)
            out["bankroll"][n + k] = 1 if balance <= 1e-9 else 0
    flat = np.zeros(enc.option_rows * 34, np.float32)
    for i, sl in enumerate(enc.option_slots):
        v = getattr(eng.opts, sl.name)
        if sl.numeric:
            flat[i] = 0 if v is None else v / O.NUMBER_SCALES[sl.name]
        else:
            flat[i] = float(v == sl.value and type(v) is type(sl.value))
    out["options"][:] = flat.reshape(enc.option_rows, 34)
    return out


@pytest.mark.parametrize(
    "variant,preset,options,seed,expect",
    [
        ("kawuxing3", None, None, 1, {"reveal", "money"}),
        ("kawuxing4", None, None, 2, {"reveal", "money"}),
        ("kawuxing3", "crazy", None, 3, {"reveal", "money"}),
        ("gejiu", None, None, 4, {"kong_tiles", "chi"}),  # Gejiu has no kong money (RULES.md §6.4)
        ("yangzhou", None, None, 5, {"winds", "chi"}),  # nor has Yangzhou (§8.1)
        ("liuwei", None, {"bankroll": 20}, 6, {"winds", "money", "bankroll"}),
        # A bankroll of 1 b: one concealed kong (1 b from each other seat, §7.5) busts the payers.
        ("diedaohu", None, {"bankroll": 1}, 7, {"winds", "money", "bankroll", "busted"}),
    ],
)
def test_vectorized_encoder_equals_the_reference(variant, preset, options, seed, expect):
    B = 8
    eng = Engine(variant, B, preset=preset, options=options, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    enc = O.ObservationEncoder.for_engine(eng)
    winds = [s.round_wind if s is not None else None for s in eng.sessions]
    seen = set()
    step = 0
    while not eng.done.all():
        for seat in range(eng.n) if step % 3 == 0 else ():
            obs = enc.encode(eng.state, np.full(B, seat), engine=eng)
            assert obs.dtype == np.float32 and obs.shape == (B,) + enc.shape
            assert np.all(obs >= enc.low) and np.all(obs <= enc.high)
            for b in range(B):
                ref = _reference(eng, b, seat, winds[b])
                full = np.concatenate([ref[blk.name] for blk in enc.blocks])
                if not np.allclose(obs[b], full, atol=1e-6):
                    bad = [
                        blk.name
                        for blk in enc.blocks
                        if not np.allclose(enc.block(obs[b], blk.name), ref[blk.name], atol=1e-6)
                    ]
                    pytest.fail(f"table {b} seat {seat}: blocks {bad} differ from the reference")
                seen.update(blk.name for blk in enc.blocks if enc.block(obs[b], blk.name).any())
                melds = enc.block(obs[b], "melds").reshape(eng.n, 5, 34)
                if melds[:, 1].any():
                    seen.add("chi")
                    # A chi is encoded at its lowest tile and is a real sequence of one suit.
                    t = int(np.flatnonzero(melds[:, 1].sum(0))[0])
                    assert t < 27 and t % 9 <= 6
                if enc.block(obs[b], "bankroll")[eng.n :].any():
                    seen.add("busted")
        # Claims, kongs and 亮倒 first, so that the rarer blocks are exercised.
        eng.step(_biased(rng, eng.mask))
        step += 1
    assert {"melds", "claim", "drawn"} | expect <= seen


# Variant, preset / options: every variant, plus the option mixes that switch on the rarer blocks.
_DIFF_CASES = [(v, None, None) for v in VARIANTS] + [
    ("kawuxing3", "crazy", None),
    ("kawuxing3", None, {"liang_hide_triplets": "on"}),
    ("liuwei", None, {"bankroll": 20}),
    ("diedaohu", None, {"bankroll": 1}),
]


@pytest.mark.parametrize("oracle", [False, True], ids=["v1", "oracle"])
@pytest.mark.parametrize("variant,preset,options", _DIFF_CASES)
def test_compiled_encoder_equals_the_numpy_encoder(variant, preset, options, oracle):
    """The compiled encoder gives bit for bit the arrays of the numpy encoder it replaced (tests/reference_observation.py).

    Random play over two hands per table (the second continuing the session, so winds, balances and
    busted seats move), at every third step, from every seat and from random (table, seat) pairs, on
    an 8-table engine, a one-table engine and a plain (unpacked) copy of the state.
    """
    from tests.reference_observation import reference_encode

    B = 8
    eng = Engine(variant, B, preset=preset, options=options, record_events=False)
    one = Engine(variant, 1, preset=preset, options=options, record_events=False)
    enc = O.encoder_for(eng, oracle)
    rng = np.random.default_rng(5)
    checked = 0
    for hand in range(2):
        if hand == 0:
            eng.reset(seed=31)
            one.reset(seed=31)
        else:
            live = np.flatnonzero(~eng.session_over)
            eng.next_hand(seed=32, tables=live)
            eng.reset(seed=33, tables=np.flatnonzero(eng.session_over))
            one.reset(seed=32) if one.session_over[0] else one.next_hand(seed=32)
        step = 0
        while not (eng.done.all() and one.done.all()):
            if step % 3 == 0:
                for seat in range(eng.n):
                    seats = np.full(B, seat)
                    np.testing.assert_array_equal(
                        enc.encode(eng.state, seats, engine=eng), reference_encode(enc, eng.state, seats, engine=eng)
                    )
                    np.testing.assert_array_equal(
                        enc.encode(one.state, [seat], engine=one), reference_encode(enc, one.state, [seat], engine=one)
                    )
                tables, seats = rng.integers(0, B, 5), rng.integers(0, eng.n, 5)
                copy = eng.state.copy()
                out = np.full((5,) + enc.shape, np.nan, np.float32)
                got = enc.encode(copy, seats, tables, out=out)
                assert got is out
                np.testing.assert_array_equal(out, reference_encode(enc, eng.state, seats, tables))
                checked += 1
            if not eng.done.all():
                eng.step(_biased(rng, eng.mask))
            if not one.done.all():
                one.step(_biased(rng, one.mask))
            step += 1
    assert checked > 20


def test_encode_rejects_bad_tables_seats_and_out_and_writes_nothing():
    eng = Engine("kawuxing3", 2)
    eng.reset(seed=0)
    enc = O.ObservationEncoder.for_engine(eng)
    out = np.full((2,) + enc.shape, 7.0, np.float32)
    with pytest.raises(ValueError, match=r"seats\[1\] = 3"):
        enc.encode(eng.state, [0, 3], out=out)
    with pytest.raises(ValueError, match=r"tables\[0\] = 2"):
        enc.encode(eng.state, [0, 1], [2, 0], out=out)
    with pytest.raises(ValueError, match=r"tables\[1\] = -1"):
        enc.encode(eng.state, [0, 1], [0, -1], out=out)
    assert (out == 7.0).all()
    with pytest.raises(ValueError, match="out must be float32"):
        enc.encode(eng.state, [0, 1], out=np.zeros((2,) + enc.shape, np.float64))
    with pytest.raises(ValueError, match="state: 4 seats"):
        enc.encode(Engine("kawuxing4", 1).state, [0])
    # A strided ``out`` (every other row of a bigger buffer) is filled like a contiguous one.
    big = np.zeros((4,) + enc.shape, np.float32)
    enc.encode(eng.state, [0, 1], out=big[::2])
    np.testing.assert_array_equal(big[::2], enc.encode(eng.state, [0, 1]))
    assert not big[1::2].any()


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
        new.dadiaoche[b, a] = rng.choice(np.append(kinds, -1))
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


@pytest.mark.parametrize(
    "variant,options",
    [
        ("kawuxing3", None),
        ("kawuxing4", None),
        ("gejiu", None),  # chi melds and face-up kong tiles in play
        ("yangzhou", None),  # chi, winds, the 0/1 lock
        ("liuwei", {"bankroll": 20}),  # winds, balances, kong money
    ],
)
def test_no_private_information_reaches_the_v1_encoding(variant, options):
    rng = np.random.default_rng(11)
    checked = 0
    for eng in _random_states(variant, 6, 21, every=9, options=options):
        enc, orc = O.ObservationEncoder.for_engine(eng), O.OracleEncoder.for_engine(eng)
        for observer in range(eng.n):
            seats = np.full(6, observer)
            base = enc.encode(eng.state, seats, engine=eng)
            for b in range(6):
                other = _perturb_private(eng, b, observer, rng)
                one = ([observer], [b])
                np.testing.assert_array_equal(
                    enc.encode(other, *one, engine=eng)[0], base[b], err_msg=f"leak at table {b}, observer {observer}"
                )
                # The oracle sees the difference, so the perturbation did change hidden state.
                if eng.state.phase[b] != S.DONE:
                    assert not np.array_equal(
                        orc.encode(other, *one, engine=eng)[0], orc.encode(eng.state, *one, engine=eng)[0]
                    )
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


# ------------------------------------------------------------------------------------------ 4-player blocks


def test_gejiu_kong_tiles_are_public_and_the_pick_phase_is_encoded():
    from tests.engine_script import make_wall

    eng = Engine("gejiu", 1)
    hands = {"A": "1111p2222p3333p44z", "B": "5555p6666p7777p1z", "C": "8888p9999p1111s2s", "D": "5555s6666s7777s8s"}
    eng.reset(walls=[make_wall(eng, hands, back="5z6z7z")])
    enc = O.ObservationEncoder.for_engine(eng)
    five_z, six_z, seven_z = 31, 32, 33
    seats, table = [0, 1, 2, 3], [0, 0, 0, 0]
    obs = O.encode(eng, seats, table)
    for k in range(4):  # every seat sees the two face-up tiles, slot 0 first (RULES.md §6.3)
        tiles = enc.block(obs[k], "kong_tiles")
        assert tiles.sum() == 2 and tiles[0, five_z] == 1 and tiles[1, six_z] == 1
    eng.step([A.action_id("kong:1p")])
    assert eng.state.phase[0] == S.PICK and eng.mask[0, [A.KONGTILE_0, A.KONGTILE_1]].all()
    obs = O.encode(eng, seats, table)
    phase = enc.block(obs, "phase")[:, :, 0]
    np.testing.assert_array_equal(phase[:, :6], np.tile([0, 0, 0, 0, 0, 1], (4, 1)))  # pick, for everyone
    assert enc.block(obs[0], "seats")[-1].all() and not enc.block(obs[1:], "seats")[:, -1].any()
    assert enc.block(obs[2], "melds").reshape(4, 5, 34)[2, 4, 9] == 1  # seat 2 sees A's concealed kong of 1p
    eng.step([A.KONGTILE_1])
    assert eng.state.hand[0, 0, six_z] == 1  # the konger took slot 1
    tiles = enc.block(O.encode(eng, [3])[0], "kong_tiles")
    assert tiles[0, five_z] == 1 and tiles[1, seven_z] == 1 and tiles.sum() == 2  # the next tile was turned up
    # No other variant has kong tiles: the block stays zero.
    other = Engine("yangzhou", 1)
    other.reset(seed=0)
    assert not O.ObservationEncoder.for_engine(other).block(O.encode(other, [0]), "kong_tiles").any()


def test_own_dadiaoche_tile_is_private_and_the_oracle_shows_every_seat():
    eng = Engine("yangzhou", 1)
    eng.reset(seed=3)
    st = eng.state
    st.lock[0, 1] = 1
    st.dadiaoche[0, 1] = 13  # 5p
    enc, orc = O.ObservationEncoder.for_engine(eng), O.OracleEncoder.for_engine(eng)
    obs = enc.encode(st, [0, 1, 2, 3], [0, 0, 0, 0], engine=eng)
    dd = enc.block(obs, "dadiaoche")[:, 0]
    assert dd[1, 13] == 1 and dd[1].sum() == 1 and not dd[[0, 2, 3]].any()
    np.testing.assert_array_equal(enc.block(obs, "lock")[:, 0, 0], [0, 1, 0, 0])
    np.testing.assert_allclose(enc.block(obs, "lock")[1, 1], 1 / 16)
    od = orc.block(orc.encode(st, [0], engine=eng)[0], "oracle_dadiaoche")  # observer 0: seat 1 is relative 1
    assert od[1, 13] == 1 and od.sum() == 1


def _play_hand(eng: Engine, rng: np.random.Generator, round_winds: list, check, every: int = 12) -> None:
    """Play every table's current hand with claim-happy random moves, calling ``check`` along the way."""
    step = 0
    while not eng.done.all():
        if step % every == 0:
            check(eng, round_winds)
        eng.step(_biased(rng, eng.mask))
        step += 1
    check(eng, round_winds)


@pytest.mark.parametrize(
    "variant,options,hands",
    [
        ("yangzhou", None, 6),  # a drawn hand passes the deal (draw_dealer: rotate): South after 4 passes
        ("liuwei", {"bankroll": 4}, 3),  # the Liuwei dealer keeps the deal on a draw: balances, not rounds
    ],
)
def test_winds_and_balances_follow_the_session_across_hands(variant, options, hands):
    """Over a session (``next_hand``), winds and balances equal the engine's session and bankroll."""
    B = 2
    eng = Engine(variant, B, options=options, record_events=False)
    enc = O.ObservationEncoder.for_engine(eng)
    rng = np.random.default_rng(8)
    seen_rounds, seen_balances = set(), set()

    def check(eng, round_winds):
        for seat in range(4):
            obs = enc.encode(eng.state, np.full(B, seat), engine=eng)
            for b in range(B):
                ref = _reference(eng, b, seat, round_winds[b])
                for name in ("winds", "bankroll", "seats", "money"):
                    np.testing.assert_allclose(enc.block(obs[b], name), ref[name], atol=1e-6, err_msg=name)
                seen_rounds.add(round_winds[b])
                seen_balances.update(np.round(enc.block(obs[b], "bankroll")[:4, 0], 3).tolist())

    eng.reset(seed=2)
    for seat in range(4):  # a fresh session is what the encoder assumes without an engine
        np.testing.assert_array_equal(
            enc.encode(eng.state, np.full(B, seat)), enc.encode(eng.state, np.full(B, seat), engine=eng)
        )
    for hand in range(hands):
        _play_hand(eng, rng, [s.round_wind for s in eng.sessions], check)
        over = np.flatnonzero(eng.session_over)
        eng.next_hand(seed=100 + hand, tables=np.flatnonzero(~eng.session_over))
        if len(over):  # a bankroll session that ended starts afresh
            eng.reset(seed=200 + hand, tables=over)
    if variant == "yangzhou":
        assert seen_rounds == {27, 28}  # East, then South from the fifth hand
    else:
        assert len(seen_balances) > 3  # balances moved away from the starting bankroll


@pytest.mark.parametrize(
    "variant,options", [("kawuxing3", None), ("yangzhou", None), ("liuwei", {"bankroll": 4}), ("gejiu", None)]
)
def test_row_encoder_equals_encode_over_a_session_and_returns_fresh_arrays(variant, options):
    """The per-seat fast path (the AEC env's observe) equals ``encode`` of that table and seat at every step,
    also deeper into a session (round wind, balances), and never hands out the same memory twice."""
    from mjenv.engine.sampling import ActionSampler

    eng = Engine(variant, 2, options=options, record_events=False)
    enc = O.ObservationEncoder.for_engine(eng)
    row = enc.row_encoder(eng, table=1)
    sampler = ActionSampler(5)
    eng.reset(seed=4)
    out = np.empty((1,) + enc.shape, np.float32)
    steps = 0
    for hand in range(3):
        while not eng.done.all():
            for seat in range(eng.n):
                want = enc.encode(eng.state, [seat], [1], engine=eng)[0]
                got = row(seat)
                np.testing.assert_array_equal(got, want)
                assert row(seat, out) is not None and np.array_equal(out[0], want)
                assert not np.shares_memory(got, row(seat))
            eng.step(sampler.sample(eng.mask))
            steps += 1
        over = np.flatnonzero(eng.session_over)
        eng.next_hand(seed=10 + hand, tables=np.flatnonzero(~eng.session_over))
        if len(over):
            eng.reset(seed=20 + hand, tables=over)
    assert steps > 50 and eng.hand_number[1] > 0
    with pytest.raises(ValueError, match="seats"):
        row(eng.n)
    with pytest.raises(ValueError, match="seats"):
        row(-1)
    with pytest.raises(ValueError, match="out must be"):
        row(0, np.empty(enc.shape, np.float32))
    with pytest.raises(ValueError, match="table"):
        enc.row_encoder(eng, table=2)
