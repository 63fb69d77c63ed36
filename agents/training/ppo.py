"""The all-seat PPO stage of ``train.py`` (``--trainer allseat``), CleanRL-style: one shared policy plays every seat
of the batched engine's tables, and the file reads top to bottom as the loop runs — the workers' settings
(:func:`seat_spec`, from ``Args``), the network, the rollout, the advantages, the update and the loop itself
(:func:`run_stage`: set-up → rollout → advantages → update → log).

This module owns

* :class:`SeatNet` — the policy network of a checkpoint (:func:`agents.players.policy.make_network`: the two-convolution
  trunk and head, or with ``net="resnet1d"`` the residual network of :mod:`agents.players.resnet`) with a value head
  on the trunk's features, or with ``--oracle_critic`` on the features of a second trunk of the same architecture that
  reads the observation **plus the oracle rows** (every hand, the wall order: ``mjenv-oracle-v1``).  The policy never
  sees those rows (it reads the first ``C`` rows of a sample) and checkpoints hold the policy alone;
* :class:`SeatRollouts` — ``B`` :class:`~mjenv.engine.core.Engine` tables played to a fixed number of engine
  steps per rollout.  At every step each table's acting seat decides: a **learner seat** samples the shared
  policy (masked logits) and its decision is a sample; a **frozen seat** (a share ``frozen_share`` of the seats,
  drawn per hand) is played by an entry of the opponent pool (``heuristic``, ``heuristic-flush``, ``fast``,
  ``search``, ``random``, ``self`` = a frozen snapshot of the learner, or a checkpoint path) and yields no
  sample.  Finished hands are dealt again at once (table ``b``'s hands are walls ``(seed, episode)`` with a
  per-worker episode counter).  With ``--paired`` the tables are twins (or groups of ``--paired_branches``) and a
  rollout is :func:`agents.training.paired.collect_paired`'s (one sample per branch decision, its advantage the twins'
  money difference; with ``--paired_samples all`` one per branch);
* :func:`seat_advantages` — GAE over each seat's **own** decision sequence: a sample's reward is its seat's money
  change from that decision to the seat's next decision (or to the end of the hand), so every hand's rewards of
  a seat add up to that seat's money for the hand; a hand's last decision is terminal; a sequence cut by the
  end of the rollout is bootstrapped with the value of the seat's observation at that moment;
* :func:`ppo_update` — clipped PPO with advantage normalisation per minibatch, value loss, entropy bonus and
  gradient clipping (the same loss as sb3-contrib's ``MaskablePPO``, so the two trainers are comparable), plus with
  ``kl_coef > 0`` the KL divergence of the policy from an anchor (the policy PPO started from, frozen); the update
  runs on the network's device (``--device``), the rollouts on the CPU;
* :func:`value_update` — the value warm-up (``--value_warmup``): regression of the value head (and the oracle
  critic's trunk) alone on a rollout's returns, before PPO starts;
* :func:`run_stage` — the loop: ``total_timesteps`` samples of rollouts and updates, with snapshots of the
  learner for the ``self`` opponent, checkpoints, evaluations and ``progress.csv``.

Everything a rollout worker needs is here, so ``train.py --ray`` can run :class:`SeatRollouts` as Ray actors
(:func:`remote_rollouts`) with the learner in the driver.  Torch is imported on use.  The stages before it
(cloning, distillation, the departure head) are :mod:`agents.training.clone`, :mod:`agents.training.distill` and
:mod:`agents.training.departures`; ``train.py`` wires them."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from agents.players.base import agent_act
from agents.players.policy import _torch, make_network
from agents.training.sampling import MASKED, sample_actions
from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.observation import OBS_VERSION


# ------------------------------------------------------------------------------------------ the workers' settings


def seat_spec(args: Any, rules, obs_shape, features) -> dict:
    """The plain-dict description of a rollout worker (:class:`agents.training.ppo.SeatRollouts`) for ``args``."""
    return {"variant": rules.variant, "options": rules.options_dict(), "obs_shape": list(obs_shape),
            "channels": args.channels, "hidden": args.hidden, "value_hidden": args.value_hidden,
            "net": args.net or None, "blocks": args.blocks,
            "advice": features.version if features is not None else None, "num_tables": args.num_envs,
            "n_steps": args.n_steps, "seed": args.seed, "gamma": args.gamma, "gae_lambda": args.gae_lambda,
            "reward_scale": args.reward_scale, "opponents": list(args.opponents),
            "critic_rows": critic_rows(rules) if getattr(args, "oracle_critic", False) else 0,
            "derived": getattr(args, "derived", "") or None,
            "opponent_weights": list(args.opponent_weights), "frozen_share": args.frozen_share, "threads": args.threads,
            "precision": args.precision, "paired": bool(getattr(args, "paired", False)),
            "paired_rate": float(getattr(args, "paired_rate", 0.1)), "paired_min": float(getattr(args, "paired_min", 0.02)),
            "paired_greedy": bool(getattr(args, "paired_greedy", False)),
            "paired_branches": int(getattr(args, "paired_branches", 2)),
            "paired_samples": str(getattr(args, "paired_samples", "first"))}


def critic_rows(rules) -> int:
    """Rows the oracle critic reads beyond the observation: those ``mjenv-oracle-v1`` adds to ``mjenv-obs-v1``."""
    from mjenv.encoding.observation import ObservationEncoder, OracleEncoder

    return OracleEncoder(rules=rules).shape[0] - ObservationEncoder(rules=rules).shape[0]


# ------------------------------------------------------------------------------------------ the network


def _net_classes():
    torch = _torch()

    class SeatNet(torch.nn.Module):
        """Trunk + action head (what a checkpoint stores) and a value head over the trunk's ``hidden`` features."""

        def __init__(self, obs_shape, channels: int, hidden: int, value_hidden: int, advice_row: int | None = None,
                     advice_weight: float = 0.0, precision: str = "fp32", net: str | None = None, blocks: int = 4,
                     critic_rows: int = 0):
            super().__init__()
            if precision not in PRECISIONS:
                raise ValueError(f"precision: {precision!r} is not one of {', '.join(PRECISIONS)}")
            self.hidden = hidden
            self.bf16 = precision == "bf16"
            self.arch = {"channels": channels, "hidden": hidden, **({"net": net, "blocks": blocks} if net else {})}
            self.trunk, self.head = make_network(tuple(obs_shape), self.arch, advice_row, advice_weight)
            self.value = torch.nn.Sequential(torch.nn.Linear(hidden, value_hidden), torch.nn.ReLU(),
                                             torch.nn.Linear(value_hidden, 1))
            # the oracle critic: its own trunk over the observation's rows and the oracle rows after them
            self.policy_width = int(obs_shape[0]) * int(obs_shape[1])
            self.critic_rows = int(critic_rows)
            if self.critic_rows:
                if advice_row is not None:
                    raise ValueError("an oracle critic needs a policy without advice rows")
                critic_shape = (int(obs_shape[0]) + self.critic_rows, int(obs_shape[1]))
                self.critic = make_network(critic_shape, self.arch)[0]

        def forward(self, x):
            """``(logits [N, 111], value [N])`` for flat inputs ``x [N, C*34]`` (with an oracle critic
            ``[N, (C + oracle rows)*34]``: the policy reads the first ``C*34`` columns); with ``precision="bf16"`` the
            trunks run under bfloat16 autocast (float32 weights, gradients and heads)."""
            with torch.autocast(x.device.type, dtype=torch.bfloat16, enabled=self.bf16):
                z = self.trunk(x[:, : self.policy_width] if self.critic_rows else x)
                zv = self.critic(x) if self.critic_rows else z
            z, zv = z.float(), zv.float()
            return self.head(z), self.value(zv[:, : self.hidden]).reshape(-1)

        def _body(self):
            """The trunk's ``Sequential`` when it has :func:`make_trunk`'s layout, else None (no folding)."""
            body = getattr(self.trunk, "body", self.trunk)
            nn = torch.nn
            if self.critic_rows or not isinstance(body, nn.Sequential):  # the oracle critic, the residual network: no folding
                return None
            layout = (nn.Unflatten, nn.Conv1d, nn.ReLU, nn.Conv1d, nn.ReLU, nn.Flatten, nn.Linear, nn.ReLU)
            if len(body) != len(layout) or not all(isinstance(m, t) for m, t in zip(body, layout)):
                return None
            conv = body[1]
            return body if conv.kernel_size == (3,) and conv.padding == (1,) and conv.stride == (1,) else None

        def fold_batch(self, xs: list) -> tuple | None:
            """The inputs of :meth:`folded` for the flat observation tensors ``xs`` (a batch, or a worker's part
            each): ``(tile, scalar, parts)`` with ``tile`` the rows that vary along the 34 columns in some
            sample, ``scalar`` the other rows that are not zero in every sample, and per tensor of ``xs`` the
            triple ``(x[:, tile] [n, Ct, 34], x[:, scalar, 0] [n, Cs], advice one-hot [n, 111] or None)``.
            None when the trunk's layout is not :func:`make_trunk`'s."""
            body = self._body()
            if body is None:
                return None
            C, W = body[0].unflattened_size
            const = zero = None
            for x in xs:
                lo, hi = torch.aminmax(x.view(len(x), C, W), dim=2)
                c, z = (lo == hi).all(0), ((lo == 0) & (hi == 0)).all(0)
                const, zero = (c, z) if const is None else (const & c, zero & z)
            tile, scalar = torch.nonzero(~const)[:, 0], torch.nonzero(const & ~zero)[:, 0]
            index = getattr(self.trunk, "advice_index", None)
            parts = []
            for x in xs:
                x3 = x.view(len(x), C, W)
                xt = x3.index_select(1, tile)
                parts.append((xt.to(torch.bfloat16) if self.bf16 else xt, x3[:, scalar, 0].contiguous(),
                              None if index is None else x.index_select(1, index)))
            return tile, scalar, parts

        def folded(self, tile, scalar, xt, s, advice=None):
            """:meth:`forward` on the inputs of :meth:`fold_batch` (the same function, up to rounding): the first
            convolution runs over the varying rows only; a row constant along the columns adds, at each
            position, its value times the sum of the kernel taps that fall inside the 34 columns (all three,
            two at either edge), computed once per sample instead of 34 times; rows zero everywhere add nothing.
            With 45 varying and ~30 non-zero constant rows of Kawuxing's 100 this is ~20 % less work per
            forward and backward pass."""
            body = self._body()
            conv = body[1]
            weight = conv.weight
            out = weight.shape[0]
            width = xt.shape[2]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
                h = torch.nn.functional.conv1d(xt, weight.index_select(1, tile), conv.bias, padding=1)
                if len(scalar):
                    taps = weight.index_select(1, scalar).permute(1, 0, 2).reshape(len(scalar), out * 3)
                    inside = torch.ones(3, width, dtype=h.dtype)
                    inside[0, 0] = inside[2, width - 1] = 0  # the left tap at column 0, the right one at the last
                    h = h + (s @ taps).view(len(s), out, 3).to(h.dtype) @ inside
                z = body[6:](body[2:6](h))
            z = z.float()
            if advice is not None:
                z = torch.cat([z, advice.float()], 1)
            return self.head(z), self.value(z[:, : self.hidden]).reshape(-1)

    return SeatNet


