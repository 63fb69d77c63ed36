"""The batched game core: packed state arrays, compiled (numba) per-table kernels, reset/step, legality, invariant checks."""
