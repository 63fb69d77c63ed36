"""Hand analysis by lookup tables: is a hand complete, what does it wait on, how does it split.

This module owns the shape rules of docs/rules/common.md §1.4-§1.5 (sets, pairs, the standard shape for any
number of declared melds, seven pairs, wait sets) and the enumeration of readings (§1.6).  It
knows nothing of fans, scoring or game state; scorers and the engine build on it.

All batched functions take 34-count vectors of any integer dtype, either one hand ``[34]`` or a
batch ``[N, 34]``, and are vectorised over N (no Python loop over hands).

How it works.  The 9 counts of a suit are read as a base-5 number, the *suit code*
``Σ c_i·5^i`` (0 .. 5^9-1); the 7 honor counts likewise give an *honor code* (0 .. 5^7-1).  One
table per kind of component (suit / honors, concatenated into one array so a batch needs a single
gather) stores, for every code, the component's *class*:

* 0 - the tiles split into sets only (the empty component included);
* 1 - they split into sets plus exactly one pair;
* 2 - neither.

The classes are exclusive (a sets-only component has 3k tiles, a sets+pair one 3k+2), so a hand
is complete in the standard shape iff the classes of its four components sum to exactly 1.  The
wait table stores, per code, the 9-bit masks of the tiles t whose addition turns the component
into class 1 (``m1``) or class 0 (``m0``), and the mask of its odd counts (for seven pairs).
Adding t to component j completes the hand iff the other components are all class 0 and
``t ∈ m1[j]``, or exactly one other component is class 1 and ``t ∈ m0[j]``.  The tables are built
with numpy on first use (about 0.1 s) and cached in module globals.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from mjenv.tiles import N_KINDS, format_tiles

__all__ = [
    "Reading",
    "is_complete",
    "reading_text",
    "readings",
    "ready",
    "ready_after_discards",
    "suit_codes",
    "table_build_seconds",
    "tables",
    "wait_mask",
    "wait_mask_after_discards",
]

SUIT_STATES = 5**9  # codes of one suit: counts 0..4 of 9 tiles
HONOR_STATES = 5**7
HONOR_OFFSET = SUIT_STATES  # honor codes live after the suit codes in the combined tables

# Layout of one uint32 entry of the wait table.  The odd-count mask sits lowest and the class
# next, so that ``(entry >> (11 + 9*o)) & 0x1FF`` reads m1 (o = 0), m0 (o = 1) or, for o = 2,
# only the always-zero bits 29..31: o is the class sum of the *other* components, clipped to 2.
_ODD_SHIFT, _CLS_SHIFT, _M1_SHIFT, _M0_SHIFT = 0, 9, 11, 20
_MASK9 = np.uint32(0x1FF)

# Completion table (uint8): class in bits 0-1, "some count is odd" in bit 4.  Summing four entries
# keeps the class sum (at most 8) in bits 0-3 and the odd flags in bits 4-6.
_ODD_FLAG = 16

_COMP = np.arange(N_KINDS) // 9  # component (0 m, 1 p, 2 s, 3 honors) of each tile id
_POS = np.arange(N_KINDS) % 9  # digit of each tile id inside its component code
_BIT_SHIFTS = np.array([0, 9, 18, 27], dtype=np.uint64)  # where each component's 9 bits go in a 34-bit mask
_TILE_BITS = np.left_shift(np.uint64(1), np.arange(N_KINDS, dtype=np.uint64))
# Shift that reads a component's wait mask given its class (row) and the class sum v (column) of
# the whole hand it ends up in: m1 when the others sum to 0, m0 when to 1, else the zero bits.
_SUM_SHIFTS = np.array(
    [[_M1_SHIFT if v - k == 0 else _M0_SHIFT if v - k == 1 else 29 for v in range(5)] for k in range(3)],
    dtype=np.uint32,
)
_COMP_BITS = np.array([0x1FF << 0, 0x1FF << 9, 0x1FF << 18, 0x7F << 27], dtype=np.uint64)  # tiles of each component
_POW_LIST = [5 ** int(p) for p in _POS]
_POW34 = np.array(_POW_LIST, dtype=np.int32)  # weight of each tile id in its component code
_COMP_SIZES = np.array([9, 9, 9, 7])
_OTHER_COMP_BITS = ~_COMP_BITS[_COMP]  # per tile id: the bits of the other components
_DISCARD_BLOCK = 4096  # hands per block in wait_mask_after_discards


def _code_weights() -> np.ndarray:
    w = np.zeros((N_KINDS, 5), dtype=np.float32)
    w[np.arange(N_KINDS), _COMP] = 5.0**_POS
    w[:, 4] = 1.0  # the fifth column counts the tiles
    return w


_CODE_WEIGHTS = _code_weights()
_CODE_WEIGHTS_NO_TOTAL = np.ascontiguousarray(_CODE_WEIGHTS[:, :4])  # the total costs a column: only for seven pairs
_CODE_BLOCK = 1024  # rows per BLAS call: 1024 x 34 x 5 multiply-adds stay below OpenBLAS's threading threshold

_lock = threading.Lock()
_tables: dict[str, np.ndarray] = {}
_build_seconds: float | None = None


# ----------------------------------------------------------------------------------- tables


def _unique(a: np.ndarray) -> np.ndarray:
    # np.unique's hash path is far slower than a plain sort on these int arrays (numpy 2.x).
    a = np.sort(a)
    return a[np.concatenate(([True], a[1:] != a[:-1]))] if a.size else a


def _fill_component(n: int, sequences: bool, wait: np.ndarray) -> None:
    """Fill ``wait`` (uint32 ``[5^n]``) with the wait-table entries of an n-kind component."""
    # Work in a "nibble" representation: digit i of a hand at bits 4i..4i+3.  Adding a set never
    # carries (4 + 3 < 16), and "some digit exceeds 4" is one add-and-mask: digit + 3 sets bit 3.
    shifts = 4 * np.arange(n, dtype=np.int64)
    unit = np.int64(1) << shifts
    over = int(np.sum(8 * unit))
    plus3 = int(np.sum(3 * unit))
    powers = 5 ** np.arange(n, dtype=np.int64)

    def fits(x: np.ndarray) -> np.ndarray:
        return ((x + plus3) & over) == 0

    def to_codes(x: np.ndarray) -> np.ndarray:
        return sum(((x >> shifts[i]) & 15) * powers[i] for i in range(n))

    set_nibbles = [3 * unit]
    if sequences:
        set_nibbles.append(unit[:-2] + unit[1:-1] + unit[2:])
    set_nibbles = np.concatenate(set_nibbles)

    # Sets-only hands are reached from the empty hand by adding sets, one level (one more set) at
    # a time; this touches only the few tens of thousands of decomposable hands.
    levels = [np.zeros(1, dtype=np.int64)]
    frontier = levels[0]
    while frontier.size:
        cand = (frontier[:, None] + set_nibbles[None, :]).ravel()
        frontier = _unique(cand[fits(cand)])
        levels.append(frontier)
    sets_only = np.concatenate(levels)
    cand = (sets_only[:, None] + 2 * unit[None, :]).ravel()
    with_pair = _unique(cand[fits(cand)])

    groups = [(to_codes(sets_only), sets_only, 0, _M0_SHIFT), (to_codes(with_pair), with_pair, 1, _M1_SHIFT)]
    wait[:] = np.uint32(2 << _CLS_SHIFT)  # class 2 ("neither") unless decomposable
    for codes, _, cls, _ in groups:
        wait[codes] = np.uint32(cls << _CLS_SHIFT)
    for codes, nibbles, _, mask_shift in groups:
        # Bit i of the mask at c: c + e_i is in the group.  For a fixed i, c = code - 5^i is
        # injective, so a plain fancy-indexed |= never sees a duplicate index.
        for i in range(n):
            has_i = ((nibbles >> shifts[i]) & 15) != 0
            wait[codes[has_i] - powers[i]] |= np.uint32(1 << (mask_shift + i))

    odd = np.zeros(1, dtype=np.uint32)
    for i in range(n):  # code = d_i·5^i + (lower digits): prepend digit i as the slow axis
        odd = ((np.array([0, 1, 0, 1, 0], dtype=np.uint32) << i)[:, None] + odd[None, :]).ravel()
    wait |= odd << np.uint32(_ODD_SHIFT)


def _build() -> dict[str, np.ndarray]:
    wait = np.empty(SUIT_STATES + HONOR_STATES, dtype=np.uint32)
    _fill_component(9, True, wait[:SUIT_STATES])
    _fill_component(7, False, wait[SUIT_STATES:])
    cls = ((wait >> np.uint32(_CLS_SHIFT)) & np.uint32(3)).astype(np.uint8)
    complete = ((wait & _MASK9) != 0).view(np.uint8) * np.uint8(_ODD_FLAG)
    complete |= cls
    return {"wait": wait, "complete": complete, "cls": cls}


def tables() -> dict[str, np.ndarray]:
    """The cached lookup tables (built on first call), indexed by suit code or ``HONOR_OFFSET`` + honor code.

    ``"cls"`` (uint8): component class 0 sets only / 1 sets + one pair / 2 neither.
    ``"complete"`` (uint8): class | 16·(some count is odd).
    ``"wait"`` (uint32): odd-count mask (bits 0-8) | class << 9 | m1 << 11 | m0 << 20, where bit i of
    m1 / m0 says that adding tile i makes the component class 1 / class 0.
    """
    global _build_seconds
    if not _tables:
        with _lock:
            if not _tables:
                start = time.perf_counter()
                built = _build()
                _build_seconds = time.perf_counter() - start
                _tables.update(built)
    return _tables


def table_build_seconds() -> float:
    """Seconds the table build took in this process (builds the tables if needed)."""
    tables()
    return float(_build_seconds)


# ----------------------------------------------------------------------------------- helpers


def _as_counts(counts, name: str) -> tuple[np.ndarray, bool]:
    """A ``[N, 34]`` view of ``counts`` and whether the caller passed a single ``[34]`` hand."""
    arr = np.asarray(counts)
    if arr.ndim == 1 and arr.shape[0] == N_KINDS:
        arr, single = arr[None, :], True
    elif arr.ndim == 2 and arr.shape[1] == N_KINDS:
        single = False
    else:
        raise ValueError(f"{name}: expected shape [34] or [N, 34] (tile counts), got {list(arr.shape)}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected an integer array of tile counts, got dtype {arr.dtype}")
    if arr.size:
        lo, hi = arr.min(), arr.max()
        if lo < 0 or hi > 4:
            raise ValueError(f"{name}: tile counts must lie in 0..4, got values in {int(lo)}..{int(hi)}")
    return arr, single


def _one_hand(counts, name: str) -> list[int] | None:
    """The 34 counts of a single ``[34]`` hand as Python ints (validated), or None for a batch."""
    arr = np.asarray(counts)
    if arr.ndim != 1:
        return None
    if arr.shape[0] != N_KINDS:
        raise ValueError(f"{name}: expected shape [34] or [N, 34] (tile counts), got {list(arr.shape)}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected an integer array of tile counts, got dtype {arr.dtype}")
    vals = arr.tolist()
    if min(vals) < 0 or max(vals) > 4:
        raise ValueError(f"{name}: tile counts must lie in 0..4, got values in {min(vals)}..{max(vals)}")
    return vals


def _codes(c: np.ndarray, totals: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Table indices ``[N, 4]`` (m, p, s, honors + HONOR_OFFSET) and, if asked, tile totals ``[N]`` (int32)."""
    # A float32 BLAS product is exact here (codes < 2^24) and 4-5x faster than numpy's integer
    # matmul.  It runs in blocks of _CODE_BLOCK rows because a bigger product makes OpenBLAS start
    # threads, whose synchronisation on a busy machine costs ~10x the arithmetic (65536 hands,
    # unpinned, loaded 2-core box: 24 ms in one call, 1.3 ms in blocks).
    weights = _CODE_WEIGHTS if totals else _CODE_WEIGHTS_NO_TOTAL
    n = c.shape[0]
    prod = np.empty((n, weights.shape[1]), dtype=np.float32)
    for lo in range(0, n, _CODE_BLOCK):
        np.matmul(c[lo : lo + _CODE_BLOCK].astype(np.float32), weights, out=prod[lo : lo + _CODE_BLOCK])
    codes = prod.astype(np.int32)
    codes[:, 3] += HONOR_OFFSET
    return codes[:, :4], (codes[:, 4] if totals else None)


