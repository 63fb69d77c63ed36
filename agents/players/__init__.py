"""The players: everything an agent needs to choose moves at a table (built by :func:`agents.make_agent`).

Modules: :mod:`~agents.players.base` (the batched protocol, observation decoding), :mod:`~agents.players.keyrng`
(keyed random streams, the same draws whatever the batching), :mod:`~agents.players.simple` (random),
:mod:`~agents.players.plans` (烂牌, flush and
all-triplets plans, over the batched shanten and ukeire of :mod:`mjenv.encoding.shanten`), :mod:`~agents.players.heuristic` (the rule-based player), :mod:`~agents.players.fastplay`
(the compiled rollout player ``fast``) with its kernels :mod:`~agents.players.fastkernels`, and :mod:`~agents.players.fasthead` (it plus a checkpoint's
departure head, compiled: the improved player of expert iteration's rollouts),
:mod:`~agents.players.search` (the search agent), :mod:`~agents.players.searchbelief` (its belief over worlds) and
:mod:`~agents.players.searchplans` (its plan-committed rollouts), :mod:`~agents.players.external` (outside bots),
:mod:`~agents.players.policy` (network and checkpoint format), :mod:`~agents.players.resnet` (the 1-D residual
network a checkpoint may name), :mod:`~agents.players.advice` (the advisor rows a
network reads) and :mod:`~agents.players.departures` (the departure head a checkpoint may carry).
"""
