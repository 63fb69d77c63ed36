"""Learned policies: the network, the checkpoint format written by ``train.py``, and :class:`PolicyAgent`.

This module owns the checkpoint format ``mjenv-policy-v1``: a ``torch.save`` dict holding only tensors
and plain values (so it loads with ``weights_only=True``)::

    {"format": "mjenv-policy-v1", "obs_version": "mjenv-obs-v1", "variant": "kawuxing3",
     "options": {...every rule option...}, "obs_shape": [C, 34], "arch": {"channels": .., "hidden": ..},
     "trunk": state_dict, "head": state_dict, "meta": {...training facts...},
     "features": "heuristic-advice-v1", "heuristic-advice-v2", "heuristic-advice-v3" or None,
     "advisor": {"agent": "heuristic-flush", "fingerprint": "sha256:..."} (only with features),
     "departures": {...} (optional, agents.players.departures), "checksum": "sha256:..."}

``features`` (optional; absent means none) names the extra input rows appended to the observation
(:mod:`agents.players.advice`); ``obs_shape`` is then the observation's shape plus those rows, and the architecture
has ``"advice": 1`` (the head adds the advice one-hot with a learned weight, :func:`make_head`).

``arch`` may name its network: ``"net": "resnet1d"`` is the residual network of :mod:`agents.players.resnet`
(``channels``, ``blocks``, ``hidden``); without ``net`` it is :func:`make_trunk`'s two convolutions.

``derived`` (optional; absent means none) names derived observation rows the network also reads:
``"mjenv-hand-v1"`` (:mod:`mjenv.encoding.handfeat`, the seat's public hand arithmetic — shanten and live improving
tiles per discard and plan, the waits of face-up 亮倒 hands) is a pure function of the ``mjenv-obs-v1`` rows, the
same for every agent (the observation encoder's, no player's decision or ranking), so a policy reading it stays
network-only; ``obs_shape`` is then the v1 shape plus its rows, and :class:`PolicyAgent` computes them from each
observation at play time.  A version this mjenv does not compute is refused.

``network_only`` (absent means false) is true when the policy reads only the observation through its network: no
advice features, no departure head, no hand-written player's code at play time (:func:`checkpoint_payload` sets
it from the payload; :func:`check_payload` refuses a true flag beside advice or a departure head).
``PolicyAgent(..., network_only=True)`` and the agent name ``network:PATH`` refuse any other checkpoint.

``departures`` (optional; absent or None means none) is a departure head (:mod:`agents.players.departures`): a gain
model over its advisor's ranked shortlist (``heuristic-flush``'s, or with ``"advisor": "heuristic-advice-v3"`` that
player with Gejiu's 七星 wait; the network must read the same advice set) that makes the policy play an alternative
where the network plays the advisor's choice and the model predicts a gain above its ``tau``.  It holds the feature
set name (``candidate-features-v1`` or ``-v2``), ``candidates``, ``tau``, ``scope``, ``arch`` (``members``,
``hidden``), ``state`` (tensors), a ``fingerprint`` of the shortlist and features on fixed positions (the checkpoint
is refused when they changed) and ``meta``.

**Integrity.**  ``checksum`` is the SHA-256 of every trunk and head tensor (name, dtype, shape and bytes,
:func:`tensor_checksum`); :func:`check_payload` refuses, naming the file, a checkpoint whose tensors do not match
it (a flipped bit, a truncated or edited file), one with a NaN or infinite weight, and one written before
checksums existed (``python -m agents.players.policy stamp FILE`` stamps a file you trust, tensors unchanged).  A
checkpoint whose network reads a hand-written player's advice records that player's version,
:func:`agents.players.advice.advisor_fingerprint` (its outputs on fixed positions), and is refused when the player now
plays differently: the network's inputs would have changed under it.

A checkpoint only plays the variant, rule options and observation version it was trained on:
:func:`check_compatible` refuses anything else with a message that lists every difference (a policy that
learned under ``kaikou: hard`` has learned nothing about ``kaikou: none``).  A file that is missing, not a torch
file, not this format or lacking keys is a :class:`CheckpointError` naming the file and what is wrong; files are
only ever loaded with ``weights_only=True`` (no code runs).  Torch is imported only here, on use; nothing in
``mjenv/`` imports it.
"""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path
from typing import Any

import numpy as np

