"""Agents for mjenv: one batched protocol and a registry of built-in players.

Every agent has a ``name`` and ``act(obs float32 [B, C, 34], mask bool [B, 111]) -> int64 [B]`` (legal
action ids, one per row), and is also callable as ``agent(obs, mask)`` so it can serve directly as the
opponent policy of :mod:`mjenv.envs.vector`.

Built-in names for :func:`make_agent`:

| name | agent |
|---|---|
| ``random`` | :class:`agents.players.simple.RandomAgent`: uniform over legal actions, seeded |
| ``heuristic`` | :class:`agents.players.heuristic.HeuristicAgent`: shanten/ukeire discards under per-family hand plans (flush, all triplets, 烂牌), 亮倒, 包胡 and 包牌 aware, deal-in exposure and 园子 balances in Diedaohu/Liuwei |
| ``heuristic-flush`` | the same, but in Kawuxing it also plays towards 清一色 (×4) where that plan, less 2 steps of credit, is shorter than the plain hand (``flush_bonus=2``); in Yangzhou it credits the flush plan 5 steps and all triplets 4 (the heuristic: 3 and 3); elsewhere identical to ``heuristic``; docs/experiments/heuristic.md measures it |
| ``fast`` | :class:`agents.players.fastplay.FastAgent`: the heuristic-flush's core decisions compiled (numba) over the engine's packed state, the rollout player of ``search``; what it keeps and leaves out: :mod:`agents.players.fastplay` |
| ``search`` | :class:`agents.players.search.SearchAgent`: at decisions with several sensible choices, the candidates are rolled out with ``fast`` over worlds sampled from what the seat knows (``Engine.sample_worlds``), the same worlds for every candidate; ``search:worlds=32,candidates=4`` sets its parameters (docs/search.md) |
| ``policy-search`` | the same search over the variant's shipped ``<variant>-default.pt`` (its compiled improved player's move is the one to beat and its departure head picks the candidates), only at the decisions that head is unsure of and at every decision with a 亮倒 candidate: :data:`POLICY_SEARCH` (``near=0.1,worlds=64,candidates=2,z=1,liang_z=0``); in Kawuxing the rollouts are played by the cheaper ``kawuxing3-long.pt`` (the default until session 17, a 5-member head; :data:`POLICY_SEARCH_CHECKPOINTS`); ``policy-search:worlds=128`` overrides; the strongest searching Kawuxing bot (docs/experiments/expert-iteration.md) |
| a path to a ``.pt`` file, or ``policy:PATH`` | :class:`agents.players.policy.PolicyAgent` on a ``train.py`` checkpoint |
| ``network:PATH`` | the same, refusing a checkpoint not recorded as network-only (one that reads advice or has a departure head) |
| ``cmd:COMMAND`` (``cmd:python my_bot.py``) | :class:`agents.players.external.ExternalAgent`: an outside program speaking the ``mjenv-bot-v1`` JSON-lines protocol (docs/bots.md) |

Rooms, by role (each package's docstring lists its modules):

* :mod:`agents.players`: everything that chooses moves — :mod:`~agents.players.base` (protocol, observation
  decoding), :mod:`~agents.players.keyrng` (keyed random streams), :mod:`~agents.players.simple` (random),
  :mod:`~agents.players.plans` (烂牌, flush and all-triplets plans, over :mod:`mjenv.encoding.shanten`),
  :mod:`~agents.players.heuristic`, :mod:`~agents.players.fastplay` and :mod:`~agents.players.fastkernels` (the
  compiled rollout player), :mod:`~agents.players.fasthead` (that player with a checkpoint's departure head, the
  improved player expert iteration rolls out with), :mod:`~agents.players.search` with :mod:`~agents.players.searchbelief` (its world weights) and
  :mod:`~agents.players.searchplans` (its plan-committed rollouts), :mod:`~agents.players.external` (outside bots),
  :mod:`~agents.players.policy` (network and checkpoint format; imports torch on use only),
  :mod:`~agents.players.resnet` (the residual network a checkpoint may name), :mod:`~agents.players.advice` and :mod:`~agents.players.departures` (the advisor rows and the departure head a
  checkpoint reads);
* :mod:`agents.training`: ``train.py``'s parts — :mod:`~agents.training.config` (its ``Args``, one config section
  per stage), the stages :mod:`~agents.training.clone` (behaviour cloning, the warm start),
  :mod:`~agents.training.distill` (search labels, distillation), :mod:`~agents.training.departures` (fitting the
  departure head), :mod:`~agents.training.exit` (expert iteration: the head's labels on an improved player's
  states, ``python -m agents.training.exit``) and :mod:`~agents.training.ppo` (the all-seat PPO, top to bottom in one file;
  its paired rollouts, ``--paired``, in :mod:`~agents.training.paired`, the action sampler of both in
  :mod:`~agents.training.sampling`),
  :mod:`~agents.training.sb3` (the ``MaskablePPO`` trainer), :mod:`~agents.training.runlog` (evaluations and the
  run folder), :mod:`~agents.training.netclone` (cloning a network-only policy from recorded decisions, ``python
  -m agents.training.netclone``), :mod:`~agents.training.qfit` (a network-only policy improved from labelled
  candidate gains, ``python -m agents.training.qfit``), :mod:`~agents.training.rollouts` (counterfactual rollouts of the advisor's
  departures) and :mod:`~agents.training.rllib_module` (the network-only network as an RLlib module, for
  ``examples/rllib_ppo.py``);
* :mod:`agents.tournament`: :mod:`~agents.tournament.arena` (batched duplicate tournaments on the engine),
  :mod:`~agents.tournament.distributed` (the same over Ray workers), :mod:`~agents.tournament.report` (the
  rule-variant report of ``evaluate.py --report``), :mod:`~agents.tournament.recording` (agents' play recorded as a
  decision dataset, ``mjenv dataset``);
* :mod:`agents.script_args`: the typed-``Args`` command lines of ``train.py`` and ``evaluate.py``.

Shipped checkpoints live in ``agents/checkpoints/``; :func:`default_checkpoint` names a variant's default bot among
them (in Kawuxing the network-only ``kawuxing3-network-qfit3.pt``, elsewhere ``<variant>-default.pt``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.players.base import Agent, ObsView, resolve_rules
from mjenv.rules import Rules

__all__ = ["Agent", "ObsView", "BUILTIN", "POLICY_SEARCH", "POLICY_SEARCH_CHECKPOINTS", "make_agent", "shipped_checkpoints",
           "default_checkpoint", "DEFAULT_BOTS", "CHECKPOINT_DIR"]

BUILTIN = ("random", "heuristic", "heuristic-flush", "fast", "search", "policy-search")
POLICY_SEARCH = {"near": 0.1, "worlds": 64, "candidates": 2, "z": 1.0, "liang_z": 0.0}
"""``policy-search``'s settings over its checkpoints (:data:`POLICY_SEARCH_CHECKPOINTS`; declared test: docs/experiments/expert-iteration.md)."""
POLICY_SEARCH_CHECKPOINTS = {"kawuxing3": {"rollout_policy": "kawuxing3-long.pt"}}
"""Shipped checkpoints ``policy-search`` reads beyond ``policy=<variant>-default.pt``: in Kawuxing the rollouts' player,
``kawuxing3-long.pt`` (a 5-member head at tau 0.1, the default until session 17), because today's default, a
10-member head, costs 1.6x as much per rollout move (68 CPU ms per searched decision, above 50; with these rollouts
45: docs/experiments/expert-iteration.md, "Search over the new default")."""
CHECKPOINT_DIR = Path(__file__).resolve().parent / "checkpoints"
DEFAULT_BOTS = {"kawuxing3": "kawuxing3-network-qfit3.pt"}
"""Variants whose default bot is not their ``<variant>-default.pt``: in Kawuxing, since session 21, the network-only
policy ``kawuxing3-network-qfit3.pt`` (the third round of ``qfit``), which reads only the observation.  Its second
round, ``kawuxing3-network-qfit2.pt``, beats ``kawuxing3-default.pt`` (the advised network with its departure head,
the default before it) on declared walls, and the third round beats the second (docs/experiments/network-only.md,
"The network as the default bot" and "Round 3").  ``kawuxing3-default.pt`` keeps its name: ``policy-search``, the
compiled improved player and several configs read it as the departure-head player."""


