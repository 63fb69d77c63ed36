"""mjenv: reinforcement-learning environments for regional Chinese mahjong.

The public front door.  Rules live in :mod:`mjenv.rules` (pure functions, no env concepts),
the compiled batched game core in :mod:`mjenv.engine`, agent-facing encodings in
:mod:`mjenv.encoding`, and the PettingZoo / Gymnasium adapters in :mod:`mjenv.envs`.

Entry points (loaded on first use, so that ``import mjenv`` stays light); each takes the rules as strings
(variant, ruleset, preset, options), resolved once, or as ``rules=`` a :class:`mjenv.rules.Rules` from
:func:`mjenv.rules.load_rules`:

* ``mjenv.env(variant="kawuxing3", ruleset=None, preset=None, options=None, render_mode=None)`` —
  PettingZoo AEC env with the classic wrappers; ``mjenv.raw_env(...)`` the bare env class
  (:mod:`mjenv.envs.aec`);
* ``mjenv.vector_env(variant, num_envs, ...)`` — Gymnasium ``VectorEnv`` over one engine batch
  (:class:`mjenv.envs.vector.MahjongVectorEnv`);
* ``mjenv.sb3_vec_env(variant, num_envs, ...)`` — stable-baselines3 ``VecEnv`` with
  ``action_masks()`` (needs the ``train`` extra);
* ``mjenv.single_env(variant, ...)`` — single-agent Gymnasium env against fixed opponents
  (:class:`mjenv.envs.single.MahjongSingleEnv`).

The compiled code (numba) ships precompiled for x86-64 Linux (:mod:`mjenv.engine.jitcache`); what a start
compiles anyway is cached beside the source, or, when the install is read-only, in ``$XDG_CACHE_HOME/mjenv/numba``
(:mod:`mjenv._numba_setup`).
"""

from mjenv._version import __version__

__all__ = ["VARIANTS", "__version__", "env", "raw_env", "vector_env", "sb3_vec_env", "single_env"]

_LAZY = {
    "env": ("mjenv.envs.aec", "env"),
    "raw_env": ("mjenv.envs.aec", "raw_env"),
    "vector_env": ("mjenv.envs.vector", "MahjongVectorEnv"),
    "sb3_vec_env": ("mjenv.envs.vector", "sb3_vec_env"),
    "single_env": ("mjenv.envs.single", "MahjongSingleEnv"),
}


def __getattr__(name: str):
    """Import the env entry points on first access (PEP 562); ``VARIANTS``, the names of the implemented variants
    (a tuple, in the order of :data:`mjenv.rules.options.VARIANTS`, which the rule families declare)."""
    if name == "VARIANTS":
        from mjenv.rules.options import VARIANTS

        value = tuple(VARIANTS)
        globals()[name] = value
        return value
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mjenv' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"VARIANTS"})
