"""Masked action sampling shared by the all-seat trainer's rollouts (:mod:`agents.training.ppo`) and its paired
rollouts (:mod:`agents.training.paired`): the logit of an illegal action (:data:`MASKED`) and :func:`sample_actions`."""

from __future__ import annotations

from typing import Any

from agents.players.policy import _torch

MASKED = -1e8
"""Logit of an illegal action (finite, so the entropy of a masked distribution stays a number)."""


def sample_actions(logp: Any, generator: Any, uniform: Any = None) -> Any:
    """One action per row of the masked log-probabilities ``logp [N, A]`` (a torch tensor), drawn with ``generator``
    (or from the given ``uniform [N]`` draws in ``[0, 1)``, one per row) by inverting each row's cumulative distribution (``torch.multinomial`` costs about ten times as much on CPU for
    the rollouts' small batches).  An action of probability 0 is never drawn: its cumulative value equals its
    predecessor's and the uniform draw is in ``(0, total]``.  The probabilities are ``softmax(logp)`` (equal to
    ``exp(logp)`` for normalised rows): ``exp`` of the masked actions' ≈ −1e8 takes a slow path on CPU, ~6× the
    cost of the softmax kernel, which also gives them exactly 0."""
    torch = _torch()
    cdf = torch.softmax(logp, 1).cumsum_(1)
    if uniform is None:
        u = (1.0 - torch.rand(len(cdf), 1, generator=generator)) * cdf[:, -1:]
    else:  # the caller's uniforms in [0, 1): the paired rollouts' common random numbers
        u = (1.0 - uniform.reshape(-1, 1)) * cdf[:, -1:]
    return torch.searchsorted(cdf, u)[:, 0].clamp_(max=cdf.shape[1] - 1)