def _codes_one(v: list[int]) -> list[int]:
    """Table indices of one hand given as 34 Python ints (Horner's rule, fastest in plain Python)."""
    codes = []
    for lo, hi in ((0, 9), (9, 18), (18, 27), (27, 34)):
        code = 0
        for x in v[hi - 1 : lo - 1 if lo else None : -1]:
            code = code * 5 + x
        codes.append(code)
    codes[3] += HONOR_OFFSET
    return codes


def suit_codes(counts) -> np.ndarray:
    """Base-5 codes ``[N, 4]`` (or ``[4]``) of the m, p, s and honor counts (honors without the table offset)."""
    c, single = _as_counts(counts, "counts")
    codes, _ = _codes(c)
    codes = codes.copy()
    codes[:, 3] -= HONOR_OFFSET
    return codes[0] if single else codes


_kinds_cache: dict[bytes, int] = {}


def _kinds_bits(kinds) -> int:
    """The 34-bit mask of a bool ``[34]`` kinds mask (cached: variants reuse a handful of masks)."""
    k = np.asarray(kinds)
    if k.shape != (N_KINDS,):
        raise ValueError(f"kinds: expected a boolean mask of shape [34], got {list(k.shape)}")
    key = k.astype(bool).tobytes()
    bits = _kinds_cache.get(key)
    if bits is None:
        bits = sum(1 << t for t in range(N_KINDS) if key[t])
        if len(_kinds_cache) < 256:
            _kinds_cache[key] = bits
    return bits