PRECISIONS = ("fp32", "bf16")
"""Arithmetic of :class:`SeatNet`'s trunk: float32, or bfloat16 autocast (convolutions and the dense layer; the
weights, the action and value heads and the losses stay float32)."""


def bf16_native() -> bool:
    """Whether this CPU computes bfloat16 in hardware (AVX512-BF16 or AMX, as oneDNN sees it); elsewhere bf16 autocast
    is emulated and slower than float32."""
    torch = _torch()
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def resolve_precision(precision: str, trainer: str = "allseat") -> str:
    """The arithmetic a run of ``trainer`` uses for the requested ``precision`` (``auto`` or one of
    :data:`PRECISIONS`): ``auto`` is bf16 for the all-seat trainer on a CPU with native bfloat16
    (:func:`bf16_native`) and fp32 elsewhere (the SB3 path always runs float32); an explicit value is returned
    as it is (:func:`agents.training.config.check_args` refuses bf16 where it cannot run)."""
    if precision != "auto":
        return precision
    return "bf16" if trainer == "allseat" and bf16_native() else "fp32"


def SeatNet(obs_shape, channels: int, hidden: int, value_hidden: int, advice_row: int | None = None,
            advice_weight: float = 0.0, precision: str = "fp32", net: str | None = None, blocks: int = 4,
            critic_rows: int = 0):
    """The all-seat trainer's network (see :func:`_net_classes`; ``net="resnet1d"`` with ``blocks`` for the residual
    network; ``critic_rows > 0`` for the oracle critic, :func:`critic_rows`); torch is imported on first use."""
    return _net_classes()(obs_shape, channels, hidden, value_hidden, advice_row, advice_weight, precision, net, blocks,
                          critic_rows)


