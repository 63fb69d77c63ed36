"""The agent protocol and the decoding of ``mjenv-obs-v1`` observations back into tiles.

This module owns :class:`Agent` (one batched ``act(obs, mask) -> actions`` call plus a ``name``) and
:class:`ObsView`, which reads an observation batch through the encoder's named blocks (never through
hard-coded row numbers) into the integer arrays a rule-based player needs: its own hand and melds,
every seat's melds, discards and 亮倒 face-up tiles, the tile under claim, the phase, the wall, Gejiu's
face-up kong tiles and the 园子 balances.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

from mjenv.encoding.observation import OBS_VERSION, ObservationEncoder
from mjenv.engine import state as S
from mjenv.rules import Rules, load_rules


@runtime_checkable
class Agent(Protocol):
    """A batched player: ``act(obs float32 [B, C, 34], mask bool [B, 111]) -> int64 [B]`` legal action ids."""

    name: str

    def act(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One legal action per row of ``mask``."""
        ...


def agent_act(agent, obs, mask: np.ndarray, *, engine=None, tables=None, keys=None) -> np.ndarray:
    """``agent.act`` with what the agent declares it takes: ``keys=`` when ``takes_keys``, and ``engine=`` /
    ``tables=`` (the engine and the table of each row, whose acting seat decides) when ``uses_engine`` — the
    players that read the engine's packed state or sample worlds from it (:mod:`agents.players.fastplay`,
    :mod:`agents.players.search`)."""
    kw = {}
    if getattr(agent, "takes_keys", False):
        kw["keys"] = keys
    if getattr(agent, "uses_engine", False):
        if engine is None or tables is None:
            raise ValueError(f"agent {agent.name!r} plays on the engine's tables; this caller has no engine to give it")
        kw["engine"] = engine
        kw["tables"] = tables
    return np.asarray(agent.act(obs, mask, **kw)).reshape(-1)


_KNOWN_RULES: dict[tuple[str, str], Rules] = {}
"""The rule configurations this process holds, by variant and complete options record (see :func:`resolve_rules`)."""


def _record_key(variant: str, options: Mapping) -> tuple[str, str]:
    return variant, json.dumps(dict(options), sort_keys=True, default=str)


def resolve_rules(variant: str | Rules = "kawuxing3", options: Any = None) -> Rules:
    """The :class:`mjenv.rules.Rules` an agent plays under: ``variant`` given as a :class:`Rules` is taken as it is
    (``options``, if given, must be its options); an options value is wrapped without resolving anything; ``None``
    (the variant's default ruleset) or a mapping of option values is resolved by :func:`mjenv.rules.load_rules` —
    except a complete options record (what a checkpoint stores) of a configuration this process already holds,
    which is that :class:`Rules` again: one resolution per rule configuration, however many layers read it."""
    if isinstance(variant, Rules):
        if options is not None and options != variant.options and not (
                isinstance(options, Mapping) and _record_key(variant.variant, options) == _record_key(
                    variant.variant, variant.options_dict())):
            raise ValueError(f"options {options!r} differ from the rules given ({variant!r}); give one or the other")
        rules = variant
    elif isinstance(options, Rules):
        if options.variant != variant:
            raise ValueError(f"variant {variant!r} differs from the rules' variant {options.variant!r}")
        rules = options
    elif isinstance(options, Mapping) and _record_key(variant, options) in _KNOWN_RULES:
        return _KNOWN_RULES[_record_key(variant, options)]
    else:
        rules = load_rules(variant, options=options)
    _KNOWN_RULES.setdefault(_record_key(rules.variant, rules.options_dict()), rules)
    return rules


def resolve_options(variant: str | Rules, options: Any = None):
    """A rule options value from ``None`` (the variant's default ruleset), a mapping, an options value or a
    :class:`mjenv.rules.Rules` (:func:`resolve_rules`)."""
    return resolve_rules(variant, options).options


# The meld letter of each row inside one seat's 5-row block of ``melds`` (pong, chi, direct kong, added kong,
# concealed kong).
MELD_LETTER_BY_ROW = "PCKAX"


@dataclass
class Decoded:
    """One observation batch as integer arrays (relative seats: 0 = the observer, 1 = its next player, ...)."""

    hand: np.ndarray  # int8 [B, 34] own concealed tiles
    drawn: np.ndarray  # int64 [B] tile the observer just drew, -1 if none
    melds: np.ndarray  # int8 [B, n, 5, 34] meld rows per seat (pong, chi, direct, added, concealed kong)
    meld_tiles: np.ndarray  # int8 [B, n, 34] tiles in each seat's melds (kongs count 4)
    n_melds: np.ndarray  # int64 [B, n]
    discards: np.ndarray  # int8 [B, n, 34] unclaimed discards per seat
    revealed: np.ndarray  # bool [B, n] declared 亮倒
    shown: np.ndarray  # int8 [B, n, 34] 亮倒 face-up tiles
    face_down: np.ndarray  # int64 [B, n] tiles kept face down (whole triplets)
    claim_tile: np.ndarray  # int64 [B] tile under claim, -1 outside a claim/rob window
    claim_from: np.ndarray  # int64 [B] relative seat of the discarder/konger, -1 if none
    phase: np.ndarray  # int64 [B] engine phase (state.TURN, CLAIMED, CLAIM, ROB, DONE, PICK)
    wall_left: np.ndarray  # int64 [B] tiles left in the live wall
    locked: np.ndarray  # bool [B] own missed-win lock set
    kinds: np.ndarray  # bool [34] tile kinds in play
    kong_tiles: np.ndarray | None = None  # int64 [B, 2] Gejiu's face-up kong tiles per slot, -1 for an empty slot
    balance: np.ndarray | None = None  # float64 [B, n] 园子 balance per seat in b (None when money is unlimited)
    busted: np.ndarray | None = None  # bool [B, n] balance 0 under 园子 (None when money is unlimited)

    def visible(self) -> np.ndarray:
        """int [B, 34]: copies the observer can see (own hand, every meld, every discard, others' face-up tiles)."""
        seen = self.hand.astype(np.int16) + self.meld_tiles.sum(1) + self.discards.sum(1)
        seen += self.shown[:, 1:].sum(1)
        return seen

    def live(self) -> np.ndarray:
        """int [B, 34]: copies not seen by the observer (0 for kinds not in play)."""
        return np.where(self.kinds[None, :], np.clip(4 - self.visible(), 0, 4), 0)