def _pack_bits(mask: np.ndarray) -> np.ndarray:
    """bool ``[N, 34]`` -> uint64 ``[N]`` with bit t = mask[:, t]."""
    out = np.zeros((mask.shape[0], 8), dtype=np.uint8)
    out[:, :5] = np.packbits(mask, axis=1, bitorder="little")
    return out.view("<u8")[:, 0].astype(np.uint64)


def _unpack_bits(bits: np.ndarray) -> np.ndarray:
    """uint64 ``[...]`` -> bool ``[..., 34]``."""
    as_bytes = np.ascontiguousarray(bits, dtype="<u8").view(np.uint8).reshape(*bits.shape, 8)
    return np.unpackbits(as_bytes, axis=-1, count=N_KINDS, bitorder="little").view(bool)


def _owned_bits(owned, n: int) -> np.ndarray:
    """uint64 ``[N]`` (or ``[1]``, broadcasting) of the tiles whose own count is below 4."""
    o = np.asarray(owned)
    if o.ndim == 1:
        o = o[None, :]
    if o.ndim != 2 or o.shape[1] != N_KINDS or o.shape[0] not in (1, n):
        raise ValueError(f"owned: expected shape [34] or [N, 34] with N = {n}, got {list(np.shape(owned))}")
    return _pack_bits(o < 4)