from agents.players.base import resolve_options, resolve_rules
from agents.players.keyrng import uniforms
from mjenv.encoding.actions import N_ACTIONS
from mjenv.encoding.handfeat import HAND_FEATURES, HandFeatures
from mjenv.encoding.observation import OBS_VERSION, ObservationEncoder
from mjenv.rules.options import options_to_dict

CHECKPOINT_FORMAT = "mjenv-policy-v1"
DEFAULT_ARCH = {"channels": 32, "hidden": 128}


KNOWN_FEATURES = (None, "heuristic-advice-v1", "heuristic-advice-v2", "heuristic-advice-v3")
"""Values of a checkpoint's optional ``features`` key this version can compute (:mod:`agents.players.advice`)."""

KNOWN_DERIVED = (None, HAND_FEATURES)
"""Values of a checkpoint's optional ``derived`` key this version computes (:mod:`mjenv.encoding.handfeat`)."""

KNOWN_NETS = (None, "resnet1d")
"""Values of ``arch["net"]`` this version builds: None is :func:`make_trunk`'s network, ``resnet1d`` :mod:`agents.players.resnet`'s."""

REQUIRED_KEYS = ("format", "obs_version", "variant", "options", "obs_shape", "arch", "trunk", "head")
"""Keys every ``mjenv-policy-v1`` checkpoint has (``meta`` is optional)."""


class CheckpointError(ValueError):
    """A file or payload that is not a usable ``mjenv-policy-v1`` checkpoint; the message names the file and the problem."""


class CheckpointMismatch(ValueError):
    """A checkpoint trained on another variant, rule options or observation encoding than asked for."""


def _torch():
    try:
        import torch
    except ModuleNotFoundError as exc:  # the policy agent is the only agent that needs torch
        raise ModuleNotFoundError(
            "the policy agent needs torch: pip install torch==2.13.0 (or the project's 'train' extra)"
        ) from exc
    return torch


