"""The codes of the compiled game core: action ids, pending codes, event records, the configuration vectors.

The kernels (:mod:`mjenv.engine.table`, :mod:`mjenv.engine.claims`, :mod:`mjenv.engine.masks`,
:mod:`mjenv.engine.flow`, the family pieces and :mod:`mjenv.engine.entry`) and the engine
(:mod:`mjenv.engine.core`) speak through the plain ints defined here; they are module constants so that
numba folds them into the compiled code.

What needs the pure scoring library (:mod:`mjenv.rules.scoring`) is not compiled: the kernel stops
that table with a *pending* code in ``pend[b, 0]`` (and its arguments in ``pend[b, 1:]``), the
engine (:mod:`mjenv.engine.core`) does that piece in Python through the family adapter and calls
the entry point in ``MODE_RESUME``, which carries on exactly where the table stopped.  Pendings:

========================  ===================================================================
``P_WINDOW``              score the seats (bits in ``pend[b,1]``) that complete on the claimed tile
                          (not for Kawuxing: :mod:`mjenv.engine.kwend` judges and values them with
                          :mod:`mjenv.engine.kwscore`; not for Yangzhou: :mod:`mjenv.engine.yzend`
                          judges them with :mod:`mjenv.engine.yzscore`; not for Gejiu, where every
                          complete shape wins: ``gjend._shape_window``; not for Diedaohu / Liuwei,
                          where the lock and a busted discarder decide: ``ddend._louhu_window``)
``P_SELF_DRAW``           settle a self-drawn win in Python (ends the hand; only where a test switched the
                          compiled settlement off: Gejiu's are settled by ``gjend._gj_end``, Diedaohu's and
                          Liuwei's by ``ddwin._dd_end``, Yangzhou's by ``yzend._yz_end``)
``P_CLAIM_WIN``           settle a won discard or rob in Python (ends the hand; as ``P_SELF_DRAW``)
``P_ENDED``               the hand was settled and ended here, ``pend[b,1]`` says how (``END_*``) and, for a
                          win, ``pend[b, PEND_READING + s]`` the code of the reading (``mjenv.rules.hand``)
                          each winner s was valued with, -1 for the other seats (and, where the family's
                          scorer is compiled that far, the reading's fans in ``pend[b, PEND_FANS + FAN_SLOTS * s:]``,
                          :mod:`mjenv.engine.fanrow`): every
                          Kawuxing hand end (``kwend._kw_end``), every Gejiu hand end (wins valued by
                          :mod:`mjenv.engine.gjscore`: ``gjend._gj_end``), every Diedaohu and Liuwei win
                          (``ddwin._dd_end``; ``pend[b, PEND_OVER]``: the settlement ended the session), every Yangzhou win
                          (``yzend._yz_end``) and the drawn hands of the
                          families whose drawn hands pay nothing (``table._end_hand``: Gejiu, Diedaohu,
                          Yangzhou, Liuwei); the engine only books it (match money, the session, a
                          ``results`` entry built when read)
``P_BOOKED``              ``P_ENDED`` with the hand's numbers booked (``table.book_ended``: the end kind, the
                          reading codes, the match money), on the thread that stepped the table; the engine
                          books the rest
========================  ===================================================================

Never left pending: ``P_EXHAUSTED`` (the wall ran out; the entry point ends the hand at once, every drawn hand
being settled in the kernel).  Kong money is compiled for every family that pays it (Kawuxing's fixed amounts
in :mod:`mjenv.engine.table`, Diedaohu's and Liuwei's bankroll-limited ones in :mod:`mjenv.engine.ddend`), and
the self-draw win bit of every mask too (Yangzhou's fan minimum: :mod:`mjenv.engine.yzend`).

Yangzhou's judging needs the round wind, which the session (kept by the engine) decides: the engine writes it
into the spare column ``pend[b, PEND_ROUND_WIND]`` when it deals a hand, and no pending overwrites it.

Events are written as int16 records ``ev[b, k] = (type, a, b, c, d)`` (``EV_*``); the engine turns
them into the documented dicts only when they are read.
"""

