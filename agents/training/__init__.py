"""The training stages of ``train.py``, one module each, and the labelling they read.

Modules: :mod:`~agents.training.clone` (behaviour cloning, the warm start), :mod:`~agents.training.ppo` (the
all-seat PPO stage, readable top to bottom), :mod:`~agents.training.distill` (search labels and the distillation
stage), :mod:`~agents.training.departures` (fitting a departure head to search labels) and
:mod:`~agents.training.rollouts` (counterfactual rollouts of the advisor's departures, ``python -m
agents.training.rollouts``).
"""
