"""Look-ahead features for learned policies: the heuristic's advice and per-tile discard facts.

This module owns the feature sets ``heuristic-advice-v1``, ``-v2`` and ``-v3`` (:data:`FEATURE_SETS`; they differ
only in the advising player: v1 :class:`~agents.players.heuristic.HeuristicAgent`, v2 the built-in
``heuristic-flush``, which in Kawuxing also plays towards 清一色, v3 ``heuristic-flush`` with Gejiu's 七星 wait of
:data:`ADVISOR_KEYWORDS`, the same player elsewhere): rows of ``[rows, 34]`` planes that a policy
reads *after* the observation (``mjenv-obs-v1``), computed from the observation and the action mask
alone, so they use nothing a player could not know.  In the spirit of Suphx's look-ahead features
(Li et al. 2020, "Suphx: Mastering Mahjong with Deep Reinforcement Learning", §3.1), they hand the network
the results of searches it would otherwise have to learn to do itself:

| block | rows | meaning |
|---|---|---|
| advice | 12 | the action :class:`agents.players.heuristic.HeuristicAgent` would take, one-hot over the 111 action ids: rows 0–2 the tile planes of ``discard:T``, ``liang:T``, ``kong:T``; rows 3–11 scalar rows (every column) for ids 102–110 (pong, kong, chi low/mid/high, win, pass, kongtile 0/1) |
| danger | 1 | per tile, how many revealed (亮倒) opponents wait on it, or a 包牌 liability tile (the heuristic's :meth:`~agents.players.heuristic.HeuristicAgent.danger`), / 2 |
| shanten_after | 1 | on one's own turn, for every tile held: (shanten after discarding it + 1) / 8, standard or seven pairs (:func:`mjenv.encoding.shanten.shanten`); 0 for tiles not held and outside one's own turn |

A policy with advice (``train.py --advice``) adds the advice one-hot to its action logits with a learned
weight (:func:`agents.players.policy.make_head`), so it starts as the heuristic and learns where to depart from it.
The features cost one heuristic decision per observation (≈ 0.1 ms a row, batched).

**The advisor's version.**  A checkpoint that reads these rows was trained on one advisor's behaviour, and a
change to the heuristic changes what the network reads.  :func:`advisor_fingerprint` names that behaviour: the
advisor plays every seat of :data:`FINGERPRINT_TABLES` fixed deals (one hand each) under the checkpoint's rules,
and the SHA-256 of every feature row it computes on the way (advice, danger and shanten rows of each decision:
1,359 of them in Kawuxing, ≈ 1 CPU s) is the fingerprint.  It is computed, not declared, so a change cannot be
forgotten: any change of the advisor's move, danger or shanten output on those positions changes it, and a change
of a move also changes the positions that follow.  ``train.py`` records it in the checkpoint and
:func:`agents.players.policy.check_payload` refuses a checkpoint whose fingerprint is not this code's.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import numpy as np

from agents.players.heuristic import HeuristicAgent
from mjenv.encoding.shanten import shanten
from mjenv.engine import state as S

FEATURES_VERSION = "heuristic-advice-v1"
FEATURE_SETS = {"heuristic-advice-v1": "heuristic", "heuristic-advice-v2": "heuristic-flush",
                "heuristic-advice-v3": "heuristic-flush"}
"""Feature set name -> the :func:`agents.make_agent` name of the player whose move is the advice (with the
keywords of :data:`ADVISOR_KEYWORDS`)."""
ADVISOR_KEYWORDS = {"heuristic-advice-v3": {"gejiu": {"qixing_wait": 10}}}
"""Feature set name -> rule family -> the :class:`~agents.players.heuristic.HeuristicAgent` keywords its advisor
adds to the named player's (none elsewhere).  ``heuristic-advice-v3`` is ``heuristic-advice-v2`` but in Gejiu its
advisor passes a discard win of a ready 烂牌 holding six distinct honors while the seventh is unseen and 10 or more
tiles are left, waiting on for the 七星 (16× a plain hand; docs/experiments/four-player.md, "Gejiu: where
heuristic-flush leaves money"); in every other family it plays as v2's advisor."""


def advisor_keywords(version: str, variant: Any = "kawuxing3", options: Any = None) -> dict:
    """The extra :class:`~agents.players.heuristic.HeuristicAgent` keywords of feature set ``version``'s advisor
    under ``variant`` (a name or :class:`mjenv.rules.Rules`) and ``options`` (:data:`ADVISOR_KEYWORDS`)."""
    from agents.players.base import resolve_rules
    from mjenv.rules.options import get_variant

    if version not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {version!r}; use one of {', '.join(FEATURE_SETS)}")
    family = get_variant(resolve_rules(variant, options).variant).family
    return dict(ADVISOR_KEYWORDS.get(version, {}).get(family, {}))
FINGERPRINT_TABLES = 64
"""Deals (one hand each, wall ids 0..63 of :data:`FINGERPRINT_SEED`, dealer rotating) the fingerprint plays."""
FINGERPRINT_SEED = 20_261_204
ADVICE_ROWS = 12
ROWS = ADVICE_ROWS + 2
_TILE_FAMILIES = 3  # discard, liang, kong: the action ids 0..101 are three planes of 34


def advice_planes(actions: np.ndarray) -> np.ndarray:
    """``float32 [B, 12, 34]``: the advice block for one action id per row (see the module docstring)."""
    actions = np.asarray(actions, dtype=np.int64)
    out = np.zeros((len(actions), ADVICE_ROWS, 34), dtype=np.float32)
    rows = np.arange(len(actions))
    tile = actions < _TILE_FAMILIES * 34
    out[rows[tile], actions[tile] // 34, actions[tile] % 34] = 1.0
    fixed = ~tile
    out[rows[fixed], _TILE_FAMILIES + actions[fixed] - _TILE_FAMILIES * 34, :] = 1.0
    return out


def advice_vector(planes: np.ndarray) -> np.ndarray:
    """``[B, 111]``: the action one-hot back from advice planes ``[B, 12, 34]`` (inverse of :func:`advice_planes`)."""
    b = len(planes)
    return np.concatenate([planes[:, :_TILE_FAMILIES].reshape(b, -1), planes[:, _TILE_FAMILIES:, 0]], axis=1)


class AdviceFeatures:
    """Computes the rows of feature set ``version`` (:data:`FEATURE_SETS`) for a batch of observations of one
    variant and rule set."""

    rows = ROWS

    def __init__(self, variant: str = "kawuxing3", options: Any = None, version: str = FEATURES_VERSION):
        if version not in FEATURE_SETS:
            raise ValueError(f"unknown feature set {version!r}; use one of {', '.join(FEATURE_SETS)}")
        from agents.players.heuristic import heuristic_player

        self.version = version
        self.heuristic = heuristic_player(FEATURE_SETS[version], variant, options,
                                          **advisor_keywords(version, variant, options))
        assert isinstance(self.heuristic, HeuristicAgent)
        self.view = self.heuristic.view
        self._sp = self.heuristic._sp

    def encode(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``float32 [B, 14, 34]`` for observations ``[B, C, 34]`` (or flat ``[B, C*34]``) and masks ``[B, 111]``.

        Rows with no legal action (a finished hand) get zero rows."""
        mask = np.asarray(mask, dtype=bool)
        B = len(mask)
        obs = np.asarray(obs, dtype=np.float32).reshape(B, *self.view.shape)
        out = np.zeros((B, ROWS, 34), dtype=np.float32)
        live = np.flatnonzero(mask.any(1))
        if not len(live):
            return out
        d = self.view.decode(obs[live])
        m = mask[live]
        out[live, :ADVICE_ROWS] = advice_planes(self.heuristic.decide(d, m))
        local = np.arange(len(live))
        out[live, ADVICE_ROWS] = np.minimum(self.heuristic.danger(d, local), 2) / 2.0
        own = np.flatnonzero((d.phase == S.TURN) | (d.phase == S.CLAIMED))
        if len(own):
            h = d.hand[own].astype(np.int8)
            r_i, t_i = np.nonzero(h > 0)
            after = h[r_i].copy()
            after[np.arange(len(r_i)), t_i] -= 1
            s = shanten(after, d.n_melds[own[r_i], 0], self._sp)
            out[live[own[r_i]], ADVICE_ROWS + 1, t_i] = (np.minimum(s, 7) + 1) / 8.0
        return out

    def extend(self, obs: np.ndarray, mask: np.ndarray, core=None) -> np.ndarray:
        """``float32 [B, C + 14, 34]``: the observations with these rows appended (``core``, the tables the
        batch came from, is not needed: the features read the observation alone)."""
        mask = np.asarray(mask, dtype=bool)
        obs = np.asarray(obs, dtype=np.float32).reshape(len(mask), *self.view.shape)
        return np.concatenate([obs, self.encode(obs, mask)], axis=1)


def advisor_fingerprint(variant: str, options: Any, version: str) -> str:
    """``"sha256:<hex>"`` of the advisor of feature set ``version`` under ``variant`` and ``options`` (a rule options
    value or the dict a checkpoint stores): see the module docstring.  Cached per process (≈ 1 CPU s to compute)."""
    from agents.players.base import resolve_rules

    if version not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {version!r}; use one of {', '.join(FEATURE_SETS)}")
    return _fingerprint(resolve_rules(variant, options), version)


@functools.lru_cache(maxsize=16)
def _fingerprint(rules, version: str) -> str:
    variant, opts = rules.variant, rules.options
    options_key = json.dumps(rules.options_dict(), sort_keys=True, default=str)
    features = AdviceFeatures(variant, opts, version)
    digest = hashlib.sha256(f"{version}|{variant}|{options_key}".encode())

    def decide(live, obs, mask):
        rows = features.encode(obs, mask)
        digest.update(live.astype(np.int64).tobytes())
        digest.update(rows.tobytes())
        return advice_vector(rows[:, :ADVICE_ROWS]).argmax(1).astype(np.int64)

    play_fixed_deals(variant, opts, FINGERPRINT_TABLES, FINGERPRINT_SEED, decide)
    return "sha256:" + digest.hexdigest()


def play_fixed_deals(variant: str, options: Any, tables: int, seed: int, decide) -> None:
    """Play the deals ``0..tables-1`` of ``seed`` (dealer rotating) to their end, every move chosen by
    ``decide(live int64 [L], obs [L, C, 34], mask [L, 111]) -> actions int64 [L]`` for the tables still playing
    (what a fingerprint over fixed positions walks through)."""
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine.core import Engine

    engine = Engine(variant, tables, options=options, record_events=False)
    engine.reset(seed=seed, dealer=np.arange(tables) % engine.n)
    encoder = encoder_for(engine)
    st = engine.state
    while True:
        live = np.flatnonzero(st.phase != S.DONE)
        if not len(live):
            return
        obs = encoder.encode(st, st.actor[live].astype(np.int64), live, engine=engine)
        engine.step(decide(live, obs, engine.mask[live]), tables=live)
