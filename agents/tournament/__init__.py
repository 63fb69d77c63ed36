"""Tournaments between agents: what ``evaluate.py`` runs.

Modules: :mod:`~agents.tournament.arena` (batched duplicate tournaments on the engine), :mod:`~agents.tournament.distributed`
(the same split in shards over Ray workers), :mod:`~agents.tournament.report` (the rule-variant report of
``evaluate.py --report``) and :mod:`~agents.tournament.recording` (agents' play on seeded walls recorded as a
decision dataset).
"""
