"""The numpy observation encoder that the compiled one replaced, kept as the test oracle.

:func:`reference_encode` takes the layout (block rows, static rows, scales) from an
:class:`mjenv.encoding.observation.ObservationEncoder` or ``OracleEncoder`` and writes the blocks with
whole-batch numpy operations, as the package did before its encoder was compiled;
tests/test_observation.py checks that the compiled encoder gives exactly the same arrays.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding.observation import (
    BUST_EPS,
    FACE_DOWN_SCALE,
    KONG_SCALE,
    LOCK_SCALE,
    MONEY_SCALE,
    RECENCY_DECAY,
    OracleEncoder,
)
from mjenv.engine import state as S
from mjenv.tiles import WINDS

_THERMO = np.arange(4, dtype=np.int8)[None, :, None]
_DECAY = (RECENCY_DECAY ** np.arange(512)).astype(np.float32)  # age beyond the table is clipped
_EAST = WINDS[0]


def reference_encode(enc, state: S.State, seats, tables=None, *, engine=None) -> np.ndarray:
    """``float32 [K, C, 34]``: the numpy encoding of ``tables`` from ``seats`` with ``enc``'s layout."""
    seats = np.asarray(seats, dtype=np.int64).reshape(-1)
    K = len(seats)
    idx = np.arange(K) if tables is None else np.asarray(tables, dtype=np.int64).reshape(-1)
    out = np.empty((K,) + enc.shape, np.float32)
    out[:] = enc._static
    writer = _NumpyOracleWriter if isinstance(enc, OracleEncoder) else _NumpyWriter
    writer._write(enc, state, idx, seats, out)
    _NumpyWriter._write_session(enc, state, idx, seats, out, engine)
    return out