def _owned_bits_one(owned) -> int:
    o = np.asarray(owned)
    if o.shape != (N_KINDS,):
        raise ValueError(f"owned: expected shape [34] for a single hand, got {list(o.shape)}")
    return sum(1 << t for t, x in enumerate(o.tolist()) if x < 4)


def _join_components(per_comp: np.ndarray) -> np.ndarray:
    wide = per_comp.astype(np.uint64)
    wide <<= _BIT_SHIFTS
    return wide[:, 0] | wide[:, 1] | wide[:, 2] | wide[:, 3]


def _wait_bits(entries: np.ndarray, totals: np.ndarray | None, seven_pairs: bool) -> np.ndarray:
    """34-bit wait masks (uint64 ``[M]``) from wait-table entries ``[M, 4]`` and tile totals ``[M]``."""
    cls = (entries >> np.uint32(_CLS_SHIFT)) & np.uint32(3)
    others = cls[:, 0] + cls[:, 1] + cls[:, 2] + cls[:, 3]
    others = others[:, None] - cls
    np.minimum(others, 2, out=others)
    others *= np.uint32(9)
    others += np.uint32(_M1_SHIFT)
    bits = _join_components((entries >> others) & _MASK9)
    if seven_pairs:
        # 13 tiles with exactly one odd count: that tile makes seven pairs (3 + 1 = two pairs).
        odd = _join_components(entries & _MASK9)
        single_odd = (odd & (odd - np.uint64(1))) == 0
        single_odd &= totals == 13
        bits |= np.where(single_odd, odd, np.uint64(0))
    return bits