def shipped_checkpoints(variant: str | None = None) -> list[Path]:
    """Checkpoints shipped in ``agents/checkpoints/`` (optionally only those of ``variant``: file names
    ``<variant>-*.pt``, so ``yangzhou`` does not pick up ``yangzhou_new``'s), sorted by name with each variant's
    default bot (:func:`default_checkpoint`) first."""
    if not CHECKPOINT_DIR.is_dir():
        return []
    def order(path: Path) -> tuple[str, int, str]:
        owner = path.name.split("-", 1)[0]  # variant names hold no '-'
        return owner, 0 if path == default_checkpoint(owner) else 1 if path.name.endswith("-default.pt") else 2, path.name

    return sorted((p for p in CHECKPOINT_DIR.glob("*.pt") if variant is None or p.name.startswith(f"{variant}-")),
                  key=order)


def default_checkpoint(variant: str) -> Path:
    """The shipped checkpoint that is ``variant``'s default bot (the one ``python evaluate.py`` plays): the name in
    :data:`DEFAULT_BOTS`, else ``<variant>-default.pt``.  The path may not exist (a wheel built without
    checkpoints, a variant with none)."""
    return CHECKPOINT_DIR / DEFAULT_BOTS.get(variant, f"{variant}-default.pt")


def make_agent(name_or_path: str, variant: str | Rules = "kawuxing3", options: Any = None, *, seed: int | None = 0,
               **kwargs) -> Agent:
    """Build an agent from a built-in name or a checkpoint path (see the module docstring).

    ``variant`` is a variant name or the :class:`mjenv.rules.Rules` of the table (resolved once at the door:
    ``mjenv.rules.load_rules``); with a name, ``options`` is a rule options value, a mapping of option overrides,
    or ``None`` (the variant's default ruleset).  The agent plays under those rules (``agent.rules`` for the
    players that read them).  Extra keyword arguments go to the agent's constructor (e.g. ``deterministic=False``
    for a policy, ``liang_min_live=3`` for the heuristic).  An unknown name raises ``ValueError`` listing the
    choices.
    """
    rules = resolve_rules(variant, options)
    spec = str(name_or_path)
    if spec == "random":
        from agents.players.simple import RandomAgent

        return RandomAgent(seed=seed, **kwargs)
    if spec in ("heuristic", "heuristic-flush"):
        from agents.players.heuristic import heuristic_player

        return heuristic_player(spec, rules, **kwargs)
    if spec.startswith("cmd:"):
        from agents.players.external import ExternalAgent

        return ExternalAgent(spec[len("cmd:"):], rules, **kwargs)
    if spec == "fast":
        from agents.players.fastplay import FastAgent

        return FastAgent(rules, **kwargs)
    if spec == "search" or spec.startswith("search:"):
        from agents.players.search import SearchAgent, parse_spec

        return SearchAgent(rules, seed=seed, name=spec, **{**parse_spec(spec), **kwargs})
    if spec == "policy-search" or spec.startswith("policy-search:"):
        from agents.players.search import SearchAgent, parse_spec

        shipped = {"policy": f"{rules.variant}-default.pt", **POLICY_SEARCH_CHECKPOINTS.get(rules.variant, {})}
        settings = {**{k: str(CHECKPOINT_DIR / v) for k, v in shipped.items()}, **POLICY_SEARCH, **parse_spec(spec),
                    **kwargs}
        for key, file in shipped.items():
            if settings[key] == str(CHECKPOINT_DIR / file) and not (CHECKPOINT_DIR / file).exists():
                raise ValueError(f"policy-search: {rules.variant} has no shipped {file} to search over")
        return SearchAgent(rules, seed=seed, name=spec, **settings)
    network_only = spec.startswith("network:")
    path_text = spec.split(":", 1)[1] if spec.startswith(("policy:", "network:")) else spec
    path = Path(path_text)
    if path.suffix == ".pt" or spec.startswith(("policy:", "network:")):
        if not path.exists() and (CHECKPOINT_DIR / path.name).exists():
            path = CHECKPOINT_DIR / path.name
        if not path.exists():
            raise ValueError(f"checkpoint {path_text!r} not found")
        from agents.players.policy import PolicyAgent

        if network_only:
            kwargs = {**kwargs, "network_only": True}
        return PolicyAgent(path, rules, seed=seed, **kwargs)
    raise ValueError(f"unknown agent {spec!r}; use one of {', '.join(BUILTIN)}, a checkpoint path (*.pt) or cmd:COMMAND (an outside bot)")