class _NumpyWriter:
    """The v1 blocks in numpy (methods take the encoder as ``self``)."""

    def _write(self, st: S.State, idx: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        # ``out`` holds the static rows and zeros elsewhere: rare features (melds, 亮倒, claims,
        # locks, money) are written only where they are non-zero, which keeps large batches cheap.
        n = self.n
        K = len(idx)
        sl = self.slices
        rows = np.arange(K)
        rel = (seats[:, None] + np.arange(n)[None, :]) % n  # [K, n] absolute seat of relative seat k
        t2 = idx[:, None]
        phase = st.phase[idx]
        cur = st.cur[idx].astype(np.int64)
        turn = phase == S.TURN
        live = phase != S.DONE

        np.greater(st.hand[idx, seats][:, None, :], _THERMO, out=out[:, sl["hand"]])

        drawn = st.drawn[idx].astype(np.int64)
        has_drawn = turn & (cur == seats) & (drawn >= 0)
        out[rows[has_drawn], sl["drawn"].start, drawn[has_drawn]] = 1.0

        # Melds: one scatter over all declared melds; chi may repeat on a tile, hence add.at.
        kind = st.meld_kind[t2, rel]  # [K, n, 4]
        k_i, s_i, m_i = np.nonzero(kind)
        if len(k_i):
            r = sl["melds"].start + 5 * s_i + kind[k_i, s_i, m_i].astype(np.int64) - 1
            np.add.at(out, (k_i, r, st.meld_tile[idx[k_i], rel[k_i, s_i], m_i].astype(np.int64)), 1.0)

        _NumpyWriter._write_discards(self, st, idx, rel, out)

        # 亮倒: face-up tiles = hand - face-down triplets - a just-drawn tile (private until played).
        k_i, s_i = np.nonzero(st.revealed[t2, rel])
        if len(k_i):
            b_i, a_i = idx[k_i], rel[k_i, s_i]
            hidden = st.hidden[b_i, a_i]  # [R, 34]
            shown = st.hand[b_i, a_i] - 3 * hidden.astype(np.int8)
            holding = turn[k_i] & (drawn[k_i] >= 0) & (cur[k_i] == a_i) & (s_i != 0)
            shown[np.flatnonzero(holding), drawn[k_i[holding]]] -= 1
            r0 = sl["reveal"].start + 7 * s_i
            out[k_i, r0] = 1.0
            first = st.reveal_seq[b_i, a_i] == 0
            out[k_i[first], r0[first] + 1] = 1.0
            out[k_i[:, None], r0[:, None] + np.arange(2, 6)] = shown[:, None, :] > _THERMO
            out[k_i, r0 + 6] = (hidden.sum(-1) * (3.0 / FACE_DOWN_SCALE))[:, None]

        # Claim window: the tile under claim is public; who else is asked and their replies are not.
        c0 = sl["claim"].start
        ci = np.flatnonzero((phase == S.CLAIM) | (phase == S.ROB))
        if len(ci):
            out[ci, c0, st.claim_tile[idx[ci]].astype(np.int64)] = 1.0
            out[ci, c0 + 1 + (phase[ci] == S.ROB)] = 1.0
            out[ci, c0 + 3 + (st.claim_from[idx[ci]].astype(np.int64) - seats[ci]) % n] = 1.0

        k0 = sl["kong_chain"].start
        ak = np.flatnonzero(turn & (st.after_kong[idx] > 0))
        out[ak, k0] = (st.after_kong[idx[ak]] / KONG_SCALE)[:, None]
        ck = np.flatnonzero((phase == S.CLAIM) & (st.claim_kong_pos[idx] > 0))
        out[ck, k0 + 1] = (st.claim_kong_pos[idx[ck]] / KONG_SCALE)[:, None]

        w0 = sl["wall"].start
        left = (st.back[idx] - st.front[idx]).astype(np.float32)
        out[:, w0] = (left / self.live_wall)[:, None]
        out[rows[(left <= 0) & live], w0 + 1] = 1.0

        # Gejiu's face-up kong tiles are public (docs/rules/common.md §1.12); -1 marks an empty slot (and every other variant).
        kt = st.kong_tiles[idx].astype(np.int64)  # [K, 2]
        k_i, j_i = np.nonzero(kt >= 0)
        out[k_i, sl["kong_tiles"].start + j_i, kt[k_i, j_i]] = 1.0

        s0 = sl["seats"].start
        out[rows, s0 + (st.dealer[idx].astype(np.int64) - seats) % n] = 1.0
        out[rows, s0 + n + (cur - seats) % n] = 1.0
        out[rows[(st.actor[idx] == seats) & live], s0 + 2 * n] = 1.0

        p0 = sl["phase"].start
        out[rows, p0 + phase.astype(np.int64)] = 1.0
        out[rows[st.turns[idx, seats] == 0], p0 + len(S.PHASE_NAMES)] = 1.0

        l0 = sl["lock"].start
        lk = np.flatnonzero(st.lock[idx, seats] > 0)
        out[lk, l0] = 1.0
        out[lk, l0 + 1] = (st.lock[idx[lk], seats[lk]] / LOCK_SCALE)[:, None]

        # 大吊车 is private to its player (derived from its own lock and hand), like the lock itself.
        dd = st.dadiaoche[idx, seats].astype(np.int64)
        has = np.flatnonzero(dd >= 0)
        out[has, sl["dadiaoche"].start, dd[has]] = 1.0

        k_i, s_i = np.nonzero(st.money[t2, rel])
        out[k_i, sl["money"].start + s_i] = (st.money[idx[k_i], rel[k_i, s_i]] / (MONEY_SCALE * float(self.opts.base)))[
            :, None
        ]

    def _write_session(self, st: S.State, idx: np.ndarray, seats: np.ndarray, out: np.ndarray, engine) -> None:
        """Seat and round winds and 园子 balances: session facts the engine keeps beside the state."""
        n = self.n
        K = len(idx)
        rows = np.arange(K)
        if self.has_session:
            w0 = self.slices["winds"].start
            seat_wind = _EAST + (seats - st.dealer[idx].astype(np.int64)) % n
            out[rows, w0, seat_wind] = 1.0
            out[rows, w0 + 1, _EAST + self._round_index(st, idx, engine) % 4] = 1.0
        if self.bankroll > 0:
            b0 = self.slices["bankroll"].start
            start = engine.balance[idx] if engine is not None else np.full((K, n), self.bankroll)
            bal = start + st.money[idx]  # [K, n] absolute seats
            rel = (seats[:, None] + np.arange(n)[None, :]) % n
            bal = np.take_along_axis(bal, rel, axis=1)
            out[:, b0 : b0 + n] = np.clip(bal / self.bankroll, 0.0, float(n))[:, :, None]
            out[:, b0 + n : b0 + 2 * n] = (bal <= BUST_EPS)[:, :, None]

    def _write_discards(self, st: S.State, idx: np.ndarray, rel: np.ndarray, out: np.ndarray) -> None:
        n = self.n
        K = len(idx)
        R = int(st.river_len[idx].max()) if K else 0
        if R == 0:
            return
        t2 = idx[:, None]
        river = st.river[t2, rel, :R].astype(np.int64)  # [K, n, R], -1 padded
        # Empty slots go to a 35th sentinel column, so counting needs no nonzero() pass.
        cell = (np.arange(K * n, dtype=np.int64).reshape(K, n, 1) * 35 + np.where(river < 0, 34, river)).reshape(-1)
        counts = np.bincount(cell, minlength=K * n * 35).astype(np.int8).reshape(K, n, 35)[:, :, :34]
        age = (st.n_discards[idx].astype(np.int64) - 1)[:, None, None] - st.river_time[t2, rel, :R]
        decay = _DECAY[np.clip(age, 0, len(_DECAY) - 1)].reshape(-1)
        recency = np.bincount(cell, weights=decay, minlength=K * n * 35).reshape(K, n, 35)[:, :, :34]
        d0 = self.slices["discards"].start
        dv = out[:, d0 : d0 + 5 * n].reshape(K, n, 5, 34)
        np.greater(counts[:, :, None, :], _THERMO[None], out=dv[:, :, 0:4])
        dv[:, :, 4] = recency


class _NumpyOracleWriter:
    """v1 plus the oracle blocks in numpy."""

    def _write(self, st: S.State, idx: np.ndarray, seats: np.ndarray, out: np.ndarray) -> None:
        _NumpyWriter._write(self, st, idx, seats, out)
        n = self.n
        K = len(idx)
        rel = (seats[:, None] + np.arange(n)[None, :]) % n
        h0 = self.slices["oracle_hands"].start
        hv = out[:, h0 : h0 + 4 * n].reshape(K, n, 4, 34)
        np.greater(st.hand[idx[:, None], rel][:, :, None, :], _THERMO[None], out=hv)
        out[:, self.slices["oracle_locks"]] = (st.lock[idx[:, None], rel] / LOCK_SCALE)[:, :, None]
        dd = st.dadiaoche[idx[:, None], rel].astype(np.int64)  # [K, n]
        k_i, s_i = np.nonzero(dd >= 0)
        out[k_i, self.slices["oracle_dadiaoche"].start + s_i, dd[k_i, s_i]] = 1.0
        w0 = self.slices["oracle_wall"].start
        pos = st.front[idx].astype(np.int64)[:, None] + np.arange(self.live_wall)[None, :]  # [K, L]
        k_i, j_i = np.nonzero(pos < st.back[idx].astype(np.int64)[:, None])
        out[k_i, w0 + j_i, st.wall[idx[k_i], pos[k_i, j_i]].astype(np.int64)] = 1.0