from __future__ import annotations

from mjenv.engine import fanrow, gjscore, kwscore, yzscore


# Action ids (mjenv.engine.actions; repeated as plain ints so that they compile as constants).
A_LIANG, A_KONG_SELF, A_PONG, A_KONG_CLAIM = 34, 68, 102, 103
A_CHI_LOW, A_CHI_HIGH, A_WIN, A_PASS, A_KONGTILE_0, A_KONGTILE_1 = 104, 106, 107, 108, 109, 110
N_ACTIONS = 111

# Pending codes (see the module docstring).
P_NONE, P_WINDOW, P_SELF_DRAW, P_CLAIM_WIN, P_EXHAUSTED, P_ENDED = range(6)
# P_ENDED once the hand's numbers are booked (table.book_ended: the end kind, reading codes and match money), by the
# thread that stepped the table; the engine then books the rest (the session, the lazy result) and clears it
P_BOOKED = 6
PEND_READING = 2  # with P_ENDED: pend[b, PEND_READING + s] = the reading code seat s's win was valued with, or -1
PEND_ROUND_WIND = 6  # Yangzhou: the round wind's tile id (27..30), set by the engine at each deal
PEND_OVER = 7  # with P_ENDED after a win settled under 园子 (ddwin._dd_end): the settlement ended the session
# with P_ENDED: seat s's fan row (mjenv.engine.fanrow) at pend[b, PEND_FANS + FAN_SLOTS * s], where the family's
# kernel writes the fans of the winner's chosen reading (kwend, gjend, ddwin, yzend); ROW_N 0 when none
PEND_FANS = 8
FAN_SLOTS = fanrow.FAN_SLOTS
PEND_WIDTH = PEND_FANS + 4 * FAN_SLOTS  # 4: state.MAX_SEATS
# How a hand settled in the kernel ended (``pend[b, 1]`` with P_ENDED, ``a`` of its EV_END record).
END_DRAW, END_SELF_DRAW, END_DISCARD, END_ROB = 1, 2, 3, 4

# Event record types.
EV_DEAL, EV_DRAW, EV_DISCARD, EV_REPLY, EV_PONG, EV_CHI, EV_ADD_KONG, EV_KONG, EV_PICK, EV_REVEAL, EV_PY, EV_COUNTS, EV_END = range(1, 14)
# EV_REVEAL is followed by two EV_COUNTS records holding the shown hand, 6 counts per field in base 5.
EV_WIDTH = 5
EV_CAPACITY = 640  # per hand: < 136 draws, as many discards, (n-1) replies each, kongs, the end

