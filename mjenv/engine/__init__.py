"""The batched game core: the action layout (actions.py), packed state arrays, compiled (numba) per-table kernels,
reset/step, legality, sampled worlds, invariant checks.  Imports the rules below it, never the encodings, envs or
agents above it."""
