"""The derived hand features ``mjenv-hand-v1`` (mjenv/encoding/handfeat.py) against slow, obvious reference code: the
agents' decoding of the v1 rows (:class:`agents.players.base.ObsView`), the batched and recursive shanten of
:mod:`mjenv.encoding.shanten`, the plans of :mod:`agents.players.plans` and the rules' wait sets
(:func:`mjenv.rules.hand.wait_mask`), on random play of every variant and on heuristic-flush play of Kawuxing (where
亮倒 hands are face up)."""

from __future__ import annotations

import numpy as np
import pytest

import mjenv
from agents.players.base import ObsView
from agents.players.plans import flush_allowed, plan_shanten, triplets_shanten_slow
from mjenv.encoding import handfeat as F
from mjenv.encoding.handfeat import HandFeatures
from mjenv.encoding.observation import ObservationEncoder
from mjenv.encoding.shanten import shanten, shanten_reference, shanten_seven_pairs, ukeire
from mjenv.engine.core import Engine
from mjenv.rules.families import rule_family
from mjenv.rules.hand import wait_mask
from tests.test_observation import _biased


def _random_obs(variant: str, batch: int = 6, seed: int = 3, every: int = 4) -> np.ndarray:
    """v1 observations of every seat at points of claim-happy random play."""
    eng = Engine(variant, batch, record_events=False)
    eng.reset(seed=seed)
    enc = ObservationEncoder(variant)
    rng = np.random.default_rng(seed)
    out, step = [], 0
    while not eng.done.all():
        if step % every == 0:
            for s in range(enc.n):
                out.append(enc.encode(eng.state, np.full(batch, s)))
        eng.step(_biased(rng, eng.mask))
        step += 1
    return np.concatenate(out)


def _scaled(s) -> float:
    return min(int(s) + 1, 9) / 9.0