# The configuration vector (one int64 per entry), built by the engine from the family and the options.
(
    C_N,
    C_WALL,
    C_SEVEN_PAIRS,
    C_LIANG,
    C_CHI,
    C_ROB_ADDED,
    C_ROB_REPLACEMENT,
    C_KONG_TILES,
    C_SELF_DRAW_MINIMUM,
    C_LIANG_KONG,
    C_ANGANG_IMMEDIATE,
    C_KONG_LINK,
    C_HIDE_TRIPLETS,
    C_KONG_MONEY,
    C_RECORD,
    C_KINDS_BITS,
    C_SPECIAL,
    C_KW_SCORE,  # Kawuxing: claim-window wins judged and valued, hand ends settled here (mjenv.engine.kwscore)
) = range(18)
C_KW = 18  # first of the kwscore.N_KW option entries (kwscore.config)
C_YZ = C_KW + kwscore.N_KW  # first of the yzscore.N_YZ entries (yzscore.config; all 0 unless Yangzhou)
# The other 4-player families (after Yangzhou's entries; see ddend, claims._open_window, gjend):
C_WIN_ON_SHAPE = C_YZ + yzscore.N_YZ  # Gejiu: every complete shape on a claimed or robbed tile is a legal win
C_KONG_ALL_PAY = C_WIN_ON_SHAPE + 1  # KONG_MONEY_BANKROLL: a direct kong is paid by every other seat (Liuwei)
C_KONG_LIMIT = C_WIN_ON_SHAPE + 2  # KONG_MONEY_BANKROLL: payments limited by the balances (园子)
C_GJ_SCORE = C_WIN_ON_SHAPE + 3  # Gejiu: wins valued (mjenv.engine.gjscore) and settled here (_gj_end)
C_SINGLE_WINNER = C_WIN_ON_SHAPE + 4  # Gejiu: multi_win off (only the nearest claimant wins)
C_LOUHU_WINDOW = C_WIN_ON_SHAPE + 5  # Diedaohu / Liuwei: claim-window wins judged here (_louhu_window), LOUHU_* bits
LOUHU_JUDGE, LOUHU_ON, LOUHU_BANKROLL = 1, 2, 4  # judged here; ``louhu`` on; a bankroll (园子): busted discarders
C_GJ = C_WIN_ON_SHAPE + 6  # Gejiu: first of the gjscore.N_GJ entries (gjscore.config: gejiu_combine, pattern values)
C_DD_END = C_GJ + gjscore.N_GJ  # Diedaohu / Liuwei / Yangzhou: wins settled here (ddwin._dd_end, yzend._yz_end),
# DD_END_* (0: in Python)
C_DD_FLAGS = C_DD_END + 1  # ... DD_LIMIT: payments limited by the balances (园子); DD_BAOPAI: fengqing_baopai
# (Diedaohu) or baopai (Yangzhou) on
C_DD_V = C_DD_FLAGS + 1  # Diedaohu / Liuwei: each hand class's V (diedaohu.CLASSES order), for the fan rows
DD_END_DIEDAOHU, DD_END_LIUWEI, DD_END_YANGZHOU = 1, 2, 3
DD_LIMIT, DD_BAOPAI = 1, 2
N_CONFIG = C_DD_V + 7
LIANG_KONG_NONE, LIANG_KONG_KEEP_READY, LIANG_KONG_SAME_WAITS = 0, 1, 2
LINK_SELF_CONSECUTIVE, LINK_CHAIN, LINK_PER_HAND = 1, 2, 3
KONG_MONEY_NONE, KONG_MONEY_COMPILED, KONG_MONEY_BANKROLL = 0, 1, 2
# The float configuration vector: the kong money per payer by meld kind code (Kawuxing: at chain position 1,
# in units of b; KONG_MONEY_BANKROLL: the amount owed, b included).
F_KONG_DIRECT, F_KONG_ADDED, F_KONG_CONCEALED, F_KONG_DOUBLING = 0, 1, 2, 3
F_BASE = F_KONG_DOUBLING + 1  # the base stake b (Kawuxing and Gejiu)
# Diedaohu / Liuwei wins (ddwin._dd_end): what one payer owes for hand class c (diedaohu.CLASSES order) at
# F_DD_PAY + 3 c + k: k = 0 each payer of a self-draw, 1 the discarder (konger), 2 each 陪冲 (Liuwei); inf = the
# payer's whole balance (风清 under 园子).  The amounts are the scorers' own floats, b and Liuwei's N/50 included.
F_DD_PAY = F_BASE + 1
N_FCONFIG = F_DD_PAY + 3 * 7
# After the N_FCONFIG entries the engine's float vector holds every table's bankroll balance at the start of
# the hand (``Engine.balance`` is a view of it): seat p of table b at N_FCONFIG + C_N * b + p; then, per table,
# 2 C_N entries the win settlement of ddwin._dd_end writes: the hand's money before the win (seat p at
# F_BALANCE + C_N * B + 2 C_N * b + p; the engine's lazy result settles from it) and the running balances.
F_BALANCE = N_FCONFIG

# Modes of the entry point (mjenv.engine.entry).
MODE_STEP, MODE_ADVANCE, MODE_RESUME, MODE_MASKS, MODE_CHECK = 0, 1, 2, 3, 4