def make_trunk(obs_shape: tuple[int, int], channels: int, hidden: int, advice_row: int | None = None):
    """The shared feature network: two 1-D convolutions along the 34 tile columns, then one dense layer.

    Tile ids are laid out suit by suit, so a width-3 kernel sees a tile with its two neighbours
    (sequences and partial sets); scalar rows are constant along the columns and reach every position.
    With ``advice_row`` (the first row of the :mod:`agents.players.advice` block in the input), the output is the
    ``hidden`` features followed by the advice as a 111-wide one-hot, for :func:`make_head` to add.
    """
    torch = _torch()
    nn = torch.nn
    C, W = obs_shape
    body = nn.Sequential(
        nn.Unflatten(1, (C, W)),
        nn.Conv1d(C, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv1d(channels, channels, 3, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(channels * W, hidden),
        nn.ReLU(),
    )
    if advice_row is None:
        return body
    return _advice_modules()[0](body, C, W, advice_row)


def make_network(obs_shape, arch: dict, advice_row: int | None = None, advice_weight: float = 0.0):
    """``(trunk, head)`` of a checkpoint's architecture: :mod:`agents.players.resnet`'s network when ``arch["net"]`` is
    ``resnet1d``, else :func:`make_trunk` and :func:`make_head` (with the advice rows from ``advice_row``)."""
    if arch.get("net"):
        from agents.players.resnet import make_resnet

        return make_resnet(obs_shape, arch)
    return (make_trunk(tuple(obs_shape), arch["channels"], arch["hidden"], advice_row),
            make_head(arch["hidden"], advice=advice_row is not None, advice_weight=advice_weight))


def resolve_device(name: str = "auto"):
    """The ``torch.device`` for ``auto`` (CUDA when torch sees a CUDA device, else the CPU), ``cpu``, ``cuda`` or
    ``cuda:N``; raises ``ValueError`` with a one-line reason for anything else, or for CUDA where torch sees none."""
    torch = _torch()
    text = str(name).strip().lower()
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if text == "cpu":
        return torch.device("cpu")
    if text == "cuda" or (text.startswith("cuda:") and text[5:].isdigit()):
        if not torch.cuda.is_available():
            raise ValueError(f"device {name!r}: torch sees no CUDA device here (torch.cuda.is_available() is False); "
                             "use cpu or auto")
        if ":" in text and int(text[5:]) >= torch.cuda.device_count():
            raise ValueError(f"device {name!r}: torch sees {torch.cuda.device_count()} CUDA device(s)")
        return torch.device(text)
    raise ValueError(f"device {name!r} is not one of auto, cpu, cuda, cuda:N")


def make_head(hidden: int, advice: bool = False, advice_weight: float = 0.0):
    """The action logits layer (``hidden -> 111``); with ``advice``, plus a learned weight (starting at
    ``advice_weight``) times the advice one-hot that :func:`make_trunk` appends to its output."""
    if advice:
        return _advice_modules()[1](hidden, advice_weight)
    return _torch().nn.Linear(hidden, N_ACTIONS)


_ADVICE_CLASSES: tuple | None = None


def _advice_modules():
    """The two torch modules of an advised policy, defined on first use (torch is imported lazily)."""
    global _ADVICE_CLASSES
    if _ADVICE_CLASSES is not None:
        return _ADVICE_CLASSES
    torch = _torch()
    nn = torch.nn
    from agents.players.advice import ADVICE_ROWS

    class AdvisedTrunk(nn.Module):
        """The trunk's features, then the advice one-hot ``[N, 111]`` read from the input's advice rows."""

        def __init__(self, body, rows: int, width: int, advice_row: int):
            super().__init__()
            self.body = body
            self.width = width
            tiles = torch.arange(3 * width) + advice_row * width
            fixed = (torch.arange(ADVICE_ROWS - 3) + advice_row + 3) * width
            self.register_buffer("advice_index", torch.cat([tiles, fixed]), persistent=False)

        def forward(self, x):
            x = x.reshape(len(x), -1)
            return torch.cat([self.body(x), x[:, self.advice_index]], dim=1)

    class AdvisedHead(nn.Module):
        """``linear(features) + weight * advice``: the policy starts as the advice and learns departures."""

        def __init__(self, hidden: int, weight: float):
            super().__init__()
            self.hidden = hidden
            self.linear = nn.Linear(hidden, N_ACTIONS)
            self.advice_weight = nn.Parameter(torch.tensor(float(weight)))

        def forward(self, z):
            return self.linear(z[:, : self.hidden]) + self.advice_weight * z[:, self.hidden :]

    _ADVICE_CLASSES = (AdvisedTrunk, AdvisedHead)
    return _ADVICE_CLASSES


def checkpoint_payload(trunk, head, *, variant: str, options: Any, obs_shape, arch: dict, meta: dict | None = None,
                       features: str | None = None, departures: dict | None = None, derived: str | None = None) -> dict:
    """The dict :func:`save_checkpoint` writes (weights copied to CPU, checksummed); ``features`` names the extra
    input rows (and their advisor's fingerprint is recorded); ``derived`` the derived observation rows
    (:data:`KNOWN_DERIVED`, recorded only when given); ``departures`` is a departure head's entry
    (:func:`agents.players.departures.head_payload`) or None.  ``network_only`` is set True exactly when neither is
    given: the policy then reads only the observation through its network."""
    opts = resolve_options(variant, options)
    return stamp({
        "format": CHECKPOINT_FORMAT,
        "obs_version": OBS_VERSION,
        "variant": variant,
        "options": _plain(options_to_dict(opts, variant)),
        "obs_shape": [int(x) for x in obs_shape],
        "arch": {k: v if isinstance(v, str) else int(v) for k, v in arch.items()},
        "trunk": {k: v.detach().cpu().clone() for k, v in trunk.state_dict().items()},
        "head": {k: v.detach().cpu().clone() for k, v in head.state_dict().items()},
        "meta": _plain(meta or {}),
        "features": features,
        "network_only": features is None and departures is None,
        **({"derived": derived} if derived is not None else {}),
        **({"departures": departures} if departures is not None else {}),
    })


def tensor_checksum(ck: dict) -> str:
    """``"sha256:<hex>"`` over the trunk and head tensors of a payload (and its departure head's, when it has one):
    each tensor's name, dtype, shape and raw bytes, in name order (so it is the same on every machine and for a
    copy of the same weights)."""
    torch = _torch()
    digest = hashlib.sha256()
    for part, tensors in _tensor_parts(ck):
        for name in sorted(tensors):
            t = tensors[name].detach().cpu().contiguous()
            digest.update(f"{part}.{name}|{t.dtype}|{tuple(t.shape)}|".encode())
            digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return "sha256:" + digest.hexdigest()


def _tensor_parts(ck: dict) -> list[tuple[str, dict]]:
    """``(name, tensors)`` of every tensor dict of a payload: trunk, head, and the departure head's state."""
    parts = [("trunk", ck["trunk"]), ("head", ck["head"])]
    dep = ck.get("departures")
    if isinstance(dep, dict) and isinstance(dep.get("state"), dict):
        parts.append(("departures", dep["state"]))
    return parts


def stamp(ck: dict) -> dict:
    """``ck`` with its ``checksum`` and, when its network reads advice, its ``advisor`` record (and a departure
    head's ``fingerprint``) set from the weights and advisor as they are now (tensors untouched).  Returns ``ck``."""
    from agents.players.advice import FEATURE_SETS, advisor_fingerprint

    if isinstance(ck.get("departures"), dict):
        from agents.players.departures import departure_fingerprint

        from agents.players.departures import (ADVISOR, ADVISORS, FEATURE_SETS as DEPARTURE_SETS,
                                               FEATURES as DEPARTURE_V1, head_advisor)

        version = ck["departures"].get("features")  # (an unknown set or advisor is refused by check_payload)
        advisor = head_advisor(ck["departures"])
        ck["departures"]["fingerprint"] = departure_fingerprint(ck["variant"], ck["options"],
                                                                version if version in DEPARTURE_SETS else DEPARTURE_V1,
                                                                advisor if advisor in ADVISORS else ADVISOR,
                                                                ck["departures"].get("scope", "all"))
    if ck.get("features") in FEATURE_SETS:  # (an unknown set is refused by check_payload)
        ck["advisor"] = {"agent": FEATURE_SETS[ck["features"]],
                         "fingerprint": advisor_fingerprint(ck["variant"], ck["options"], ck["features"])}
    else:
        ck.pop("advisor", None)
    ck["checksum"] = tensor_checksum(ck)
    return ck


def _plain(d: dict) -> dict:
    """Only str/int/float/bool/None/list/dict values, so the file loads with ``weights_only=True``."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out[str(k)] = _plain(v)
        elif isinstance(v, (list, tuple)):
            out[str(k)] = [x if isinstance(x, (str, int, float, bool)) or x is None else str(x) for x in v]
        elif isinstance(v, (str, int, float, bool)) or v is None:
            out[str(k)] = v
        elif isinstance(v, (np.integer, np.floating)):
            out[str(k)] = v.item()
        else:
            out[str(k)] = str(v)
    return out


def save_checkpoint(path, payload: dict) -> Path:
    """Write a checkpoint payload (from :func:`checkpoint_payload`) to ``path``; returns the path."""
    torch = _torch()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(payload, path)
    return path


def load_checkpoint(path, rules=None) -> dict:
    """Read and check a checkpoint (:func:`check_payload`) from a path or from the file's bytes; raises
    :class:`CheckpointError` for a missing file or one that is not a complete ``mjenv-policy-v1`` checkpoint.
    ``rules`` (a :class:`mjenv.rules.Rules`, optional) are the rules the caller plays: a checkpoint recorded under
    them is checked under them, without resolving its record again."""
    torch = _torch()
    if isinstance(path, (bytes, bytearray, memoryview)):
        source, path = io.BytesIO(bytes(path)), "checkpoint bytes"
    else:
        path = source = Path(path)
        if not path.is_file():
            raise CheckpointError(f"{path}: checkpoint file not found")
    try:
        ck = torch.load(source, map_location="cpu", weights_only=True)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        reason = (
            "not a torch file, or it holds Python objects other than tensors and plain values"
            if "weights_only" in str(exc) or "pickle" in first.lower() or "Unsupported operand" in str(exc)
            else first[:200]
        )
        raise CheckpointError(f"{path}: not a readable {CHECKPOINT_FORMAT} checkpoint ({reason})") from None
    check_payload(ck, str(path), rules)
    return ck


def record_rules(ck: dict, rules=None):
    """The :class:`mjenv.rules.Rules` a checkpoint records (``variant`` and ``options``): ``rules`` themselves when
    the record is theirs, else the record resolved (:func:`agents.players.base.resolve_rules`)."""
    if rules is not None and ck.get("variant") == rules.variant and ck.get("options") == _plain(rules.options_dict()):
        return rules
    return resolve_rules(ck["variant"], ck["options"])


def check_payload(ck: Any, where: str = "checkpoint", rules=None) -> None:
    """Raise :class:`CheckpointError` unless ``ck`` has the format tag and every key of :data:`REQUIRED_KEYS`
    with the right kind of value (the message lists what is missing or wrong); the advisor and departure head
    are checked under the checkpoint's own rules (:func:`record_rules`, ``rules`` when they are those)."""
    if not isinstance(ck, dict):
        raise CheckpointError(f"{where}: not a {CHECKPOINT_FORMAT} checkpoint (a {type(ck).__name__}, not a dict)")
    if ck.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{where}: not a {CHECKPOINT_FORMAT} checkpoint (format {ck.get('format')!r})")
    missing = [k for k in REQUIRED_KEYS if k not in ck]
    if missing:
        raise CheckpointError(f"{where}: incomplete {CHECKPOINT_FORMAT} checkpoint, missing {', '.join(missing)}")
    problems = []
    shape = ck["obs_shape"]
    if not (isinstance(shape, (list, tuple)) and len(shape) == 2 and all(isinstance(x, int) and x > 0 for x in shape)):
        problems.append(f"obs_shape {shape!r} is not two positive integers")
    arch = ck["arch"]
    if not (isinstance(arch, dict) and all(isinstance(arch.get(k), int) and arch[k] > 0 for k in DEFAULT_ARCH)):
        problems.append(f"arch {arch!r} lacks positive integer {' and '.join(DEFAULT_ARCH)}")
    for key in ("trunk", "head"):
        if not isinstance(ck[key], dict) or not all(hasattr(v, "shape") for v in ck[key].values()):
            problems.append(f"{key} is not a dict of tensors")
    if not isinstance(ck["options"], dict):
        problems.append("options is not a dict")
    if ck.get("features") not in KNOWN_FEATURES:
        problems.append(f"features {ck.get('features')!r} is not one of {KNOWN_FEATURES}")
    if ck.get("departures") is not None and not ck.get("features"):
        problems.append("a departure head needs an advised network (features)")
    elif isinstance(ck.get("departures"), dict):
        from agents.players.departures import head_advisor

        if head_advisor(ck["departures"]) != ck.get("features"):
            problems.append(f"the departure head re-ranks the shortlist of {head_advisor(ck['departures'])}'s advisor, "
                            f"but the network reads {ck.get('features')}")
    if ck.get("network_only", False) not in (True, False):
        problems.append(f"network_only {ck.get('network_only')!r} is not true or false")
    elif ck.get("network_only") and (ck.get("features") or ck.get("departures") is not None):
        problems.append("network_only is true but the policy reads advice features or has a departure head")
    if ck.get("derived") not in KNOWN_DERIVED:
        problems.append(f"derived rows {ck.get('derived')!r} are not one of {KNOWN_DERIVED} (this mjenv computes "
                        f"{HAND_FEATURES}): a version mismatch")
    elif ck.get("derived") and ck.get("features"):
        problems.append("derived rows and advice features together are not a layout this version reads")
    if isinstance(arch, dict) and arch.get("net") not in KNOWN_NETS:
        problems.append(f"arch net {arch.get('net')!r} is not one of {KNOWN_NETS}")
    elif isinstance(arch, dict) and arch.get("net") and ck.get("features"):
        problems.append(f"arch net {arch['net']!r} takes no advice features")
    if problems:
        raise CheckpointError(f"{where}: bad {CHECKPOINT_FORMAT} checkpoint: " + "; ".join(problems))
    check_integrity(ck, where)
    if ck.get("features"):
        check_advisor(ck, where, rules)
    if ck.get("departures") is not None:
        from agents.players.departures import check_part

        problems = check_part(ck["departures"], record_rules(ck, rules), None, where)
        if problems:
            raise CheckpointError(f"{where}: bad departure head: " + "; ".join(problems))


def check_integrity(ck: dict, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` naming ``where`` unless the payload's tensors match its ``checksum`` and
    every floating-point weight is finite."""
    torch = _torch()
    recorded = ck.get("checksum")
    if not isinstance(recorded, str):
        raise CheckpointError(f"{where}: carries no tensor checksum (written before checksums were recorded); "
                              f"`python -m agents.players.policy stamp {where}` stamps a file you trust")
    if tensor_checksum(ck) != recorded:
        raise CheckpointError(f"{where}: damaged checkpoint: its tensors do not match their checksum {recorded[:19]}…")
    for part, tensors in _tensor_parts(ck):
        for name, t in tensors.items():
            if t.is_floating_point() and not bool(torch.isfinite(t).all()):
                raise CheckpointError(f"{where}: damaged checkpoint: tensor {part}.{name} holds NaN or infinite values")


def check_advisor(ck: dict, where: str = "checkpoint", rules=None) -> None:
    """Raise :class:`CheckpointError` unless the advisor recorded in an advised checkpoint plays as it did when
    the checkpoint was stamped (:func:`agents.players.advice.advisor_fingerprint` under the checkpoint's own rules)."""
    from agents.players.advice import FEATURE_SETS, advisor_fingerprint

    rec = ck.get("advisor")
    agent = FEATURE_SETS[ck["features"]]
    if not (isinstance(rec, dict) and isinstance(rec.get("fingerprint"), str)):
        raise CheckpointError(f"{where}: its network reads {agent}'s advice ({ck['features']}) but the checkpoint "
                              f"records no version of {agent}; retrain it, or stamp it if you know the player is unchanged")
    try:
        now = advisor_fingerprint(record_rules(ck, rules), None, ck["features"])
    except Exception as exc:  # options this mjenv cannot load: reported by check_compatible, stated here too
        raise CheckpointError(f"{where}: cannot compute {agent}'s version under the checkpoint's rules ({exc})") from None
    if rec.get("agent") != agent or rec["fingerprint"] != now:
        raise CheckpointError(
            f"{where}: its network reads {agent}'s advice, and {agent} has changed since the checkpoint was trained "
            f"(recorded {rec.get('agent')} {rec['fingerprint'][:19]}…, now {now[:19]}…): retrain it, or stamp it "
            "only if the change does not matter")


def check_compatible(ck: dict, variant: str, options: Any, *, strict_options: bool = True, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointMismatch` unless ``ck`` was trained on ``variant``, ``options`` and this encoding.

    ``strict_options=False`` lets rule options differ (the observation still has the same shape, and its
    options block tells the network what changed); variant and observation version must always match.
    """
    problems = []
    if ck.get("obs_version") != OBS_VERSION:
        problems.append(f"observation encoding {ck.get('obs_version')!r} (this mjenv encodes {OBS_VERSION!r})")
    if ck.get("variant") != variant:
        problems.append(f"variant {ck.get('variant')!r} (asked for {variant!r})")
    else:
        want = _plain(options_to_dict(resolve_options(variant, options), variant))
        have = ck.get("options", {})
        diffs = [f"{k}: trained {have.get(k)!r}, asked {want.get(k)!r}" for k in sorted(set(want) | set(have)) if have.get(k) != want.get(k)]
        if diffs and strict_options:
            problems.append("other rule options (" + "; ".join(diffs) + ")")
        shape = list(ObservationEncoder(variant, resolve_options(variant, options)).shape)
        if ck.get("features"):
            from agents.players.advice import ROWS

            shape[0] += ROWS
        if ck.get("derived") in KNOWN_DERIVED[1:]:
            shape[0] += HandFeatures(variant, resolve_options(variant, options)).rows
        if list(ck.get("obs_shape", [])) != shape:
            problems.append(f"observation shape {ck.get('obs_shape')} (this encoder gives {shape})")
    if problems:
        raise CheckpointMismatch(f"{where} cannot play here: it was trained on " + "; ".join(problems))


class PolicyAgent:
    """Plays a ``mjenv-policy-v1`` checkpoint: masked logits, greedy by default or sampled (seeded)."""

    takes_keys = True  # the arena passes per-decision keys (agents.players.keyrng)

    def __init__(self, checkpoint, variant: str = "kawuxing3", options: Any = None, *, deterministic: bool = True,
                 seed: int | None = 0, strict_options: bool = True, name: str | None = None, device: str = "cpu",
                 network_only: bool = False):
        """``device``: where the network runs (:func:`resolve_device`: ``auto``, ``cpu``, ``cuda``, ``cuda:N``);
        ``network_only``: refuse (:class:`CheckpointError`) a checkpoint not recorded as network-only."""
        torch = _torch()
        self.rules = resolve_rules(variant, options)  # variant: a name, or a mjenv.rules.Rules
        variant, options = self.rules.variant, self.rules.options
        self.device = resolve_device(device)
        ck = checkpoint if isinstance(checkpoint, dict) else load_checkpoint(checkpoint, self.rules)
        where = "checkpoint" if isinstance(checkpoint, dict) else str(checkpoint)
        check_payload(ck, where, self.rules)
        if network_only and ck.get("network_only") is not True:
            why = ("it reads heuristic advice features" if ck.get("features") else
                   "it records no network_only flag (written before the flag existed)" if "network_only" not in ck
                   else "its network_only flag is false")
            raise CheckpointError(f"{where}: not a network-only policy ({why}); a network-only player takes only "
                                  "checkpoints whose network reads the observation alone")
        check_compatible(ck, variant, options, strict_options=strict_options, where=where)
        arch = {**DEFAULT_ARCH, **ck.get("arch", {})}
        self.features = None
        advice_row = None
        if ck.get("features"):
            from agents.players.advice import AdviceFeatures

            self.features = AdviceFeatures(variant, options, ck["features"])
            advice_row = int(ck["obs_shape"][0]) - self.features.rows
        self.derived = HandFeatures(self.rules) if ck.get("derived") else None
        self.trunk, self.head = make_network(tuple(ck["obs_shape"]), arch, advice_row)
        for key, net in (("trunk", self.trunk), ("head", self.head)):
            try:
                net.load_state_dict(ck[key])
            except RuntimeError as exc:  # missing / unexpected parameters, or shapes of another architecture
                detail = " ".join(str(exc).split())[:300]
                raise CheckpointError(f"{where}: the {key} weights do not fit arch {arch}: {detail}") from None
        self.trunk.to(self.device).eval()
        self.head.to(self.device).eval()
        self.departures = None
        if ck.get("departures") is not None:
            from agents.players.departures import Departures

            try:
                self.departures = Departures(ck["departures"], variant, options)
            except RuntimeError as exc:  # tensors of another head architecture
                detail = " ".join(str(exc).split())[:300]
                raise CheckpointError(f"{where}: the departure head's weights do not fit its arch: {detail}") from None
        self.deterministic = deterministic
        self.seed = 0 if seed is None else int(seed)
        self.generator = torch.Generator().manual_seed(self.seed)
        self.checkpoint = ck  # kept so agents.tournament.distributed can ship it to Ray workers
        self.settings = {"variant": variant, "options": options, "deterministic": deterministic, "seed": seed,
                         "strict_options": strict_options, "device": str(device), "network_only": network_only}
        self.meta = ck.get("meta", {})
        self.name = name or (Path(where).stem if where != "checkpoint" else "policy")
        self._torch = torch

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Same as :meth:`act` (so the agent can be an env's opponent policy)."""
        return self.act(obs, mask)

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked action logits ``float32 [B, 111]`` (illegal actions at -inf).  With a departure head, where it
        departs its alternative's logit is raised one above the row's largest, so the greedy action is the
        policy's."""
        torch = self._torch
        if getattr(obs, "dtype", None) == np.uint8:  # mjenv-obs-v2 bytes: the v1 planes the network reads
            obs = self._v2_decoder()(torch.as_tensor(obs)).numpy()
        plain = obs
        if self.features is not None:
            obs = self.features.extend(obs, mask)
        if self.derived is not None:  # the derived rows (mjenv-hand-v1) computed from the v1 rows
            obs = self.derived.extend(np.asarray(obs, dtype=np.float32).reshape(len(obs), *self.derived.v1_shape))
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)).to(self.device)
            out = self.head(self.trunk(x)).float().cpu()
            out = out.masked_fill(~torch.as_tensor(np.asarray(mask, dtype=bool)), float("-inf"))
        out = out.numpy()
        if self.departures is not None and len(out):
            greedy = out.argmax(1)
            played = self.departures.apply(plain, mask, greedy)
            moved = np.flatnonzero(played != greedy)
            out[moved, played[moved]] = out[moved].max(1) + 1.0
        return out

    def rollout(self, engine, max_steps: int = 10_000) -> int:
        """Play every live table of ``engine`` to the end of its hand with this policy in every seat (its own
        observation of each acting seat, as :meth:`act` plays); returns the number of decisions made.  The network
        as a rollout player (``rollout(engine)``, like :class:`agents.players.fasthead.FastHeadPlayer`'s), e.g. for
        qfit's labels (``python -m agents.training.exit label --rollout_network``); it costs about 9 times the CPU
        of the compiled players."""
        from mjenv.engine import state as S
        from mjenv.encoding.observation import encoder_for

        if engine.rules.variant != self.rules.variant:
            raise ValueError(f"rollout: this policy plays {self.rules.variant!r}, the engine {engine.rules.variant!r}")
        encoder = encoder_for(engine)
        st = engine.state
        acts = np.zeros(engine.batch_size, np.int64)
        total = 0
        for _ in range(int(max_steps)):
            live = np.flatnonzero(st.phase != S.DONE)
            if not len(live):
                return total
            obs = encoder.encode(st, st.actor[live].astype(np.int64), live, engine=engine)
            acts[live] = self.act(obs, engine.mask[live])
            engine.step(acts)
            total += len(live)
        raise RuntimeError(f"rollout: hands still live after {max_steps} steps")

    def _v2_decoder(self):
        """The torch module turning ``mjenv-obs-v2`` bytes of this policy's variant into v1 planes (made once)."""
        dec = self.__dict__.get("_v2")
        if dec is None:
            from mjenv.encoding.compact import CompactEncoder, torch_decoder

            variant = self.settings["variant"]
            dec = self._v2 = torch_decoder(CompactEncoder(variant, resolve_options(variant, self.settings["options"])))
        return dec

    def act(self, obs: np.ndarray, mask: np.ndarray, keys: np.ndarray | None = None) -> np.ndarray:
        """One legal action per row (``obs``: ``mjenv-obs-v1`` planes, or ``mjenv-obs-v2`` bytes, decoded on the
        fly).  When sampling, ``keys`` (``uint64 [B]``, one per decision, from the arena) make each row's draw a
        function of its key and the seed alone (Gumbel-max on keyed uniforms)."""
        torch = self._torch
        if not self.deterministic and keys is not None:
            logits = self.logits(obs, mask).astype(np.float64)
            u = np.clip(uniforms(keys, logits.shape[1], self.seed), 1e-300, None)
            return (logits - np.log(-np.log(u))).argmax(1).astype(np.int64)
        logits = torch.as_tensor(self.logits(obs, mask))
        if self.deterministic:
            return logits.argmax(1).numpy().astype(np.int64)
        probs = torch.softmax(logits, 1)
        return torch.multinomial(probs, 1, generator=self.generator)[:, 0].numpy().astype(np.int64)


def _stamp_main(argv: list[str]) -> int:
    """``python -m agents.players.policy stamp FILE [OUT]``: write FILE (or OUT) with its checksum and advisor record set
    from its tensors and today's advisor; the tensors are copied bit for bit (checked before writing)."""
    torch = _torch()
    if len(argv) not in (2, 3) or argv[0] != "stamp":
        print("usage: python -m agents.players.policy stamp FILE [OUT]", file=sys.stderr)
        return 2
    src = Path(argv[1])
    out = Path(argv[2]) if len(argv) == 3 else src
    try:
        ck = torch.load(src, map_location="cpu", weights_only=True)
    except Exception as exc:
        print(f"agents.players.policy: error: {src}: not a readable checkpoint ({str(exc).splitlines()[0][:200]})", file=sys.stderr)
        return 2
    before = {f"{p}.{k}": v.clone() for p, tensors in _tensor_parts(ck) for k, v in tensors.items()}
    stamp(ck)
    try:
        check_payload(ck, str(src))
    except CheckpointError as exc:  # e.g. a NaN weight: never stamp a damaged file
        print(f"agents.players.policy: error: {exc}", file=sys.stderr)
        return 2
    tmp = out.with_name(out.name + ".tmp")
    torch.save(ck, tmp)
    again = torch.load(tmp, map_location="cpu", weights_only=True)
    same = all(torch.equal(before[f"{p}.{k}"], v) and before[f"{p}.{k}"].dtype == v.dtype
               for p, tensors in _tensor_parts(again) for k, v in tensors.items()) and len(before) == sum(
        len(tensors) for _, tensors in _tensor_parts(again))
    if not same:
        tmp.unlink()
        print(f"agents.players.policy: error: {src}: tensors changed on the way; nothing written", file=sys.stderr)
        return 1
    tmp.replace(out)
    print(f"{out}: checksum {ck['checksum']}" + (f", advisor {ck['advisor']['agent']} {ck['advisor']['fingerprint']}"
                                                 if ck.get("advisor") else "") + f"; {len(before)} tensors bit-identical")
    return 0


if __name__ == "__main__":
    sys.exit(_stamp_main(sys.argv[1:]))
