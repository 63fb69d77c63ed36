"""Software prefetch for the compiled game core: ask for the next table's state rows while the kernel plays this one.

A step at B = 4096 walks 4096 tables whose packed rows (``b8``: 828 bytes for Kawuxing-3p, ``b16``: 414, the mask
row: 111) were last touched a whole step earlier, so each table begins with cache misses the core waits for: the
kernel's time per decision rose from ≈ 0.9 µs at B = 64–1024 to ≈ 1.2 µs at B = 4096 and ≈ 1.4 µs at B = 16,384
(docs/benchmarks.md, "Per core").  :func:`prefetch_table` issues one ``prefetch`` instruction per cache line of the
next table's rows (LLVM's ``llvm.prefetch``: a hint, no effect on any value), so they arrive while the current table
is played.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from mjenv.engine.jit import njit

LINE = 64
"""Bytes per cache line (x86-64, arm64)."""


@intrinsic
def prefetch(typingctx, arr, offset):
    """Prefetch (for reading, into all cache levels) the byte ``offset`` bytes from the start of array ``arr``'s
    data; nothing else happens (an address outside the array is only a wasted hint, never read)."""
    if not isinstance(arr, types.Array) or not isinstance(offset, types.Integer):
        return None
    sig = types.void(arr, offset)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        base = builder.bitcast(ary.data, ir.IntType(8).as_pointer())
        addr = builder.gep(base, [args[1]])
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [addr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # (rw 0: read; locality 3: keep in every level; 1: data cache)
        builder.call(fn, [addr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, _nrt=False, inline="always")
def _prefetch_row(a, b):
    """Prefetch every cache line of row ``b`` of the C-contiguous 2-D array ``a``."""
    start = b * a.strides[0]
    width = a.shape[1] * a.itemsize
    first = start - start % LINE
    for off in range(first, start + width, LINE):
        prefetch(a, off)


@njit(cache=True, _nrt=False, inline="always")
def prefetch_table(b8, b16, mask, b):
    """Prefetch table ``b``'s rows of the packed state (``b8``, ``b16``) and of the mask."""
    _prefetch_row(b8, b)
    _prefetch_row(b16, b)
    _prefetch_row(mask, b)