# ------------------------------------------------------------------------------------------ rollout


class SeatRollouts:
    """``num_tables`` engine tables whose every learner seat samples one shared policy (module docstring).

    ``spec`` is a plain dict (so a Ray actor can be built from it): ``variant``, ``options`` (a rule options
    dict), ``obs_shape``, ``channels``, ``hidden``, ``value_hidden``, ``advice`` (feature set name or None),
    ``derived`` (``mjenv-hand-v1`` or None: the derived rows the policy reads after the observation), ``num_tables``, ``n_steps``, ``seed``, ``gamma``, ``gae_lambda``, ``reward_scale``, ``opponents``,
    ``opponent_weights``, ``frozen_share``, ``threads``, ``critic_rows`` (the oracle critic's extra rows, 0 for
    none: the learner samples are then encoded with ``mjenv-oracle-v1``, the observation's rows first).  ``worker`` numbers the rollout worker: its tables play
    episode ids from ``worker * 2**40`` and its sampling is seeded with ``(seed, worker)``.
    """

    def __init__(self, spec: dict, worker: int = 0):
        torch = _torch()
        from agents import make_agent
        from agents.players.base import resolve_rules
        from mjenv.encoding.observation import encoder_for
        from mjenv.engine.core import Engine

        self.spec = dict(spec)
        self.torch = torch
        torch.set_num_threads(max(1, int(spec.get("threads", 1))))
        variant = spec["variant"]
        # the options record of the driver's rules: the same Rules value here (resolved once on a Ray worker)
        self.rules = resolve_rules(variant, spec["options"])
        self.opts = self.rules.options
        B = self.B = int(spec["num_tables"])
        self.engine = Engine(self.rules, B, record_events=False)
        self.n = self.engine.n
        self.encoder = encoder_for(self.engine)
        # what a learner sample holds: the observation, or with the oracle critic the observation and the oracle rows
        self.critic_rows = int(spec.get("critic_rows", 0))
        self.sample_encoder = encoder_for(self.engine, oracle=True) if self.critic_rows else self.encoder
        self.features = None
        advice_row = None
        if spec.get("advice"):
            from agents.players.advice import AdviceFeatures

            self.features = AdviceFeatures(variant, self.opts, spec["advice"])
            advice_row = int(spec["obs_shape"][0]) - self.features.rows
        elif spec.get("derived"):  # the derived rows (mjenv-hand-v1) after the observation, extended like advice
            from mjenv.encoding.handfeat import HandFeatures

            self.features = HandFeatures(self.rules)
        self.net = SeatNet(spec["obs_shape"], spec["channels"], spec["hidden"], spec["value_hidden"], advice_row,
                           precision=spec.get("precision", "fp32"), net=spec.get("net"), blocks=spec.get("blocks", 4),
                           critic_rows=self.critic_rows)
        self.net.eval()
        self.snapshots: list[Any] = []
        self.entries = list(spec["opponents"])
        w = np.asarray(spec["opponent_weights"], np.float64)
        self.cum = np.cumsum(w / w.sum())
        self.pool = {name: make_agent(name, self.rules, seed=int(spec["seed"]) + 2 + worker)
                     for name in self.entries if name != "self"}
        self.pool.setdefault("random", make_agent("random", self.rules, seed=int(spec["seed"]) + 1 + worker))
        self.rng = np.random.default_rng([int(spec["seed"]), worker])
        self.gen = torch.Generator().manual_seed(int(spec["seed"]) * 7919 + worker)
        self.next_episode = worker * 2**40
        self.learner = np.ones((B, self.n), bool)
        self.entry = np.zeros(B, np.int64)
        self.mark = np.zeros((B, self.n))
        self.open = np.full((B, self.n), -1, np.int64)
        self.hands: dict[str, list[float]] = {}
        self._episode = np.zeros(B, np.int64)
        self.finished: list[tuple[int, int, float]] = []
        self._obs_buf: np.ndarray | None = None
        self.paired = bool(spec.get("paired", False))
        if self.paired:
            from agents.training.paired import branches, deal_pairs

            K = branches(spec)
            if K < 2 or B % K or float(spec["frozen_share"]) > 0:
                raise ValueError("paired rollouts need at least 2 branches, a number of tables divisible by them and "
                                 "no frozen seats")
            self.diverged = np.full(B // K, -1, np.int64)  # per group: its open paired sample, or -1
            deal_pairs(self, np.arange(B // K))
        else:
            self._deal(np.arange(B))

    def process_cpu(self) -> float:
        """CPU seconds of this process so far (``time.process_time``): around :meth:`collect` it also counts what a
        Ray actor spends handing its result over."""
        return time.process_time()

    # ---------------------------------------------------------------- weights
    def set_weights(self, state: dict) -> None:
        """Load the learner's weights (a ``state_dict`` of :class:`SeatNet`)."""
        self.net.load_state_dict(state)

    def add_snapshot(self, payload: dict, keep: int) -> None:
        """Add a frozen learner (a checkpoint payload) to the ``self`` entry, keeping the newest ``keep``."""
        from agents.players.policy import PolicyAgent

        self.snapshots.append(PolicyAgent(payload, self.rules, deterministic=False,
                                          seed=int(self.spec["seed"]) + len(self.snapshots)))
        del self.snapshots[:-keep]

    # ---------------------------------------------------------------- dealing
    def _deal(self, tables: np.ndarray) -> None:
        """Deal the next hand on ``tables`` (again, while a deal ends at once), drawing frozen seats and entries."""
        from mjenv.engine.state import DONE

        while len(tables):
            k = len(tables)
            ep = self.next_episode + np.arange(k)
            self.next_episode += k
            self.engine.reset(seed=int(self.spec["seed"]), tables=tables, table_ids=ep, dealer=ep % self.n)
            self._episode[tables] = ep
            frozen = self.rng.random((k, self.n)) < float(self.spec["frozen_share"])
            full = frozen.all(1)  # at least one learner seat per table
            frozen[full, self.rng.integers(0, self.n, int(full.sum()))] = False
            self.learner[tables] = ~frozen
            self.entry[tables] = np.minimum(np.searchsorted(self.cum, self.rng.random(k), side="right"), len(self.entries) - 1)
            self.mark[tables] = 0.0
            self.open[tables] = -1
            tables = tables[self.engine.state.phase[tables] == DONE]

    # ---------------------------------------------------------------- one rollout
    def collect(self, state: dict | None = None) -> dict:
        """Play ``n_steps`` engine steps on every table with the current weights (``state``, when given, first);
        with ``spec["paired"]`` the rollout of :meth:`collect_paired` instead.

        Returns the samples (``obs``, ``mask``, ``action``, ``logp``, ``value``, ``reward`` (scaled), ``nxt``,
        ``terminal``, ``bootstrap``, ``seat``, ``episode``, ``advantage``, ``ret``) and ``stats`` (hands played,
        learner money per opponent entry, CPU seconds)."""
        torch = self.torch
        from mjenv.engine.state import DONE

        if state is not None:
            self.set_weights(state)
        if self.paired:
            return self.collect_paired()
        cpu0 = time.process_time()
        spec, B, n, eng = self.spec, self.B, self.n, self.engine
        st = eng.state
        rows = np.arange(B)
        cap = B * int(spec["n_steps"])
        reward = np.zeros(cap)
        nxt = np.full(cap, -1, np.int64)
        terminal = np.zeros(cap, bool)
        bootstrap = np.zeros(cap, np.float32)
        sample_rows = int(spec["obs_shape"][0]) + self.critic_rows
        obs_buf = self._sample_buffer((cap, sample_rows * int(spec["obs_shape"][1])))
        parts: dict[str, list] = {k: [] for k in ("mask", "action", "logp", "value", "seat", "episode", "table")}
        count = 0
        hands = 0
        for _ in range(int(spec["n_steps"])):
            actor = st.actor.astype(np.int64)
            mask = eng.mask.copy()
            acts = np.zeros(B, np.int64)
            lrn = self.learner[rows, actor]
            L = np.flatnonzero(lrn)
            F = np.flatnonzero(~lrn)
            if len(L):
                x = obs_buf[count : count + len(L)]
                if self.features is None:  # encoded in place: the sample buffer is the encoder's output
                    self.sample_encoder.encode(st, actor[L], L, out=x.reshape((len(L),) + self.sample_encoder.shape),
                                               engine=eng)
                else:
                    obs = self.encoder.encode(st, actor[L], L, engine=eng)
                    x[:] = self.features.extend(obs, mask[L]).reshape(len(L), -1)
                with torch.inference_mode():
                    logits, value = self.net(torch.from_numpy(x))
                    logp_all = torch.log_softmax(logits.masked_fill_(~torch.from_numpy(mask[L]), MASKED), 1)
                    a = sample_actions(logp_all, self.gen)
                    logp = logp_all.gather(1, a[:, None])[:, 0]
                acts[L] = a.numpy()
                k = count + np.arange(len(L))
                s = actor[L]
                money = st.money[L, s]
                prev = self.open[L, s]
                had = prev >= 0
                gained = money - self.mark[L, s]
                reward[prev[had]] += gained[had]
                nxt[prev[had]] = k[had]
                reward[k[~had]] += gained[~had]  # money moved before a seat's first decision of the rollout
                self.mark[L, s] = money
                self.open[L, s] = k
                count += len(L)
                for key, val in (("mask", mask[L]), ("action", a.numpy()), ("logp", logp.numpy()),
                                 ("value", value.numpy()), ("seat", s), ("table", L)):
                    parts[key].append(val)
                parts["episode"].append(self._episodes(L))
            if len(F):
                acts[F] = self._frozen_moves(F, self.encoder.encode(st, actor[F], F, engine=eng), mask[F])
            eng.step(acts)
            done = np.flatnonzero(st.phase == DONE)
            if len(done):
                hands += len(done)
                for s in range(n):
                    o = self.open[done, s]
                    had = o >= 0
                    reward[o[had]] += st.money[done[had], s] - self.mark[done[had], s]
                    terminal[o[had]] = True
                self._book(done)
                self._deal(done)
        # sequences cut by the end of the rollout: their reward so far, then the value of the seat's view now
        cut_b, cut_s = np.nonzero(self.open >= 0)
        if len(cut_b):
            o = self.open[cut_b, cut_s]
            reward[o] += st.money[cut_b, cut_s] - self.mark[cut_b, cut_s]
            obs = self.sample_encoder.encode(st, cut_s.astype(np.int64), cut_b, engine=eng)
            if self.features is not None:
                obs = self.features.extend(obs, np.zeros((len(cut_b), N_ACTIONS), bool))
            with torch.inference_mode():
                _, v = self.net(torch.from_numpy(np.ascontiguousarray(obs.reshape(len(cut_b), -1))))
            bootstrap[o] = v.numpy()
            self.mark[cut_b, cut_s] = st.money[cut_b, cut_s]
            self.open[:] = -1
        out = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in parts.items()}
        out["obs"] = obs_buf[:count]
        out.update(reward=(reward[:count] * float(spec["reward_scale"])).astype(np.float32), nxt=nxt[:count],
                   terminal=terminal[:count], bootstrap=bootstrap[:count])
        out["advantage"], out["ret"] = seat_advantages(out["reward"], out["value"], out["nxt"], out["terminal"],
                                                       out["bootstrap"], float(spec["gamma"]), float(spec["gae_lambda"]))
        money, self.hands = self.hands, {}
        finished, self.finished = self.finished, []
        out["stats"] = {"samples": count, "hands": hands, "cpu": time.process_time() - cpu0, "money": money,
                        "finished": finished}
        return out

    def collect_paired(self) -> dict:
        """A paired rollout (``spec["paired"]``: twin tables, or groups of ``paired_branches`` tables, on common random
        draws, one sample per branch decision):
        :func:`agents.training.paired.collect_paired`."""
        from agents.training.paired import collect_paired

        return collect_paired(self)

    def _sample_buffer(self, shape: tuple[int, int]) -> np.ndarray:
        """The observation buffer of a rollout (``float32``, samples written in place: a final concatenate would copy
        ~14 KB a sample).  The previous rollout's buffer is reused when nothing refers to it any more (no batch,
        array or tensor of it is alive: a Ray actor's result has been handed over, the trainer has dropped its
        batch), since a fresh 100 MB buffer costs its page faults again (~20 % of a rollout's CPU time);
        otherwise a new one is allocated, so a batch a caller keeps is never overwritten."""
        buf = self._obs_buf
        # references: the attribute, ``buf`` and getrefcount's argument; a view of the buffer adds one
        if buf is None or buf.shape != shape or sys.getrefcount(buf) > 3:
            buf = self._obs_buf = np.empty(shape, np.float32)
        return buf

    def _episodes(self, tables: np.ndarray) -> np.ndarray:
        return self._episode[tables].copy()  # the wall id of each table's current hand

    def _frozen_moves(self, tables: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        out = np.zeros(len(tables), np.int64)
        which = self.entry[tables]
        for e in np.unique(which):
            sel = np.flatnonzero(which == e)
            name = self.entries[e]
            if name == "self" and self.snapshots:
                pick = self._episode[tables[sel]] % len(self.snapshots)
                for j in np.unique(pick):
                    sub = sel[pick == j]
                    out[sub] = self.snapshots[j].act(obs[sub], mask[sub])
            else:  # 'self' before the first snapshot plays random; search and fast read the engine's tables
                out[sel] = agent_act(self.pool["random" if name == "self" else name], obs[sel], mask[sel],
                                     engine=self.engine, tables=tables[sel])
        return out

    def _book(self, done: np.ndarray) -> None:
        """Learner-seat money of finished hands, by the hand's opponent entry (or ``all-seat`` with none frozen)."""
        st = self.engine.state
        for b in done:
            seats = np.flatnonzero(self.learner[b])
            key = "all-seat" if len(seats) == self.n else self.entries[self.entry[b]]
            self.hands.setdefault(key, []).extend(float(st.money[b, s]) for s in seats)
            self.finished.extend((int(self._episode[b]), int(s), float(st.money[b, s])) for s in seats)


def remote_rollouts(ray, spec: dict, workers: int) -> list:
    """``workers`` :class:`SeatRollouts` as Ray actors (one CPU each), worker ``i`` seeded with ``(seed, i)``."""
    actor = ray.remote(num_cpus=1)(SeatRollouts)
    return [actor.remote(spec, i) for i in range(workers)]


# ------------------------------------------------------------------------------------------ advantages


def seat_advantages(reward: np.ndarray, value: np.ndarray, nxt: np.ndarray, terminal: np.ndarray,
                    bootstrap: np.ndarray, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE over per-seat decision sequences stored interleaved in one buffer; returns ``(advantages, returns)``.

    Sample ``k``'s successor is ``nxt[k]`` (the same seat's next decision in the same hand, a later index) or
    ``-1``; with no successor it is either ``terminal[k]`` (the hand ended: next value 0) or cut by the end of
    the rollout (next value ``bootstrap[k]``).  ``reward[k]`` is the seat's money from decision ``k`` to its
    successor (or the end).  Returns ``advantage + value`` as the value targets."""
    n = len(reward)
    adv = np.zeros(n, np.float64)
    for k in range(n - 1, -1, -1):
        j = int(nxt[k])
        if j >= 0:
            next_value, next_adv = value[j], adv[j]
        else:
            next_value, next_adv = (0.0 if terminal[k] else bootstrap[k]), 0.0
        delta = reward[k] + gamma * next_value - value[k]
        adv[k] = delta + gamma * lam * next_adv
    return adv.astype(np.float32), (adv + value).astype(np.float32)


# ------------------------------------------------------------------------------------------ update


def ppo_update(net, optimizer, batch: dict, *, epochs: int, batch_size: int, clip_range: float, ent_coef: float,
               vf_coef: float, max_grad_norm: float, lr: float, rng: np.random.Generator, anchor=None,
               kl_coef: float = 0.0, center: bool = True) -> dict:
    """``epochs`` passes of clipped PPO over ``batch`` (the samples of :meth:`SeatRollouts.collect`, possibly
    several workers' concatenated) in minibatches of ``batch_size``; returns the mean losses, approximate KL
    and clip fraction.  The loss is sb3-contrib ``MaskablePPO``'s: normalised advantages, ``vf_coef`` × MSE to
    the returns, minus ``ent_coef`` × entropy.  With ``center`` false the advantages are only divided by their
    minibatch's standard deviation (paired rollouts with every branch a sample, whose actions are not drawn from
    the policy: a constant taken off their advantages would bias the gradient).

    ``batch["obs"]`` is one array or, from :func:`merge_batches`, the list of the workers' arrays (their rows in
    order), so several workers' observations are never copied into one array: each minibatch (its sample ids in
    increasing order) is gathered from them directly.  The arrays become tensors without a copy, the
    illegal-action mask is inverted once for the whole batch, and the logged statistics stay tensors until the end
    (no per-minibatch ``.item()``).  A :class:`SeatNet` is run through :meth:`~SeatNet.folded` (the observation's
    constant rows folded out of the first convolution; its inputs built once per update, in bfloat16 with
    ``precision="bf16"``).

    With ``anchor`` (a frozen network of the same inputs) and ``kl_coef > 0``, the loss adds ``kl_coef`` ×
    KL(policy ‖ anchor) over the legal actions, the anchor's log-probabilities computed once per update; ``kl_anchor``
    is logged.  Minibatches move to the network's device (a network off the CPU is never folded)."""
    torch = _torch()
    F = torch.nn.functional
    for group in optimizer.param_groups:
        group["lr"] = lr
    with warnings.catch_warnings():  # a Ray worker's arrays arrive read-only; they are only read here
        warnings.simplefilter("ignore", UserWarning)
        xs = [torch.from_numpy(np.ascontiguousarray(o.reshape(len(o), -1), dtype=np.float32))
              for o in (batch["obs"] if isinstance(batch["obs"], list) else [batch["obs"]])]
    device = next(net.parameters()).device
    fold = net.fold_batch(xs) if hasattr(net, "fold_batch") and device.type == "cpu" else None
    if fold is not None:
        tile, scalar, parts = fold
        columns = [list(c) for c in zip(*parts)]  # per input of net.folded, the parts' tensors (or Nones)
    elif getattr(net, "bf16", False):  # autocast would cast every minibatch to bfloat16 anyway: once, half the bytes
        xs = [x.to(torch.bfloat16) for x in xs]
    starts = np.cumsum([0] + [len(o) for o in xs])
    illegal = ~torch.from_numpy(np.ascontiguousarray(batch["mask"], dtype=bool))
    act = torch.from_numpy(np.asarray(batch["action"], dtype=np.int64))
    old = torch.from_numpy(np.asarray(batch["logp"], dtype=np.float32))
    adv_all = torch.from_numpy(np.asarray(batch["advantage"], dtype=np.float32))
    ret = torch.from_numpy(np.asarray(batch["ret"], dtype=np.float32))
    N = len(act)
    anchor_logp = None
    if anchor is not None and kl_coef > 0:
        with torch.no_grad():
            anchor_logp = torch.cat([torch.log_softmax(anchor(_gather_rows(torch, xs, starts, torch.arange(i, min(i + 4096, N)))
                                                              .to(device).float())[0].float().cpu()
                                                       .masked_fill(illegal[i : i + 4096], MASKED), 1)
                                     for i in range(0, N, 4096)])
    stats = []
    params = [p for p in net.parameters()]
    net.train()
    for _ in range(epochs):
        perm = torch.from_numpy(rng.permutation(N))
        for i in range(0, N, batch_size):
            idx = perm[i : i + batch_size].sort().values  # in order: each worker's rows are one run of idx
            if len(idx) < 2:
                continue
            if fold is None:
                logits, value = net(_gather_rows(torch, xs, starts, idx).to(device))
                logits, value = logits.cpu(), value.cpu()
            else:
                logits, value = net.folded(tile, scalar, *(None if c[0] is None else _gather_rows(torch, c, starts, idx)
                                                           for c in columns))
            masked = logits.masked_fill(illegal.index_select(0, idx), MASKED)
            logp_all = torch.log_softmax(masked, 1)
            logp = logp_all.gather(1, act.index_select(0, idx)[:, None])[:, 0]
            # softmax, not logp_all.exp(): exp of the masked ≈ -1e8 is a slow path (2.4x the entropy's cost)
            entropy = -(torch.softmax(masked, 1) * logp_all).sum(1).mean()
            adv = adv_all.index_select(0, idx)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if center else adv / (adv.std() + 1e-8)
            ratio = torch.exp(logp - old.index_select(0, idx))
            pg = -torch.min(adv * ratio, adv * torch.clamp(ratio, 1 - clip_range, 1 + clip_range)).mean()
            vloss = F.mse_loss(value, ret.index_select(0, idx))
            loss = pg + vf_coef * vloss - ent_coef * entropy
            kl = torch.zeros(())
            if anchor_logp is not None:
                kl = (torch.softmax(masked, 1) * (logp_all - anchor_logp.index_select(0, idx))).sum(1).mean()
                loss = loss + kl_coef * kl
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                stats.append(torch.stack([pg, vloss, entropy, ((ratio - 1) - torch.log(ratio)).mean(),
                                          (torch.abs(ratio - 1) > clip_range).float().mean(), kl]).detach())
    net.eval()
    keys = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction", "kl_anchor")
    if not stats:
        return {k: float("nan") for k in keys}
    means = torch.stack(stats).double().mean(0).tolist()
    return dict(zip(keys, means))


def value_params(net) -> list:
    """The parameters a value warm-up fits: the value head, and the oracle critic's trunk when there is one (never
    anything the policy reads)."""
    params = list(net.value.parameters())
    if getattr(net, "critic_rows", 0):
        params += list(net.critic.parameters())
    return params


def value_update(net, optimizer, batch: dict, *, epochs: int, batch_size: int, max_grad_norm: float,
                 rng: np.random.Generator) -> float:
    """``epochs`` passes of mean-squared-error regression of ``net``'s value on ``batch["ret"]`` in minibatches of
    ``batch_size``, stepping ``optimizer`` (built over :func:`value_params`), so the policy's weights are untouched;
    returns the mean loss."""
    torch = _torch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        xs = [torch.from_numpy(np.ascontiguousarray(o.reshape(len(o), -1), dtype=np.float32))
              for o in (batch["obs"] if isinstance(batch["obs"], list) else [batch["obs"]])]
    starts = np.cumsum([0] + [len(o) for o in xs])
    ret = torch.from_numpy(np.asarray(batch["ret"], dtype=np.float32))
    device = next(net.parameters()).device
    params = [p for group in optimizer.param_groups for p in group["params"]]
    losses = []
    N = len(ret)
    net.train()
    for _ in range(epochs):
        perm = torch.from_numpy(rng.permutation(N))
        for i in range(0, N, batch_size):
            idx = perm[i : i + batch_size].sort().values
            if len(idx) < 2:
                continue
            _, value = net(_gather_rows(torch, xs, starts, idx).to(device))
            loss = torch.nn.functional.mse_loss(value.cpu(), ret.index_select(0, idx))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
            optimizer.step()
            losses.append(loss.detach())
    net.eval()
    return float(torch.stack(losses).mean()) if losses else float("nan")


def explained_variance(batch: dict) -> dict:
    """``explained_variance`` (1 − Var(returns − values) / Var(returns)) and ``adv_std`` of a rollout's samples: how
    much of a hand's money the critic takes out of the advantages."""
    ret_var = float(np.var(batch["ret"]))
    return {"adv_std": float(np.std(batch["advantage"])),
            "explained_variance": 1.0 - float(np.var(batch["ret"] - batch["value"])) / ret_var if ret_var > 0 else float("nan")}


def _gather_rows(torch, xs: list, starts: np.ndarray, idx):
    """Rows ``idx`` (increasing) of the row-wise concatenation of the tensors ``xs`` (``starts``: their first rows)."""
    if len(xs) == 1:
        return xs[0].index_select(0, idx)
    cut = np.searchsorted(idx.numpy(), starts)
    return torch.cat([x.index_select(0, idx[cut[j] : cut[j + 1]] - int(starts[j])) for j, x in enumerate(xs)])


def merge_batches(parts: Sequence[dict]) -> dict:
    """One batch from several workers' rollouts: per-sample arrays concatenated, except ``obs``, which stays the
    list of the workers' arrays when there are several (about 14 KB a sample: :func:`ppo_update` gathers its
    minibatches from them, and a merged copy would cost the driver more than the rest of the merge); stats summed,
    money lists joined."""
    keys = [k for k in parts[0] if k not in ("stats", "obs")]
    out = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    out["obs"] = parts[0]["obs"] if len(parts) == 1 else [p["obs"] for p in parts]
    money: dict[str, list[float]] = {}
    for p in parts:
        for k, v in p["stats"]["money"].items():
            money.setdefault(k, []).extend(v)
    finished = [f for p in parts for f in p["stats"]["finished"]]
    out["stats"] = {"samples": sum(p["stats"]["samples"] for p in parts), "hands": sum(p["stats"]["hands"] for p in parts),
                    "cpu": sum(p["stats"]["cpu"] for p in parts), "worker_cpu": [p["stats"]["cpu"] for p in parts],
                    "money": money, "finished": finished}
    return out


# ------------------------------------------------------------------------------------------ the loop


def run_stage(net, args: Any, rules, obs_shape, features, *, payload: Callable[..., dict],
              evaluate: Callable[[int, int, int], dict], folder: Path, warm: bool = False) -> dict:
    """The PPO stage of ``train.py`` (``--trainer allseat``) on ``net`` (a :class:`SeatNet`, warm-started or not):
    rollouts on ``num_envs`` tables (locally, or on ``ray_workers`` Ray actors with ``--ray``), their per-seat
    advantages, then ``n_epochs`` of PPO on every learner-seat decision, ``total_timesteps`` samples in all;
    snapshots of the learner for the ``self`` opponent, checkpoints and evaluations on the way; ``progress.csv``
    at the end.  ``payload(step)`` is the learner's checkpoint now, ``evaluate(step, walls, first_wall)`` its
    duplicate evaluation (run once before the first rollout when the network is ``warm``-started, so the curve
    starts there).  Returns the counts and times of the stage."""
    torch = _torch()
    import copy

    from agents.players.policy import resolve_device, save_checkpoint
    from agents.training.runlog import write_progress

    # set-up: SB3's Adam settings (the fused kernel takes a third of the time of the per-tensor loop on CPU), the
    # minibatch shuffles, the rollout workers and the first snapshot of the learner in the opponent pool
    device = resolve_device(getattr(args, "device", "cpu"))
    net.to(device)
    # every branch a sample (paired_samples "all"): advantages scaled, not centred (the samples are not drawn from π)
    center = not (getattr(args, "paired", False) and getattr(args, "paired_samples", "first") == "all")
    # the anchor of kl_coef: the policy as PPO starts (the clone), frozen
    anchor = copy.deepcopy(net).eval().requires_grad_(False) if getattr(args, "kl_coef", 0.0) > 0 else None
    optimizer = torch.optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5, fused=True)
    rng = np.random.default_rng(args.seed)
    spec = seat_spec(args, rules, obs_shape, features)
    ray = None
    if args.ray is not None:
        from agents.tournament.distributed import connect

        ray = connect(args.ray, args.ray_workers)
        workers = remote_rollouts(ray, spec, args.ray_workers)
    else:
        workers = [SeatRollouts(spec, 0)]
        torch.set_num_threads(max(1, args.threads))

    def on_workers(method: str, *a):
        if ray is None:
            return [getattr(w, method)(*a) for w in workers]
        return ray.get([getattr(w, method).remote(*a) for w in workers])

    if "self" in args.opponents and args.frozen_share > 0:
        on_workers("add_snapshot", payload(0), args.pool_size)
    if warm and args.eval_every > 0:
        evaluate(0, args.eval_walls, 0)
    progress_rows: list[dict] = []
    steps = iteration = 0
    next_eval = args.eval_every if args.eval_every > 0 else None
    next_save, next_snap = args.save_every, args.snapshot_every
    started, cpu0 = time.perf_counter(), time.process_time()
    rollout_cpu = 0.0
    # the value warm-up's time counts in the stage's (cpu_seconds)
    warmup_rows = warm_value_head(net, args, collect=lambda state: merge_batches(
        [w.collect(state) for w in workers] if ray is None else ray.get([w.collect.remote(ray.put(state)) for w in workers])))
    print(f"run {folder.name}: {args.variant}, all-seat PPO ({args.precision}), {args.total_timesteps:,} samples, "
          f"{len(workers)} worker(s) × {args.num_envs} tables × {args.n_steps} steps, frozen share {args.frozen_share} "
          f"({dict(zip(args.opponents, args.opponent_weights))}), obs {OBS_VERSION}"
          f"{' + ' + args.derived if getattr(args, 'derived', '') else ''} {tuple(obs_shape)}", flush=True)
    while steps < args.total_timesteps:
        # rollout (the advantages are computed in the workers: SeatRollouts.collect, seat_advantages)
        state = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
        if ray is None:
            parts = [w.collect(state) for w in workers]
            torch.set_num_threads(max(1, args.threads))
        else:
            ref = ray.put(state)
            parts = ray.get([w.collect.remote(ref) for w in workers])
        batch = merge_batches(parts)
        rollout_cpu += batch["stats"]["cpu"]
        # how much of the returns the critic explains (the oracle critic's purpose: advantages of lower variance)
        value_stats = explained_variance(batch)
        if getattr(args, "paired", False) and batch["stats"]["samples"]:  # the spread the pairing removes (adv_std: paired)
            value_stats["adv_std_mc"] = float(np.std(batch["ret"] - batch["value"]))
        # update, on the annealed learning rate and entropy bonus
        frac = min(1.0, steps / args.total_timesteps)
        lr = args.lr_final + (args.learning_rate - args.lr_final) * (1 - frac) if args.anneal_lr else args.learning_rate
        ent = args.ent_coef if args.ent_coef_final is None else args.ent_coef + (args.ent_coef_final - args.ent_coef) * frac
        logs = ppo_update(net, optimizer, batch, epochs=args.n_epochs, batch_size=args.batch_size,
                          clip_range=args.clip_range, ent_coef=ent, vf_coef=args.vf_coef,
                          max_grad_norm=args.max_grad_norm, lr=lr, rng=rng, anchor=anchor,
                          kl_coef=getattr(args, "kl_coef", 0.0), center=center)
        steps += batch["stats"]["samples"]
        iteration += 1
        # log: progress, snapshots, checkpoints, evaluations
        money = {k: float(np.mean(v)) for k, v in batch["stats"]["money"].items() if v}
        row = {"iteration": iteration, "samples": steps, "hands": batch["stats"]["hands"], "lr": lr, "ent_coef": ent,
               **logs, **value_stats, "rollout_cpu": round(batch["stats"]["cpu"], 3), "cpu": round(time.process_time() - cpu0, 2),
               "wall": round(time.perf_counter() - started, 2), **{f"money_{k}": v for k, v in money.items()}}
        progress_rows.append(row)
        del parts, batch  # the rollout's sample buffer is free again: the next rollout reuses it (SeatRollouts)
        if args.progress:
            print(f"[iter {iteration:>4}] {steps:>9,} samples  policy {logs['policy_loss']:+.4f}  value "
                  f"{logs['value_loss']:.4f}  explained {value_stats['explained_variance']:+.3f}  entropy {logs['entropy']:.3f}  "
                  f"kl {logs['approx_kl']:.4f}  "
                  + " ".join(f"{k}:{v:+.2f}" for k, v in money.items()), flush=True)
        if steps >= next_snap:
            next_snap += args.snapshot_every
            if "self" in args.opponents and args.frozen_share > 0:
                on_workers("add_snapshot", payload(steps), args.pool_size)
        if steps >= next_save:
            next_save += args.save_every
            save_checkpoint(folder / "checkpoints" / f"step_{steps:09d}.pt", payload(steps))
            write_progress(progress_rows, folder / "progress.csv")  # so far: a run stopped early keeps its curve's CPU
        if next_eval is not None and steps >= next_eval:
            next_eval += args.eval_every
            evaluate(steps, args.eval_walls, 0)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu0
    write_progress(progress_rows, folder / "progress.csv")
    print(f"trained {steps:,} samples in {seconds:.0f} s ({cpu:.0f} CPU s here"
          + (f", {rollout_cpu:.0f} CPU s in the rollout workers" if ray is not None else "") + ")", flush=True)
    return {"steps": steps, "iterations": iteration, "seconds": seconds, "cpu_seconds": cpu,
            "rollout_worker_cpu_seconds": round(rollout_cpu, 1) if ray is not None else None,
            "value_warmup": warmup_rows}


