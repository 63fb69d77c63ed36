"""Pure rules: options, the variant registry, hand analysis and scoring. Knows nothing of agents, observations or
envs.

:func:`load_rules` resolves a rule configuration once into a :class:`Rules` value (:mod:`mjenv.rules.value`), which
the engine, the envs and the encoders take as ``rules=``; :func:`resolution_count` counts the resolutions.
"""

from mjenv.rules.value import Rules, load_rules, resolution_count

__all__ = ["Rules", "load_rules", "resolution_count"]