def _wait_bits_one(entries: list[int], total: int, seven_pairs: bool) -> int:
    """:func:`_wait_bits` for one hand, in Python ints (a batch of one costs ~10x more in numpy calls)."""
    cls = [(e >> _CLS_SHIFT) & 3 for e in entries]
    s = sum(cls)
    bits = 0
    for j in range(4):
        o = s - cls[j]
        if o < 2:
            bits |= ((entries[j] >> (_M1_SHIFT + 9 * o)) & 0x1FF) << (9 * j)
    if seven_pairs and total == 13:
        odd = sum((entries[j] & 0x1FF) << (9 * j) for j in range(4))
        if odd & (odd - 1) == 0:
            bits |= odd
    return bits


def _bool_mask_one(bits: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(bits.to_bytes(8, "little"), dtype=np.uint8), count=N_KINDS, bitorder="little").view(bool)


# ----------------------------------------------------------------------------------- public API


def is_complete(counts, seven_pairs: bool = False) -> np.ndarray | bool:
    """Whether concealed tiles (incl. the winning tile) form a winning shape (docs/rules/common.md §1.4).

    ``counts``: int ``[N, 34]`` or ``[34]``.  Standard shape: k sets (sequences or triplets) plus
    exactly one pair, for any k, so it serves any number of declared melds (14, 11, 8, 5, 2
    tiles).  With ``seven_pairs``: also exactly 14 tiles with every count even (a four-of-a-kind
    is two pairs).  Returns bool ``[N]``, or a Python bool for a single hand.
    """
    table = tables()["complete"]
    v = _one_hand(counts, "counts")
    if v is not None:
        s = sum(table.item(code) for code in _codes_one(v))
        return (s & 15) == 1 or (seven_pairs and s < _ODD_FLAG and sum(v) == 14)
    c, _ = _as_counts(counts, "counts")
    codes, totals = _codes(c, totals=seven_pairs)
    s = table[codes]
    s = s[:, 0] + s[:, 1] + s[:, 2] + s[:, 3]
    ok = (s & np.uint8(15)) == 1
    if seven_pairs:
        ok |= (s < _ODD_FLAG) & (totals == 14)
    return ok


def _waits_one(v: list[int], seven_pairs: bool, kinds, owned) -> int:
    table = tables()["wait"]
    bits = _wait_bits_one([table.item(code) for code in _codes_one(v)], sum(v), seven_pairs)
    if kinds is not None:
        bits &= _kinds_bits(kinds)
    if owned is not None:
        bits &= _owned_bits_one(owned)
    return bits


def _waits(c: np.ndarray, seven_pairs: bool, kinds, owned) -> np.ndarray:
    codes, totals = _codes(c, totals=seven_pairs)
    bits = _wait_bits(tables()["wait"][codes], totals, seven_pairs)
    if kinds is not None:
        bits &= np.uint64(_kinds_bits(kinds))
    if owned is not None:
        bits &= _owned_bits(owned, c.shape[0])
    return bits


def wait_mask(concealed, seven_pairs: bool = False, kinds=None, owned=None) -> np.ndarray:
    """The wait set W(H) of docs/rules/common.md §1.5 as a bool mask ``[N, 34]`` (or ``[34]``).

    ``concealed``: the concealed tiles H, int ``[N, 34]`` or ``[34]`` (13, 10, 7, 4 or 1 tiles).
    Tile t is a wait iff ``kinds[t]`` (bool ``[34]``, the variant's tile kinds; None = all 34),
    ``owned[t] < 4`` (the player's own count of t, concealed + melded, ``[N, 34]`` or ``[34]``;
    default: the concealed count), and H + t is complete (standard shape, or seven pairs when
    ``seven_pairs``).  A tile held four times concealed is never a wait, whatever ``owned`` says:
    no fifth copy exists, and the tables only know counts 0..4.
    """
    v = _one_hand(concealed, "concealed")
    if v is not None:
        return _bool_mask_one(_waits_one(v, seven_pairs, kinds, owned))
    c, _ = _as_counts(concealed, "concealed")
    return _unpack_bits(_waits(c, seven_pairs, kinds, owned))


def ready(concealed, seven_pairs: bool = False, kinds=None, owned=None) -> np.ndarray | bool:
    """Whether the wait set is non-empty (听牌); same arguments as :func:`wait_mask`, bool ``[N]`` or bool."""
    v = _one_hand(concealed, "concealed")
    if v is not None:
        return _waits_one(v, seven_pairs, kinds, owned) != 0
    c, _ = _as_counts(concealed, "concealed")
    return _waits(c, seven_pairs, kinds, owned) != 0


