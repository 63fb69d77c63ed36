"""The batched numpy game core: state arrays, reset/step, legality, invariant checks."""
