"""The network-only policy network as an RLlib module, and its way back to an mjenv checkpoint.

This module owns :class:`ResNetMaskedModule`, an RLlib (new API stack) ``TorchRLModule`` for PPO on
:class:`mjenv.envs.rllib.MahjongRLlibEnv`: the ``resnet1d`` network of :mod:`agents.players.resnet` (the same trunk
and head a ``network:PATH`` checkpoint plays with) reads the ``"observations"`` half of the env's observation, the
``"action_mask"`` half gives illegal actions a logit of ``FLOAT_MIN``, and a small value head reads the trunk's
features.  It can start from a network-only checkpoint (``model_config["init"]``: e.g.
``agents/checkpoints/kawuxing3-network.pt``; its policy is then exactly the checkpoint's) and
:func:`module_payload` turns a trained module back into a network-only ``mjenv-policy-v1`` checkpoint, which
``PolicyAgent`` / ``evaluate.py --agents network:PATH`` play.  ``examples/rllib_ppo.py --model resnet1d`` uses both.

Derived rows (``derived``: ``mjenv-hand-v1``, :mod:`mjenv.encoding.handfeat`) are computed inside the module from the
env's v1 observation, as ``PolicyAgent`` computes them at play time, so the env stays as it is; a checkpoint that
reads them (``kawuxing3-network-hand.pt``) brings its ``derived`` with it, and the saved checkpoint records it.

``model_config`` keys: ``obs_shape`` ([C, 34], the env's v1 observation; required), ``channels``, ``blocks``,
``hidden`` (the ``resnet1d`` architecture), ``derived`` and ``variant`` (the rules the derived rows are computed
under; ``kawuxing3`` by default) — the four taken from the checkpoint when ``init`` is given — ``value_hidden`` and
``init``.
Needs ``ray[rllib]`` and torch (imported when this module is).
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.players.policy import KNOWN_DERIVED, CheckpointError, checkpoint_payload, load_checkpoint
from agents.players.resnet import NET, make_resnet
from mjenv.encoding.handfeat import HandFeatures

ARCH_KEYS = ("channels", "blocks", "hidden")
"""The ``resnet1d`` architecture keys a module's ``model_config`` and a checkpoint's ``arch`` share."""


def resolve_model_config(config: dict[str, Any]) -> tuple[tuple[int, int], dict[str, Any], dict | None, HandFeatures | None]:
    """``(net_shape, arch, checkpoint or None, derived rows or None)`` of a module's ``model_config``: the network
    reads ``net_shape``, the env's ``obs_shape`` plus the derived rows (a :class:`HandFeatures` of the rules, or None).
    With ``init``, the architecture, the derived rows and the rules are the network-only checkpoint's (an ``arch``
    or ``derived`` key that disagrees with it, or a checkpoint that is not network-only or reads another
    observation, raises ``ValueError`` naming it)."""
    if "obs_shape" not in config:
        raise ValueError("model_config needs 'obs_shape' ([C, 34], the env's observation rows and columns)")
    obs_shape = tuple(int(v) for v in config["obs_shape"])
    arch = {"net": NET, "channels": 64, "blocks": 4, "hidden": 256}
    derived, variant, options = config.get("derived"), config.get("variant", "kawuxing3"), None
    ck = None
    if config.get("init"):
        try:
            ck = load_checkpoint(config["init"])
        except CheckpointError as exc:
            raise ValueError(f"model_config init: {exc}") from None
        if ck.get("network_only") is not True or ck["arch"].get("net") != NET:
            raise ValueError(f"model_config init: {config['init']} is not a network-only {NET} checkpoint")
        for key in ARCH_KEYS:
            if key in config and int(config[key]) != ck["arch"][key]:
                raise ValueError(f"model_config {key}={config[key]} disagrees with the checkpoint's {ck['arch'][key]}")
        if "derived" in config and config["derived"] != ck.get("derived"):
            raise ValueError(f"model_config derived={config['derived']!r} disagrees with the checkpoint's "
                             f"{ck.get('derived')!r}")
        arch = {key: ck["arch"][key] for key in ("net", *ARCH_KEYS)}
        derived, variant, options = ck.get("derived"), ck["variant"], ck["options"]
    else:
        arch.update({key: int(config[key]) for key in ARCH_KEYS if key in config})
    if derived not in KNOWN_DERIVED:
        raise ValueError(f"model_config derived={derived!r}: must be one of {KNOWN_DERIVED}")
    hand = HandFeatures(variant, options) if derived else None
    if hand is not None and obs_shape != hand.v1_shape:
        raise ValueError(f"model_config obs_shape {list(obs_shape)}: {derived} is computed from {variant}'s "
                         f"mjenv-obs-v1 rows, of shape {list(hand.v1_shape)}")
    net_shape = hand.shape if hand is not None else obs_shape
    if ck is not None and tuple(ck["obs_shape"]) != net_shape:
        raise ValueError(f"model_config init: {config['init']} reads observations of shape {tuple(ck['obs_shape'])}, "
                         f"the env gives {obs_shape}")
    return net_shape, arch, ck, hand


class ResNetMaskedModule(TorchRLModule, ValueFunctionAPI):
    """PPO's policy and value network over the ``resnet1d`` trunk, with action masking (module docstring)."""

    def setup(self):
        """Build the trunk, the policy head and the value head; load ``init``'s weights when given."""
        config = dict(self.model_config or {})
        self.obs_shape, self.arch, ck, self.hand = resolve_model_config(config)
        self.trunk, self.head = make_resnet(self.obs_shape, self.arch)
        value_hidden = int(config.get("value_hidden", 128))
        self.value = torch.nn.Sequential(torch.nn.Linear(self.arch["hidden"], value_hidden), torch.nn.ReLU(),
                                         torch.nn.Linear(value_hidden, 1))
        if ck is not None:
            self.trunk.load_state_dict(ck["trunk"])
            self.head.load_state_dict(ck["head"])

    def _split(self, batch):
        """``(network input, action mask)``: the observation, with its derived rows appended where the module has them
        (computed on the CPU by the compiled :class:`HandFeatures`, then moved back to the batch's device)."""
        obs = batch[Columns.OBS]
        x = obs["observations"]
        if self.hand is not None:
            v1 = x.detach().cpu().numpy().reshape(len(x), *self.hand.v1_shape)  # the env gives the rows flat
            x = torch.from_numpy(self.hand.extend(v1).reshape(len(x), -1)).to(x.device)
        return x, obs["action_mask"]

    def _forward(self, batch, **kwargs):
        """Masked logits (``ACTION_DIST_INPUTS``) and the trunk's output as ``EMBEDDINGS``."""
        observations, mask = self._split(batch)
        z = self.trunk(observations)
        logits = self.head(z) + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: z}

    def compute_values(self, batch, embeddings=None):
        """The value head on the trunk's features (recomputed when ``embeddings`` is not given)."""
        if embeddings is None:
            embeddings = self.trunk(self._split(batch)[0])
        return self.value(embeddings[:, : self.arch["hidden"]]).squeeze(-1)


def module_payload(module: ResNetMaskedModule, rules, meta: dict | None = None) -> dict:
    """A network-only ``mjenv-policy-v1`` checkpoint payload (:func:`agents.players.policy.checkpoint_payload`) of a
    trained module's policy under ``rules`` (a :class:`mjenv.rules.Rules`); write it with ``save_checkpoint``."""
    return checkpoint_payload(module.trunk, module.head, variant=rules.variant, options=rules.options,
                              obs_shape=module.obs_shape, arch=module.arch, meta={"algo": "RLlib PPO", **(meta or {})},
                              derived=module.hand.version if module.hand is not None else None)