class ObsView:
    """Reads ``mjenv-obs-v1`` observations of one variant and option set by block name."""

    def __init__(self, variant: str | Rules, options: Any = None):
        self.rules = resolve_rules(variant, options)
        self.variant = self.rules.variant
        self.opts = self.rules.options
        self.encoder = ObservationEncoder(rules=self.rules)
        if self.encoder.version != OBS_VERSION:
            raise ValueError(f"ObsView reads {OBS_VERSION}, the encoder is {self.encoder.version}")
        self.n = self.encoder.n
        self.kinds = self.encoder.kinds.astype(bool)
        self.shape = self.encoder.shape

    def rows(self, obs: np.ndarray, name: str) -> np.ndarray:
        """Block ``name`` of ``obs`` (``[B, rows, 34]``)."""
        return obs[:, self.encoder.slices[name], :]

    def decode(self, obs: np.ndarray) -> Decoded:
        """Decode a batch ``float32 [B, C, 34]``."""
        obs = np.asarray(obs)
        if obs.ndim == 2:  # flat observations, as the SB3 env hands them out
            obs = obs.reshape(obs.shape[0], *self.shape)
        if obs.shape[1:] != self.shape:
            raise ValueError(f"observation shape {obs.shape[1:]} is not {self.shape} ({OBS_VERSION}, {self.variant})")
        B, n = obs.shape[0], self.n
        hand = self.rows(obs, "hand").sum(1).round().astype(np.int8)
        drawn_row = self.rows(obs, "drawn")[:, 0]
        drawn = np.where(drawn_row.max(1) > 0.5, drawn_row.argmax(1), -1)
        melds = self.rows(obs, "melds").reshape(B, n, 5, 34).round().astype(np.int8)
        per_row = np.array([3, 3, 4, 4, 4], dtype=np.int8)[None, None, :, None]
        meld_tiles = (melds[:, :, [0, 2, 3, 4]] * per_row[:, :, [0, 2, 3, 4]]).sum(2)
        chi = melds[:, :, 1]  # a chi at t holds t, t+1, t+2
        meld_tiles[:, :, :32] += chi[:, :, :32]
        meld_tiles[:, :, 1:33] += chi[:, :, :32]
        meld_tiles[:, :, 2:34] += chi[:, :, :32]
        n_melds = melds.sum((2, 3)).astype(np.int64)
        disc = self.rows(obs, "discards").reshape(B, n, 5, 34)[:, :, :4].sum(2).round().astype(np.int8)
        rev = self.rows(obs, "reveal").reshape(B, n, 7, 34)
        revealed = rev[:, :, 0, 0] > 0.5
        shown = rev[:, :, 2:6].sum(2).round().astype(np.int8)
        face_down = np.rint(rev[:, :, 6, 0] * 12).astype(np.int64)
        claim = self.rows(obs, "claim")
        has_claim = claim[:, 0].max(1) > 0.5
        claim_tile = np.where(has_claim, claim[:, 0].argmax(1), -1)
        claim_from = np.where(has_claim, claim[:, 3 : 3 + n, 0].argmax(1), -1)
        phase = self.rows(obs, "phase")[:, :6, 0].argmax(1)
        wall_left = np.rint(self.rows(obs, "wall")[:, 0, 0] * self.encoder.live_wall).astype(np.int64)
        locked = self.rows(obs, "lock")[:, 0, 0] > 0.5
        kt = self.rows(obs, "kong_tiles")
        kong_tiles = np.where(kt.max(2) > 0.5, kt.argmax(2), -1).astype(np.int64)
        balance = busted = None
        if self.encoder.bankroll > 0:
            bank = self.rows(obs, "bankroll")[:, :, 0].astype(np.float64)
            balance = bank[:, :n] * self.encoder.bankroll
            busted = bank[:, n : 2 * n] > 0.5
        return Decoded(
            hand=hand, drawn=drawn.astype(np.int64), melds=melds, meld_tiles=meld_tiles, n_melds=n_melds,
            discards=disc, revealed=revealed, shown=shown, face_down=face_down,
            claim_tile=claim_tile.astype(np.int64), claim_from=claim_from.astype(np.int64),
            phase=phase.astype(np.int64), wall_left=wall_left, locked=locked, kinds=self.kinds, kong_tiles=kong_tiles,
            balance=balance, busted=busted,
        )
