"""mjenv-obs-v2 (mjenv/encoding/compact.py): v1 recovered exactly from v2 on random play of every variant."""

from __future__ import annotations

import numpy as np
import pytest

import mjenv
from mjenv.encoding import compact as C
from mjenv.encoding.observation import ObservationEncoder, OracleEncoder
from mjenv.engine.core import Engine
from tests.test_observation import _biased

VARIANTS = mjenv.VARIANTS


def _states(variant: str, batch: int, seed: int, hands: int = 2, every: int = 5):
    """Yield the engine at points of claim-happy random play over ``hands`` hands of each table's match (the
    second hand on: dealers, winds, balances of a session in progress)."""
    eng = Engine(variant, batch, record_events=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for hand in range(hands):
        step = 0
        while not eng.done.all():
            if step % every == 0:
                yield eng
            eng.step(_biased(rng, eng.mask))
            step += 1
        yield eng
        live = np.flatnonzero(~eng.session_over)
        if hand + 1 < hands and len(live):
            eng.next_hand(seed=seed + hand + 1, tables=live)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit (signed zeros and NaNs included)."""
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("oracle", [False, True])
def test_v2_decodes_to_v1_exactly(variant, oracle):
    v1cls, v2cls = (OracleEncoder, C.CompactOracleEncoder) if oracle else (ObservationEncoder, C.CompactEncoder)
    checked = 0
    for eng in _states(variant, 12, seed=7 + len(variant)):
        v1, v2 = v1cls.for_engine(eng), v2cls.for_engine(eng)
        for seats in (eng.state.actor.astype(np.int64), (eng.state.actor + 1) % eng.n):
            a = v1.encode(eng.state, seats, engine=eng)
            b = v2.encode(eng.state, seats, engine=eng)
            assert b.dtype == np.uint8 and b.shape == (len(seats), v2.n_bytes)
            assert _same(v2.decode(b), a)
            assert np.array_equal(v2.pack(a), b)  # and v1 arrays made earlier convert to the same bytes
            checked += 1
    assert checked > 20
    # the encoder writes at most half of v1's bytes (in fact about a seventh)
    assert 2 * v2.n_bytes <= 4 * v1.shape[0] * 34


def test_v2_rows_carry_information():
    """Every kind of v1 row shows up non-zero in the play checked (a map that dropped a kind would be caught)."""
    seen = set()
    for eng in _states("kawuxing3", 16, seed=3):
        v2 = C.CompactEncoder.for_engine(eng)
        dec = v2.decode(v2.encode(eng.state, eng.state.actor, engine=eng))
        for r in np.flatnonzero(np.abs(dec).sum((0, 2)) > 0):
            seen.add(int(v2.rmap[r, 0]))
    assert seen == {C._RK_PLANE, C._RK_THERMO, C._RK_SCALAR, C._RK_FLOATS}


def test_torch_decoder_matches():
    torch = pytest.importorskip("torch")
    for variant in ("kawuxing3", "liuwei"):
        for eng in _states(variant, 8, seed=11, hands=1, every=9):
            v1, v2 = ObservationEncoder.for_engine(eng), C.CompactEncoder.for_engine(eng)
            a = v1.encode(eng.state, eng.state.actor, engine=eng)
            b = v2.encode(eng.state, eng.state.actor, engine=eng)
            dec = C.torch_decoder(v2)
            assert _same(dec(torch.from_numpy(b)).numpy(), a)
            assert _same(dec(torch.from_numpy(b[None])).numpy()[0], a)  # any leading shape
    with pytest.raises(ValueError, match="uint8"):
        dec(torch.zeros(2, v2.n_bytes, dtype=torch.float32))


def test_row_encoder_v2():
    eng = Engine("gejiu", 1)
    eng.reset(seed=5)
    v2 = C.CompactEncoder.for_engine(eng)
    row = v2.row_encoder(eng)
    rng = np.random.default_rng(0)
    while not eng.done.all():
        for s in range(eng.n):
            assert np.array_equal(row(s), v2.encode(eng.state, [s], engine=eng)[0])
        eng.step(_biased(rng, eng.mask))


def test_envs_take_obs_version():
    a = mjenv.vector_env("kawuxing3", 4, seed=3)
    b = mjenv.vector_env("kawuxing3", 4, seed=3, obs_version=C.OBS_V2_VERSION)
    assert b.single_observation_space.dtype == np.uint8
    oa, ia = a.reset(seed=3)
    ob, ib = b.reset(seed=3)
    v2 = b.core.encoder
    for _ in range(30):
        assert _same(v2.decode(ob), oa)
        assert b.single_observation_space.contains(ob[0])
        acts = np.array([np.flatnonzero(m)[0] for m in ia["action_mask"]])
        oa, *_, ia = a.step(acts)
        ob, *_, ib = b.step(acts)
    env = mjenv.env("liuwei", obs_version=C.OBS_V2_VERSION)
    ref = mjenv.env("liuwei")
    env.reset(seed=1)
    ref.reset(seed=1)
    for _ in range(40):
        agent = env.agent_selection
        obs = env.observe(agent)["observation"]
        assert obs.dtype == np.uint8 and env.observation_space(agent)["observation"].contains(obs)
        assert _same(env.unwrapped.encoder.decode(obs), ref.observe(agent)["observation"])
        act = int(np.flatnonzero(env.observe(agent)["action_mask"])[0])
        env.step(act)
        ref.step(act)


def test_bad_input():
    eng = Engine("kawuxing3", 2)
    eng.reset(seed=0)
    with pytest.raises(ValueError, match="obs_version"):
        C.encoder_for(eng, obs_version="mjenv-obs-v9")
    with pytest.raises(ValueError, match="unknown observation version"):
        C.encoder_class("v3")
    v2 = C.CompactEncoder.for_engine(eng)
    with pytest.raises(ValueError, match="uint8"):
        v2.decode(np.zeros((2, v2.n_bytes), np.float32))
    with pytest.raises(ValueError, match="must end in"):
        v2.pack(np.zeros((2, 99, 34), np.float32))
    with pytest.raises(ValueError, match="out must be uint8"):
        v2.encode(eng.state, [0, 0], out=np.zeros((2, 100, 34), np.float32))
    with pytest.raises(ValueError, match="obs_version"):
        mjenv.vector_env("kawuxing3", 2, obs_version="v2")


def test_policy_reads_v2():
    pytest.importorskip("torch")
    from agents.players.policy import PolicyAgent

    pol = PolicyAgent("agents/checkpoints/kawuxing3-default.pt", "kawuxing3")
    for eng in _states("kawuxing3", 8, seed=2, hands=1, every=11):
        v1, v2 = ObservationEncoder.for_engine(eng), C.CompactEncoder.for_engine(eng)
        a = v1.encode(eng.state, eng.state.actor, engine=eng)
        b = v2.encode(eng.state, eng.state.actor, engine=eng)
        live = ~eng.done
        if live.any():
            assert np.array_equal(pol.logits(b[live], eng.mask[live]), pol.logits(a[live], eng.mask[live]))