def warm_value_head(net, args: Any, collect: Callable[[dict], dict]) -> list[dict]:
    """``args.value_warmup`` rollouts of the current policy (``collect(state)``: the merged batch), each fitting only
    the value head (:func:`value_update`, ``args.value_warmup_lr``, ``n_epochs`` passes); returns one row per rollout
    (samples, the explained variance the critic had on it before its fit, the loss).  No-op at 0 or without a PPO
    stage (``total_timesteps`` 0)."""
    rows: list[dict] = []
    if args.value_warmup <= 0 or args.total_timesteps <= 0:  # no PPO stage: nothing to warm
        return rows
    torch = _torch()
    optimizer = torch.optim.Adam(value_params(net), lr=args.value_warmup_lr, eps=1e-5)
    rng = np.random.default_rng([args.seed, 1])
    for i in range(args.value_warmup):
        batch = collect({k: v.detach().cpu().clone() for k, v in net.state_dict().items()})
        before = explained_variance(batch)
        loss = value_update(net, optimizer, batch, epochs=args.n_epochs, batch_size=args.batch_size,
                            max_grad_norm=args.max_grad_norm, rng=rng)
        rows.append({"rollout": i + 1, "samples": batch["stats"]["samples"], **before, "value_loss": loss})
        if args.progress:
            print(f"[value warm-up {i + 1}/{args.value_warmup}] {batch['stats']['samples']:,} samples  explained "
                  f"{before['explained_variance']:+.3f} before its fit  value loss {loss:.4f}", flush=True)
        del batch
    return rows
