"""The parts of ``train.py``: its arguments, one module per training stage, and the run folder.

Modules: :mod:`~agents.training.config` (the ``Args`` of a run, their bounds and checks, one config section per
stage), :mod:`~agents.training.clone` (behaviour cloning, the warm start), :mod:`~agents.training.distill` (search
labels and the distillation stage), :mod:`~agents.training.departures` (fitting a departure head to search
labels), :mod:`~agents.training.exit` (expert iteration: that head's labels on the states an improved player reaches,
``python -m agents.training.exit``), :mod:`~agents.training.ppo` (the all-seat PPO stage, CleanRL-style, readable top to bottom),
:mod:`~agents.training.paired` (its paired rollouts, ``--paired``: twin tables, one sample per branch decision),
:mod:`~agents.training.sampling` (the masked action sampler of both),
:mod:`~agents.training.sb3` (``--trainer sb3``: sb3-contrib ``MaskablePPO`` with an opponent pool),
:mod:`~agents.training.runlog` (evaluations during training, the learning curve, the final checkpoint and summary)
:mod:`~agents.training.netclone` (the network-only cloning stage, ``python -m agents.training.netclone``),
:mod:`~agents.training.qfit` (the network-only policy improved from labelled candidate gains, ``python -m
agents.training.qfit``),
:mod:`~agents.training.rollouts` (counterfactual rollouts of the advisor's departures, ``python -m
agents.training.rollouts``) and :mod:`~agents.training.rllib_module` (the network-only network as an RLlib module and
back to a checkpoint, for ``examples/rllib_ppo.py``; needs ``ray[rllib]``).
"""