def _discard_bits(c: np.ndarray, seven_pairs: bool) -> np.ndarray:
    """uint64 ``[N, 34]``: the wait mask of ``c - e_d`` for each held d, 0 where d is not held."""
    if c.shape[0] <= _DISCARD_BLOCK:
        return _discard_bits_block(c, seven_pairs)
    # Blocks keep the [block, 34] uint64 temporaries in cache.
    return np.concatenate(
        [_discard_bits_block(c[lo : lo + _DISCARD_BLOCK], seven_pairs) for lo in range(0, c.shape[0], _DISCARD_BLOCK)]
    )


def _discard_bits_block(c: np.ndarray, seven_pairs: bool) -> np.ndarray:
    """:func:`_discard_bits` for one block of hands.

    A discard changes one component only.  So per hand, precompute what every component
    contributes for each possible class sum v of the hand after the discard (``by_sum[n, v]``,
    v = 0..3; 4 stands for "more" and gives nothing); then each discard needs only the new entry
    of its own component: its class picks the column of ``by_sum``, and its own masks are read
    with the unchanged class sum of the other components.
    """
    n = c.shape[0]
    codes, totals = _codes(c, totals=True)
    table = tables()["wait"]
    base = table[codes]  # [N, 4]
    cls = (base >> np.uint32(_CLS_SHIFT)) & np.uint32(3)
    rest = (cls[:, 0] + cls[:, 1] + cls[:, 2] + cls[:, 3])[:, None] - cls  # class sum of the other components
    contrib = ((base[:, :, None] >> _SUM_SHIFTS[cls]) & _MASK9).astype(np.uint64)  # [N, 4 components, 5 sums]
    contrib <<= _BIT_SHIFTS[None, :, None]
    by_sum = (contrib[:, 0] | contrib[:, 1] | contrib[:, 2] | contrib[:, 3]).ravel()

    held = c > 0
    # Where d is not held the subtraction would borrow from the next digit: subtract nothing there,
    # the row is blanked at the end.
    after = table[np.repeat(codes, _COMP_SIZES, axis=1) - held * _POW34]  # [N, 34]: d's component after the discard
    idx = (after >> np.uint32(_CLS_SHIFT)) & np.uint32(3)
    idx += np.repeat(rest, _COMP_SIZES, axis=1)
    np.minimum(idx, 4, out=idx)
    bits = np.take(by_sum, idx + np.arange(0, 5 * n, 5, dtype=np.intp)[:, None])
    bits &= _OTHER_COMP_BITS
    own_shift = np.minimum(rest, 2) * np.uint32(9) + np.uint32(_M1_SHIFT)
    own = ((after >> np.repeat(own_shift, _COMP_SIZES, axis=1)) & _MASK9).astype(np.uint64)
    own <<= _BIT_SHIFTS[_COMP]
    bits |= own
    if seven_pairs:
        # 13 tiles left with exactly one odd count: that tile makes seven pairs.
        odd = _join_components(base & _MASK9)[:, None] ^ _TILE_BITS
        single_odd = (odd & (odd - np.uint64(1))) == 0
        single_odd &= (totals == 14)[:, None]
        bits |= np.where(single_odd, odd, np.uint64(0))
    bits *= held
    return bits


def _discard_bits_one(v: list[int], seven_pairs: bool) -> list[int]:
    """:func:`_discard_bits` for one hand given as 34 Python ints."""
    table = tables()["wait"]
    codes = _codes_one(v)
    entries = [table.item(code) for code in codes]
    total = sum(v) - 1
    out = [0] * N_KINDS
    for d in range(N_KINDS):
        if v[d]:
            k = d // 9
            after = entries.copy()
            after[k] = table.item(codes[k] - _POW_LIST[d])
            out[d] = _wait_bits_one(after, total, seven_pairs)
    return out


