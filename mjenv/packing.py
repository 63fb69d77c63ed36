"""Compiled kernels of the dataset writer (:mod:`mjenv.dataset`): classify the rows of a batch of observations and
pack them losslessly (constant rows once, 0/1 rows as bits, the rest whole), one pass each (numba, through
mjenv's compiled-code cache, :func:`mjenv.engine.jit.njit`).  A module of its own so that importing
:mod:`mjenv.dataset` (as the ``mjenv`` command does for its subcommand table) does not import numba.
"""

from __future__ import annotations

import numpy as np

from mjenv.engine.jit import njit


@njit(cache=True)
def _classify(buf, idx):
    """Per row of ``buf[idx]`` (``float32 [*, C, W]``): 0 when constant across its columns in every decision,
    1 when every value is 0 or 1, 2 otherwise."""
    C, W = buf.shape[1], buf.shape[2]
    scalar = np.ones(C, np.bool_)
    binary = np.ones(C, np.bool_)
    for k in range(idx.shape[0]):
        i = idx[k]
        for r in range(C):
            if not scalar[r] and not binary[r]:
                continue
            v0 = buf[i, r, 0]
            for c in range(W):
                v = buf[i, r, c]
                if v != v0:
                    scalar[r] = False
                if v != 0.0 and v != 1.0:
                    binary[r] = False
    out = np.full(C, 2, np.int8)
    for r in range(C):
        if scalar[r]:
            out[r] = 0
        elif binary[r]:
            out[r] = 1
    return out


@njit(cache=True)
def _pack(buf, idx, rs, rb, rp, out_s, out_b, out_p):
    """Fill the packed arrays of decisions ``buf[idx]`` (bits big-endian within a byte, as ``np.packbits``)."""
    W = buf.shape[2]
    for k in range(idx.shape[0]):
        i = idx[k]
        for j in range(rs.shape[0]):
            out_s[k, j] = buf[i, rs[j], 0]
        for j in range(rb.shape[0]):
            r = rb[j]
            for byte in range(out_b.shape[2]):
                acc = 0
                for bit in range(8):
                    c = byte * 8 + bit
                    if c < W and buf[i, r, c] != 0.0:
                        acc |= 1 << (7 - bit)
                out_b[k, j, byte] = acc
        for j in range(rp.shape[0]):
            for c in range(W):
                out_p[k, j, c] = buf[i, rp[j], c]
