"""The network-only policy network: a 1-D residual network over the 34 tile columns of the observation.

This module owns the ``resnet1d`` architecture of ``mjenv-policy-v1`` checkpoints (``arch["net"] == "resnet1d"``;
the older two-convolution network of :func:`agents.players.policy.make_trunk` has no ``net`` key).  It reads the
observation's ``C`` rows as ``C`` input channels along the 34 tile columns (tile ids run suit by suit, so a
width-3 kernel sees a tile and its neighbours; rows constant along the columns, such as the wall count or the
rule options, reach every column), in the manner of Suphx and Mortal (docs/experiments/network-only.md):

* a stem convolution ``C -> channels`` (width 3), then ``blocks`` residual blocks, each two width-3 convolutions
  with a ReLU between and a squeeze-and-excitation channel attention (Mortal's) on the residual branch, whose
  last convolution starts at zero (each block starts as the identity);
* **tile logits**: a width-1 convolution ``channels -> 3`` gives, at each column ``t``, the logits of
  ``discard:t``, ``liang:t`` and ``kong:t`` (action ids 0–101, :mod:`mjenv.encoding.actions`), so a tile's
  action is scored where the tile is;
* **features**: the columns flattened, one dense layer to ``hidden`` units (ReLU); a linear layer of them gives
  all 111 logits (adding a whole-hand term to the tile logits, and the fixed actions pong … pass).

:class:`ResTrunk` returns ``[features (hidden), tile logits (102)]`` side by side and :class:`ResHead` adds them
up, so a value head reads the first ``hidden`` columns as it does on the older trunk (:class:`agents.training.ppo.SeatNet`).
Torch is imported on use only.
"""

from __future__ import annotations

from typing import Any

NET = "resnet1d"
"""``arch["net"]`` of a checkpoint using this network."""

TILE_FAMILIES = 3
"""Tile-indexed action families scored per column: discard (0–33), liang (34–67), kong (68–101)."""

_CLASSES: tuple | None = None


def _classes():
    """The torch modules, defined on first use (torch is imported lazily)."""
    global _CLASSES
    if _CLASSES is not None:
        return _CLASSES
    import torch
    from torch import nn

    from mjenv.encoding.actions import N_ACTIONS

    class Attention(nn.Module):
        """Squeeze-and-excitation: each channel scaled by a gate computed from every channel's column mean."""

        def __init__(self, channels: int, ratio: int = 4):
            super().__init__()
            self.fc = nn.Sequential(nn.Linear(channels, max(1, channels // ratio)), nn.ReLU(),
                                    nn.Linear(max(1, channels // ratio), channels))

        def forward(self, h):
            return h * torch.sigmoid(self.fc(h.mean(2)))[:, :, None]

    class Block(nn.Module):
        """``x + attention(conv(relu(conv(relu(x)))))``, the second convolution zero at the start."""

        def __init__(self, channels: int):
            super().__init__()
            self.conv1 = nn.Conv1d(channels, channels, 3, padding=1)
            self.conv2 = nn.Conv1d(channels, channels, 3, padding=1)
            self.attention = Attention(channels)
            nn.init.zeros_(self.conv2.weight)
            nn.init.zeros_(self.conv2.bias)

        def forward(self, x):
            h = self.conv2(torch.relu(self.conv1(torch.relu(x))))
            return x + self.attention(h)

    class ResTrunk(nn.Module):
        """Flat observations ``[N, C*34]`` -> ``[N, hidden + 102]``: the features, then the tile logits."""

        def __init__(self, obs_shape, channels: int, blocks: int, hidden: int):
            super().__init__()
            C, W = (int(v) for v in obs_shape)
            self.rows, self.width = C, W
            self.stem = nn.Conv1d(C, channels, 3, padding=1)
            self.blocks = nn.Sequential(*[Block(channels) for _ in range(blocks)])
            self.tiles = nn.Conv1d(channels, TILE_FAMILIES, 1)
            self.dense = nn.Linear(channels * W, hidden)

        def forward(self, x):
            h = self.blocks(self.stem(x.reshape(len(x), self.rows, self.width)))
            h = torch.relu(h)
            tiles = self.tiles(h).reshape(len(x), TILE_FAMILIES * self.width)
            z = torch.relu(self.dense(h.reshape(len(x), -1)))
            return torch.cat([z, tiles], 1)

    class ResHead(nn.Module):
        """``linear(features)`` (111 logits) plus the tile logits on action ids 0–101."""

        def __init__(self, hidden: int, width: int = 34):
            super().__init__()
            self.hidden = hidden
            self.linear = nn.Linear(hidden, N_ACTIONS)
            self.n_tiles = TILE_FAMILIES * width

        def forward(self, z):
            out = self.linear(z[:, : self.hidden])
            tiles = z[:, self.hidden : self.hidden + self.n_tiles]
            return torch.cat([out[:, : self.n_tiles] + tiles, out[:, self.n_tiles :]], 1)

    _CLASSES = (ResTrunk, ResHead)
    return _CLASSES


def make_resnet(obs_shape, arch: dict[str, Any]):
    """``(trunk, head)`` of a ``resnet1d`` architecture ``{"net": "resnet1d", "channels", "blocks", "hidden"}``."""
    if arch.get("net") != NET:
        raise ValueError(f"arch {arch!r} is not a {NET} architecture")
    for key in ("channels", "blocks", "hidden"):
        if not (isinstance(arch.get(key), int) and arch[key] > 0):
            raise ValueError(f"{NET} arch needs a positive integer {key!r}, got {arch.get(key)!r}")
    trunk_cls, head_cls = _classes()
    return (trunk_cls(obs_shape, arch["channels"], arch["blocks"], arch["hidden"]),
            head_cls(arch["hidden"], int(obs_shape[1])))


def parameter_count(*modules) -> int:
    """Number of parameters of the given torch modules together."""
    return sum(p.numel() for m in modules for p in m.parameters())