def _discard_waits(concealed14, seven_pairs: bool, kinds, owned) -> np.ndarray:
    """uint64 wait masks ``[N, 34]`` (``[34]`` for one hand) after each discard, masks applied."""
    v = _one_hand(concealed14, "concealed14")
    if v is not None:
        rows = _discard_bits_one(v, seven_pairs)
        keep = _kinds_bits(kinds) if kinds is not None else (1 << N_KINDS) - 1
        if owned is not None:
            own = _owned_bits_one(owned)
            rows = [r & keep & (own | 1 << d) for d, r in enumerate(rows)]
        elif kinds is not None:
            rows = [r & keep for r in rows]
        return np.array(rows, dtype=np.uint64)
    c, _ = _as_counts(concealed14, "concealed14")
    bits = _discard_bits(c, seven_pairs)
    if kinds is not None:
        bits &= np.uint64(_kinds_bits(kinds))
    if owned is not None:
        # After discarding d the own count of d drops by one, so d itself is never blocked.
        bits &= _owned_bits(owned, c.shape[0])[:, None] | _TILE_BITS[None, :]
    return bits


def wait_mask_after_discards(concealed14, seven_pairs: bool = False, kinds=None, owned=None) -> np.ndarray:
    """Wait sets after each possible discard: bool ``[N, 34, 34]`` (or ``[34, 34]``), indexed ``[n, d, t]``.

    ``concealed14``: concealed tiles before discarding (14, 11, 8, 5 or 2), int ``[N, 34]`` or
    ``[34]``.  Row d equals ``wait_mask(concealed14 - e_d, ...)`` when d is held, all False
    otherwise; ``owned`` (concealed + melded, before the discard) is reduced by the discarded tile.
    This decides whether a discard with 亮倒 is legal (docs/rules/kawuxing.md §3.6 D1).
    """
    return _unpack_bits(_discard_waits(concealed14, seven_pairs, kinds, owned))


def ready_after_discards(concealed14, seven_pairs: bool = False, kinds=None, owned=None) -> np.ndarray:
    """bool ``[N, 34]`` (or ``[34]``): discarding d leaves a ready hand, i.e. ``wait_mask_after_discards(...).any(-1)``."""
    return _discard_waits(concealed14, seven_pairs, kinds, owned) != 0


# ----------------------------------------------------------------------------------- readings


@dataclass(frozen=True)
class Reading:
    """One concrete split of the concealed tiles (incl. the winning tile).

    ``kind`` is ``"standard"`` or ``"seven_pairs"``.  Standard: ``sets`` holds the concealed sets
    as ``("seq", first_tile_id)`` / ``("trip", tile_id)`` in Python's sorted order (sequences
    first), ``pair`` the pair's tile id.  Seven pairs: ``sets == ()``, ``pair is None`` and
    ``pairs`` the 7 pair tile ids sorted (a four-of-a-kind appears twice).
    """

    kind: str
    sets: tuple[tuple[str, int], ...]
    pair: int | None
    pairs: tuple[int, ...] = ()


def _set_splits(c: list[int], start: int, acc: list[tuple[str, int]], out: list[tuple[tuple[str, int], ...]]) -> None:
    i = start
    while i < N_KINDS and c[i] == 0:
        i += 1
    if i == N_KINDS:
        out.append(tuple(sorted(acc)))
        return
    # Every copy of the lowest remaining tile i is in a triplet of i or a sequence starting at i.
    # Choosing the number of triplets (0 or 1) fixes the number of sequences, so each multiset of
    # sets is produced exactly once.
    n = c[i]
    for trips in (0, 1):
        seqs = n - 3 * trips
        if seqs < 0:
            break
        if seqs and (i >= 27 or i % 9 > 6 or c[i + 1] < seqs or c[i + 2] < seqs):
            continue
        c[i] = 0
        if seqs:
            c[i + 1] -= seqs
            c[i + 2] -= seqs
        acc.extend([("trip", i)] * trips + [("seq", i)] * seqs)
        _set_splits(c, i + 1, acc, out)
        del acc[len(acc) - trips - seqs :]
        c[i] = n
        if seqs:
            c[i + 1] += seqs
            c[i + 2] += seqs


