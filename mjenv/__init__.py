"""mjenv: reinforcement-learning environments for regional Chinese mahjong.

The public front door.  Rules live in :mod:`mjenv.rules` (pure functions, no env concepts),
the batched numpy game core in :mod:`mjenv.engine`, agent-facing encodings in
:mod:`mjenv.encoding`, and the PettingZoo / Gymnasium adapters in :mod:`mjenv.envs`.
"""

__version__ = "0.1.0"

VARIANTS = ("kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei")
