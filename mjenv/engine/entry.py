"""The entry points of the compiled game core: one per set of compiled scorers, made from one source.

:func:`kernel_for` gives the entry point for a configuration vector: it holds only the scorers the
configuration switches on (:func:`features`; :mod:`mjenv.engine.gates`), so that a start compiles only its
own family's scorer (cold starts: docs/benchmarks.md, "Start-up").  :data:`run_tables` holds them all.  An
entry loops over a list of tables, so a batch of 4096 tables and the AEC env's single table run the same
code; it steps, advances, resumes or masks them (``MODE_*``) and ends the hands the kernels settle
themselves (P_ENDED: :mod:`mjenv.engine.kwend`, :mod:`mjenv.engine.gjend`, :mod:`mjenv.engine.ddwin`,
:mod:`mjenv.engine.yzend`, ``table._end_hand``).
"""

from __future__ import annotations

from mjenv.engine import yzscore
from mjenv.engine.codes import (
    C_DD_END,
    C_GJ_SCORE,
    C_KW_SCORE,
    C_YZ,
    DD_END_YANGZHOU,
    END_DRAW,
    MODE_ADVANCE,
    MODE_CHECK,
    MODE_MASKS,
    MODE_STEP,
    N_ACTIONS,
    P_CLAIM_WIN,
    P_EXHAUSTED,
    P_NONE,
    P_SELF_DRAW,
)
from mjenv.engine.ddwin import _dd_end
from mjenv.engine.flow import _advance, _apply, _resume
from mjenv.engine.gates import (
    FEAT_ALL,
    FEAT_GJ,
    FEAT_KW,
    FEAT_YZ,
    entry_kernel,
)
from mjenv.engine.gjend import gj_end_if
from mjenv.engine.kwend import kw_end_if
from mjenv.engine.masks import _compute_mask
from mjenv.engine.prefetch import prefetch_table
from mjenv.engine.yzend import yz_end_if
from mjenv.engine.state import DONE, O8_PHASE
from mjenv.engine.table import _end_hand


def features(cfg) -> int:
    """The FEAT_* set the configuration vector ``cfg`` switches on."""
    return (
        (FEAT_KW if cfg[C_KW_SCORE] else 0)
        | (FEAT_YZ if cfg[C_YZ + yzscore.YZ_ON] else 0)
        | (FEAT_GJ if cfg[C_GJ_SCORE] else 0)
    )


def _entry(fam: int):
    """The entry point compiled with the scorers of the FEAT_* set ``fam`` (a closure: numba types ``fam`` as its
    literal, and the compiled-code cache keys each entry by the closure's value)."""

    @entry_kernel
    def run_tables(mode, b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, idx, acts, waiting, info):
        """The compiled entry point of the state machine, holding the scorers of ``fam`` (see :func:`kernel_for`).

        ``mode``:

        * ``MODE_STEP`` — apply ``acts[j]`` at table ``idx[j]`` and advance it (finished tables skipped).  All
          or nothing: if some live table's action is not legal, nothing changes, ``info[1]`` is its position
          ``j`` and the result 0; otherwise ``info[0]`` is the number of tables stepped, ``info[1]`` -1.
        * ``MODE_ADVANCE`` — compute masks and play automatic moves at tables ``idx`` (after a deal).
        * ``MODE_RESUME`` — resume tables ``idx`` whose pendings the engine handled.
        * ``MODE_MASKS`` — write the masks of live tables ``idx`` into ``mask`` (pass a spare array) without
          changing any state (``acts`` is not read).
        * ``MODE_CHECK`` — only ``MODE_STEP``'s check of the actions, ``info`` as it sets it, nothing changed (the
          threaded engine checks a whole step before its shards move: :mod:`mjenv.engine.threads`).

        The tables left with a pending are listed in ``waiting``; returns their number.
        """
        E = (b8, b16, money, mask, pend, ev, evn, cfg, tabs, scr, fcfg, fam)  # fam: typed as its literal
        if mode == MODE_MASKS:
            for j in range(idx.shape[0]):
                _compute_mask(E, idx[j])
            return 0
        if mode == MODE_STEP or mode == MODE_CHECK:
            live = 0
            for j in range(idx.shape[0]):
                b = idx[j]
                if b8[b, O8_PHASE] == DONE:
                    continue
                a = acts[j]
                if a < 0 or a >= N_ACTIONS or not mask[b, a]:
                    info[0] = 0
                    info[1] = j
                    return 0
                live += 1
            info[0] = live
            info[1] = -1
            if mode == MODE_CHECK:
                return 0
        k = 0
        last = idx.shape[0] - 1
        for j in range(idx.shape[0]):
            b = idx[j]
            if j < last:  # the next table's rows, while this one is played (a hint: mjenv.engine.prefetch)
                prefetch_table(b8, b16, mask, idx[j + 1])
            if mode == MODE_STEP:
                if b8[b, O8_PHASE] == DONE:
                    continue
                status = _apply(E, b, acts[j])
                if status == P_NONE:
                    status = _advance(E, b, 0, -1)
            elif mode == MODE_ADVANCE:
                status = _advance(E, b, 0, -1)
            else:
                code = pend[b, 0]
                pend[b, 0] = P_NONE
                status = _resume(E, b, code)
            if status != P_NONE:
                if cfg[C_KW_SCORE] != 0 and (status == P_SELF_DRAW or status == P_CLAIM_WIN or status == P_EXHAUSTED):
                    status = kw_end_if(E, b, status)
                elif status == P_EXHAUSTED:  # every other family's drawn hands pay nothing
                    status = _end_hand(E, b, END_DRAW)
                elif cfg[C_GJ_SCORE] != 0 and (status == P_SELF_DRAW or status == P_CLAIM_WIN):
                    status = gj_end_if(E, b, status)
                elif cfg[C_DD_END] != 0 and (status == P_SELF_DRAW or status == P_CLAIM_WIN):
                    if cfg[C_DD_END] == DD_END_YANGZHOU:
                        status = yz_end_if(E, b, status)
                    else:
                        status = _dd_end(E, b, status)
                pend[b, 0] = status
                waiting[k] = b
                k += 1
        return k

    return run_tables


_ENTRIES = {fam: _entry(fam) for fam in range(FEAT_ALL + 1)}  # (compiled on first call only)
run_tables = _ENTRIES[FEAT_ALL]  # every scorer: any configuration


def kernel_for(cfg):
    """The compiled entry point for the configuration vector ``cfg`` (called as :data:`run_tables`): it holds only
    the scorers ``cfg`` switches on, so a cold start compiles only its family's code."""
    return _ENTRIES[features(cfg)]