def readings(counts, seven_pairs: bool = False) -> list[Reading]:
    """All distinct readings of one complete hand (concealed tiles incl. the winning tile, ``[34]``).

    Standard readings (distinct multisets of sets + pair), sorted by pair then sets, followed by
    the seven-pairs reading when ``seven_pairs`` and the hand has that shape.  Empty if the hand is
    not complete.
    """
    if np.ndim(counts) != 1:
        raise ValueError(f"counts: expected shape [34] (one hand), got {list(np.shape(counts))}")
    c = _one_hand(counts, "counts")
    found: list[Reading] = []
    cls_table = tables()["cls"]
    codes = _codes_one(c)
    cls = [cls_table.item(code) for code in codes]
    if sorted(cls) == [0, 0, 0, 1]:
        # The pair lies in the one component of class 1, and removing it must leave that component
        # sets-only: this skips the recursion for every pair that cannot lead to a reading.
        k = cls.index(1)
        for p in range(9 * k, min(9 * k + 9, N_KINDS)):
            if c[p] < 2 or cls_table.item(codes[k] - 2 * _POW_LIST[p]) != 0:
                continue
            c[p] -= 2
            splits: list[tuple[tuple[str, int], ...]] = []
            _set_splits(c, 0, [], splits)
            c[p] += 2
            found.extend(Reading("standard", s, p) for s in sorted(splits))
    if seven_pairs and sum(c) == 14 and all(x % 2 == 0 for x in c):
        found.append(seven_pairs_reading(c))
    return found


# Reading codes: how the compiled scorers (mjenv.engine.kwscore.best_reading, gjscore.best_reading) name the best
# reading they found, so that a result can be built from that one reading instead of all of them:
# ``pair << 5 | choice`` for a standard reading (:func:`reading_of_choice`), the pair READING_SEVEN_PAIRS for seven
# pairs, READING_SPECIAL for Gejiu's 烂牌 / 七星, with READING_TIE set when another reading scored as well (the
# Python scorer's order then decides: score every reading), -1 for none.
READING_SEVEN_PAIRS = 34
READING_SPECIAL = 35
READING_TIE = 1 << 11


def reading_of_choice(full, p: int, choice: int) -> Reading | None:
    """The standard reading of the complete hand ``full`` with pair ``p`` in which the d-th tile held three or more
    times once the pair is out (in tile order) is read as a triplet when bit d of ``choice`` is set, the rest of
    each tile starting sequences; ``None`` when that split fails.  The Python twin of
    :func:`mjenv.engine.handk.reading_split`, which numbers the readings the compiled scorers walk."""
    c = np.asarray(full).tolist()
    c[p] -= 2
    sets: list[tuple[str, int]] = []
    d = 0
    for i in range(N_KINDS):
        n = c[i]
        if n == 0:
            continue
        trips = 0
        if n >= 3:
            trips = (choice >> d) & 1
            d += 1
        seqs = n - 3 * trips
        if seqs > 0:
            if i >= 27 or i % 9 > 6 or c[i + 1] < seqs or c[i + 2] < seqs:
                return None
            c[i + 1] -= seqs
            c[i + 2] -= seqs
            sets += [("seq", i)] * seqs
        if trips:
            sets.append(("trip", i))
    return Reading("standard", tuple(sorted(sets)), p)


def seven_pairs_reading(full) -> Reading:
    """The seven-pairs reading of the complete hand ``full`` (every count even), as :func:`readings` lists it."""
    c = np.asarray(full).tolist()
    return Reading("seven_pairs", (), None, tuple(t for t in range(N_KINDS) for _ in range(c[t] // 2)))


# reading_text is called for every scored hand, and format_tiles per set costs more than the
# scoring itself, so the set texts are formatted once.
_SEQ_TEXT = {t: format_tiles([t, t + 1, t + 2]) for t in range(27) if t % 9 <= 6}
_TRIP_TEXT = {t: format_tiles([t] * 3) for t in range(N_KINDS)}
_PAIR_TEXT = {t: format_tiles([t] * 2) for t in range(N_KINDS)}


def reading_text(reading: Reading, melds_text: str = "") -> str:
    """Human-readable reading, e.g. ``"123p · 789p · 456s · 555z · pair 88s"`` (melds appended after ``+``)."""
    if reading.kind == "seven_pairs":
        text = "seven pairs " + " · ".join(_PAIR_TEXT[t] for t in reading.pairs)
    else:
        parts = [_SEQ_TEXT[t] if kind == "seq" else _TRIP_TEXT[t] for kind, t in reading.sets]
        parts.append("pair " + _PAIR_TEXT[reading.pair])
        text = " · ".join(parts)
    return text + " + " + melds_text if melds_text else text