def reference(hf: HandFeatures, obs: np.ndarray) -> np.ndarray:
    """The rows of docs/observation.md ("Derived hand features"), one observation at a time, from the agents'
    decoding and the numpy / recursive hand arithmetic."""
    view = ObsView(hf.variant)
    d = view.decode(obs)
    kinds = view.kinds
    family = rule_family(view.rules.family)
    sp = bool(family.seven_pairs)
    honors = family.name != "kawuxing"
    live = d.live()
    n = hf.n
    chi_rows = view.rows(obs, "melds")[:, 1::5, :].round().astype(int)  # each seat's chi row
    out = np.zeros((len(obs), hf.rows, 34), np.float32)
    in_play = [bool(kinds[9 * s : 9 * s + 9].any()) for s in range(3)]
    for i in range(len(obs)):
        h = d.hand[i].astype(np.int64)
        nm = int(d.n_melds[i, 0])
        nchi = int(chi_rows[i, 0].sum())
        f = out[i]
        f[F.H_LIVE] = live[i] / 4.0
        s_now = int(shanten(h, nm, sp))
        f[F.H_SHANTEN] = _scaled(s_now)
        if h.sum() % 3 == 2:
            held = np.flatnonzero(h)
            after = np.repeat(h[None], len(held), 0)
            after[np.arange(len(held)), held] -= 1
            base, accepted, _ = ukeire(after, nm, np.repeat(live[i][None], len(held), 0), kinds, sp)
            for k, t in enumerate(held):
                f[F.D_SHANTEN, t] = _scaled(base[k])
                f[F.D_UKEIRE, t] = min(accepted[k] / 64.0, 1.0)
                f[F.D_READY, t] = base[k] == 0
                for s in range(3):
                    if not in_play[s]:
                        continue
                    allowed = (np.arange(34) // 9 == s) & (np.arange(34) < 27)
                    if honors:
                        allowed |= np.arange(34) >= 27
                    feasible = not (d.meld_tiles[i, 0] > 0)[~allowed].any()
                    f[F.D_FLUSH + s, t] = _scaled(plan_shanten(after[k], nm, allowed, sp)[0]) if feasible else 1.0
                if sp and nm == 0:
                    f[F.D_PAIRS, t] = (int(shanten_seven_pairs(after[k])) + 1) / 7.0
                f[F.D_TRIPLETS, t] = _scaled(triplets_shanten_slow(after[k], nm, nchi))
            best = base.min()
            top = accepted[base == best].max()
            f[F.D_BEST, held[base == best]] = 1
            f[F.D_EFFICIENT, held[(base == best) & (accepted == top)]] = 1
        elif h.sum() % 3 == 1:
            _, _, improving = ukeire(h, nm, live[i], kinds, sp)
            f[F.H_IMPROVE] = improving[0]
            for t in np.flatnonzero((h >= 2) & kinds):
                rest = h.copy()
                rest[t] -= 2
                outs = [int(shanten(rest - np.eye(34, dtype=np.int64)[u], nm + 1, sp)) for u in np.flatnonzero(rest)]
                f[F.H_PONG_BETTER, t] = min(outs) < s_now
                f[F.H_PONG_SAME, t] = min(outs) == s_now
        for s in range(1, n):
            if not d.revealed[i, s]:
                continue
            shown = d.shown[i, s].astype(np.int64)
            flag = sp and d.n_melds[i, s] == 0 and d.face_down[i, s] == 0
            w = wait_mask(shown, seven_pairs=bool(flag), kinds=kinds, owned=shown + d.meld_tiles[i, s])
            f[F.R_WAITS + s - 1] = w
            f[F.R_WAITS + n - 1] += w / (n - 1)
    return out


@pytest.mark.parametrize("variant", mjenv.VARIANTS)
def test_features_equal_the_reference_on_random_play(variant):
    hf = HandFeatures(variant)
    obs = _random_obs(variant)
    got = hf.derive(obs)
    want = reference(hf, obs)
    bad = np.argwhere(np.abs(got - want) > 1e-6)
    assert not len(bad), f"{variant}: {len(bad)} entries differ, first (obs, row, tile) {bad[:5].tolist()}"
    # the comparison has teeth: both hand sizes and several plans occur
    assert got[:, F.D_BEST].any() and got[:, F.H_IMPROVE].any() and got[:, F.D_FLUSH:F.D_FLUSH + 3].any()
    assert hf.extend(obs).shape == (len(obs),) + hf.shape


@pytest.fixture(scope="module")
def flush_play(tmp_path_factory):
    """Decisions of heuristic-flush in every seat of Kawuxing (many face-up 亮倒 hands)."""
    from agents.tournament.recording import write_from_play
    from mjenv.dataset import DatasetReader, unpack

    folder = tmp_path_factory.mktemp("hf") / "data"
    write_from_play(folder, ["heuristic-flush"], "kawuxing3", walls=24, seed=5)
    r = DatasetReader(folder)
    d = r.raw(0)
    return unpack(d, np.arange(min(r.sizes[0], 700)))


def test_features_equal_the_reference_facing_revealed_hands(flush_play):
    hf = HandFeatures("kawuxing3")
    obs = flush_play["obs"]
    got = hf.derive(obs)
    want = reference(hf, obs)
    assert np.array_equal(got, want)
    waits = got[:, F.R_WAITS:F.R_WAITS + 2]
    assert waits.any(), "no face-up 亮倒 hand in the sample: the test has no teeth"
    # the teacher never feeds a revealed hand while another discard is legal: its discards avoid the waits
    disc = flush_play["action"] < 34
    fed = got[np.flatnonzero(disc), F.R_WAITS + 2, flush_play["action"][disc]] > 0
    assert fed.mean() < 0.01


def test_shanten_rows_agree_with_the_recursive_reference():
    hf = HandFeatures("kawuxing3")
    obs = _random_obs("kawuxing3", batch=3, seed=11, every=9)
    got = hf.derive(obs)
    view = ObsView("kawuxing3")
    d = view.decode(obs)
    checked = 0
    for i in range(len(obs)):
        h = d.hand[i].astype(np.int64)
        nm = int(d.n_melds[i, 0])
        assert got[i, F.H_SHANTEN, 0] == pytest.approx(_scaled(shanten_reference(h, nm, True)))
        if h.sum() % 3 == 2:
            for t in np.flatnonzero(h)[:3]:
                h[t] -= 1
                assert got[i, F.D_SHANTEN, t] == pytest.approx(_scaled(shanten_reference(h, nm, True)))
                h[t] += 1
                checked += 1
    assert checked > 10


def test_bad_input_is_refused():
    hf = HandFeatures("kawuxing3")
    with pytest.raises(ValueError, match="expected mjenv-obs-v1"):
        hf.derive(np.zeros((2, 122, 34), np.float32))
    assert hf.derive(np.zeros((100, 34), np.float32)).shape == (hf.rows, 34)
    assert hf.rows == 18 and HandFeatures("gejiu").rows == 19
