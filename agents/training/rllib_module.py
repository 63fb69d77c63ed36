"""The network-only policy network as an RLlib module, and its way back to an mjenv checkpoint.

This module owns :class:`ResNetMaskedModule`, an RLlib (new API stack) ``TorchRLModule`` for PPO on
:class:`mjenv.envs.rllib.MahjongRLlibEnv`: the ``resnet1d`` network of :mod:`agents.players.resnet` (the same trunk
and head a ``network:PATH`` checkpoint plays with) reads the ``"observations"`` half of the env's observation, the
``"action_mask"`` half gives illegal actions a logit of ``FLOAT_MIN``, and a small value head reads the trunk's
features.  It can start from a network-only checkpoint (``model_config["init"]``: e.g.
``agents/checkpoints/kawuxing3-network.pt``; its policy is then exactly the checkpoint's) and
:func:`module_payload` turns a trained module back into a network-only ``mjenv-policy-v1`` checkpoint, which
``PolicyAgent`` / ``evaluate.py --agents network:PATH`` play.  ``examples/rllib_ppo.py --model resnet1d`` uses both.

``model_config`` keys: ``obs_shape`` ([C, 34], required), ``channels``, ``blocks``, ``hidden`` (the ``resnet1d``
architecture; taken from the checkpoint when ``init`` is given), ``value_hidden`` and ``init``.
Needs ``ray[rllib]`` and torch (imported when this module is).
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
from ray.rllib.utils.torch_utils import FLOAT_MIN

from agents.players.policy import CheckpointError, checkpoint_payload, load_checkpoint
from agents.players.resnet import NET, make_resnet

ARCH_KEYS = ("channels", "blocks", "hidden")
"""The ``resnet1d`` architecture keys a module's ``model_config`` and a checkpoint's ``arch`` share."""


def resolve_model_config(config: dict[str, Any]) -> tuple[tuple[int, int], dict[str, Any], dict | None]:
    """``(obs_shape, arch, checkpoint or None)`` of a module's ``model_config``.  With ``init``, the architecture is
    the network-only checkpoint's (an ``arch`` key that disagrees with it, or a checkpoint that is not network-only
    or reads another observation shape, raises ``ValueError`` naming it)."""
    if "obs_shape" not in config:
        raise ValueError("model_config needs 'obs_shape' ([C, 34], the env's observation rows and columns)")
    obs_shape = tuple(int(v) for v in config["obs_shape"])
    arch = {"net": NET, "channels": 64, "blocks": 4, "hidden": 256}
    ck = None
    if config.get("init"):
        try:
            ck = load_checkpoint(config["init"])
        except CheckpointError as exc:
            raise ValueError(f"model_config init: {exc}") from None
        if ck.get("network_only") is not True or ck["arch"].get("net") != NET:
            raise ValueError(f"model_config init: {config['init']} is not a network-only {NET} checkpoint")
        if tuple(ck["obs_shape"]) != obs_shape:
            raise ValueError(f"model_config init: {config['init']} reads observations of shape {tuple(ck['obs_shape'])}, "
                             f"the env gives {obs_shape}")
        for key in ARCH_KEYS:
            if key in config and int(config[key]) != ck["arch"][key]:
                raise ValueError(f"model_config {key}={config[key]} disagrees with the checkpoint's {ck['arch'][key]}")
        arch = {key: ck["arch"][key] for key in ("net", *ARCH_KEYS)}
    else:
        arch.update({key: int(config[key]) for key in ARCH_KEYS if key in config})
    return obs_shape, arch, ck


class ResNetMaskedModule(TorchRLModule, ValueFunctionAPI):
    """PPO's policy and value network over the ``resnet1d`` trunk, with action masking (module docstring)."""

    def setup(self):
        """Build the trunk, the policy head and the value head; load ``init``'s weights when given."""
        config = dict(self.model_config or {})
        self.obs_shape, self.arch, ck = resolve_model_config(config)
        self.trunk, self.head = make_resnet(self.obs_shape, self.arch)
        value_hidden = int(config.get("value_hidden", 128))
        self.value = torch.nn.Sequential(torch.nn.Linear(self.arch["hidden"], value_hidden), torch.nn.ReLU(),
                                         torch.nn.Linear(value_hidden, 1))
        if ck is not None:
            self.trunk.load_state_dict(ck["trunk"])
            self.head.load_state_dict(ck["head"])

    def _split(self, batch):
        obs = batch[Columns.OBS]
        return obs["observations"], obs["action_mask"]

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
                              obs_shape=module.obs_shape, arch=module.arch, meta={"algo": "RLlib PPO", **(meta or {})})
