"""Decision datasets for offline learning: the ``mjenv-dataset-v1`` format, writing it (:class:`DatasetWriter`,
:func:`write_from_replays`) and reading it back (:class:`DatasetReader`, :func:`torch_dataset`, :func:`iter_batches`).

This module owns the ``mjenv-dataset-v1`` format (docs/dataset.md): a folder of shards
``shard_00000.npz`` ... (numpy ``.npz``, uncompressed) and a ``meta.json`` written last (a folder without it is
incomplete).  One row per decision: the deciding seat's observation (``mjenv-obs-v1``), its legal-action mask,
the action taken, the reward and return, the seat, the wall id, the hand and the step within the hand, the
agent that decided, and on request the ``mjenv-oracle-v1`` rows (every hand and the wall order).

Observations are stored losslessly but compactly, per shard (the compiled kernels are in :mod:`mjenv.packing`):
a row (one of the C planes of 34 columns) that is constant across its columns in every decision of the shard is
kept as one float32 (``obs_scalar``); a row whose values are all 0 or 1 is bit-packed (``obs_bits``, 5 bytes); any
other row is kept whole (``obs_plane``, float32).  Masks are bit-packed.  About 0.9 KB per decision instead of
13.6 KB for kawuxing3.  :func:`pack_planes` / :func:`unpack_planes` are that packing (the distillation labels of
``train.py`` use it too).

Sources: :func:`write_from_replays` re-simulates ``mjenv-replay-v1`` files (:mod:`mjenv.replay`) on the engine;
agents playing seeded walls are recorded by :func:`agents.tournament.recording.write_from_play`, a floor above (it
plays agents, which this module, read by the agents' training, does not import), through the arena's hooks into a
:class:`DatasetWriter`.  The command line ``mjenv dataset`` is :mod:`mjenv.tools.dataset`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable, Sequence

import numpy as np

FORMAT = "mjenv-dataset-v1"
N_ACTIONS = 111
# per-decision fields besides the observation, with their stored dtype
FIELDS = {"action": np.int16, "reward": np.float32, "ret": np.float32, "seat": np.int8, "wall": np.int64,
          "hand": np.int64, "step": np.int32, "agent": np.int16}


class DatasetError(ValueError):
    """A dataset folder that cannot be read or written (the message names the file or the argument)."""


# ------------------------------------------------------------------------------------------ packing


def pack_planes(buf: np.ndarray, prefix: str = "obs", idx: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Decisions ``buf[idx]`` (``float32 [*, C, 34]``, default all) as the arrays of one shard (see the module
    docstring); lossless."""
    from mjenv.packing import _classify, _pack  # compiled; imported on use, so `mjenv score` never loads numba

    buf = np.ascontiguousarray(buf, dtype=np.float32)
    idx = np.arange(buf.shape[0], dtype=np.int64) if idx is None else np.ascontiguousarray(idx, dtype=np.int64)
    cls = _classify(buf, idx)
    rs, rb, rp = (np.flatnonzero(cls == k).astype(np.int16) for k in range(3))
    K, W = len(idx), buf.shape[2]
    out = {f"{prefix}_shape": np.asarray(buf.shape[1:], dtype=np.int32),
           f"{prefix}_scalar_rows": rs, f"{prefix}_scalar": np.empty((K, len(rs)), np.float32),
           f"{prefix}_bit_rows": rb, f"{prefix}_bits": np.empty((K, len(rb), (W + 7) // 8), np.uint8),
           f"{prefix}_plane_rows": rp, f"{prefix}_plane": np.empty((K, len(rp), W), np.float32)}
    _pack(buf, idx, rs.astype(np.int64), rb.astype(np.int64), rp.astype(np.int64), out[f"{prefix}_scalar"],
          out[f"{prefix}_bits"], out[f"{prefix}_plane"])
    return out


def unpack_planes(d: Any, prefix: str = "obs", index: np.ndarray | slice = slice(None)) -> np.ndarray:
    """The ``float32 [k, C, 34]`` observations at ``index`` of one shard's arrays ``d``."""
    C, W = (int(v) for v in d[f"{prefix}_shape"])
    scal = d[f"{prefix}_scalar"][index]
    out = np.empty((scal.shape[0], C, W), np.float32)
    out[:, d[f"{prefix}_scalar_rows"], :] = scal[:, :, None]
    out[:, d[f"{prefix}_bit_rows"], :] = np.unpackbits(d[f"{prefix}_bits"][index], axis=2, count=W)
    out[:, d[f"{prefix}_plane_rows"], :] = d[f"{prefix}_plane"][index]
    return out


def _save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)


def _write_json(path: Path, obj: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


# ------------------------------------------------------------------------------------------ writing


def _new_folder(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DatasetError(f"--out {out}: exists and is not an empty folder; choose a new one")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"--out {out}: cannot create it ({exc.strerror or exc})") from None


class DatasetWriter:
    """The arena's ``on_step`` / ``on_record`` hooks and the shard writer.

    Each decision is encoded straight into a slot of a preallocated buffer and stays there until its hand ends;
    then its slots join the ready queue with their reward (the seat's money from the hand, at its last decision
    of the hand) and return (that money, at every decision of the seat in the hand).  Every ``shard_size``
    ready decisions are packed from their slots (:func:`pack_planes`) into one shard file and the slots reused,
    so no observation is copied more than once and memory stays at about one shard plus the hands in play."""

    def __init__(self, out: str | Path, shard_size: int, meta: dict, shape: tuple[int, int], oracle_rows: int,
                 in_play: int = 16384):
        if shard_size < 1:
            raise DatasetError(f"--shard-size must be >= 1, got {shard_size}")
        self.out = Path(out)
        _new_folder(self.out)
        self.shard_size, self.meta, self.shape, self.oracle_rows = shard_size, meta, shape, oracle_rows
        # room for one shard of ready decisions plus the hands in play (about 48 decisions per table)
        self.cap = shard_size + in_play
        self.obs = np.empty((self.cap, *shape), np.float32)
        self.extra = np.empty((self.cap if oracle_rows else 0, oracle_rows, shape[1]), np.float32)
        self.mask = np.zeros((self.cap, N_ACTIONS), bool)
        self.cols = {k: np.zeros(self.cap, np.int64) for k in ("action", "seat", "hand", "step", "agent")}
        self.free: list[int] = list(range(self.cap - 1, -1, -1))
        self.slots_of: dict[int, list[np.ndarray]] = {}
        self.ready: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []  # slots, reward, ret, wall
        self.n_ready = 0
        self.shards: list[dict] = []
        self.decisions = 0

    def _grow(self, need: int) -> None:
        new = max(need, int(self.cap * 1.5) + 1024)
        self.obs = np.concatenate([self.obs, np.empty((new - self.cap, *self.shape), np.float32)])
        if self.oracle_rows:
            self.extra = np.concatenate([self.extra, np.empty((new - self.cap, self.oracle_rows, self.shape[1]), np.float32)])
        self.mask = np.concatenate([self.mask, np.zeros((new - self.cap, N_ACTIONS), bool)])
        for k, v in self.cols.items():
            self.cols[k] = np.concatenate([v, np.zeros(new - self.cap, np.int64)])
        self.free.extend(range(new - 1, self.cap - 1, -1))
        self.cap = new

    def on_step(self, eng, tables: np.ndarray, actions: np.ndarray, games: np.ndarray, steps: np.ndarray,
                agents: np.ndarray) -> None:
        """Record a batch of decisions (the arguments of the arena's ``on_step``)."""
        from mjenv.encoding.observation import encoder_for

        K = len(tables)
        if len(self.free) < K:
            self._grow(self.cap + K)
        slots = np.asarray(self.free[-K:][::-1], np.int64)
        del self.free[-K:]
        st = eng.state
        seats = st.actor[tables].astype(np.int64)
        if self.oracle_rows:
            full = encoder_for(eng, oracle=True).encode(st, seats, tables, engine=eng)
            self.obs[slots] = full[:, :self.shape[0]]
            self.extra[slots] = full[:, self.shape[0]:]
        elif K and np.array_equal(slots, np.arange(slots[0], slots[0] + K)):  # consecutive, in order: encode in place
            encoder_for(eng).encode(st, seats, tables, out=self.obs[slots[0]:slots[0] + K], engine=eng)
        else:
            self.obs[slots] = encoder_for(eng).encode(st, seats, tables, engine=eng)
        self.mask[slots] = eng.mask[tables]
        for k, v in (("action", actions), ("seat", seats), ("hand", games), ("step", steps), ("agent", agents)):
            self.cols[k][slots] = v
        for g in np.unique(games):
            self.slots_of.setdefault(int(g), []).append(slots[games == g])

    def on_record(self, record) -> None:
        """A hand ended (an :class:`agents.tournament.arena.GameRecord`, or anything with ``game``, ``wall``, ``deltas``)."""
        parts = self.slots_of.pop(int(record.game), [])
        if not parts:
            return
        slots = np.concatenate(parts)
        seats = self.cols["seat"][slots]
        money = np.asarray(record.deltas, np.float32)
        ret = money[seats]
        reward = np.zeros(len(slots), np.float32)
        for s in np.unique(seats):
            last = np.flatnonzero(seats == s)[-1]
            reward[last] = ret[last]
        self.ready.append((slots, reward, ret, int(record.wall)))
        self.n_ready += len(slots)
        while self.n_ready >= self.shard_size:
            self._write(self.shard_size)

    def _write(self, k: int) -> None:
        slots, reward, ret, wall = [], [], [], []
        got = 0
        while got < k:
            s, rw, rt, w = self.ready[0]
            take = min(k - got, len(s))
            slots.append(s[:take]), reward.append(rw[:take]), ret.append(rt[:take]), wall.append(np.full(take, w))
            if take == len(s):
                self.ready.pop(0)
            else:
                self.ready[0] = (s[take:], rw[take:], rt[take:], w)
            got += take
        idx = np.concatenate(slots)
        arrays = pack_planes(self.obs, "obs", idx)
        if self.oracle_rows:
            arrays |= pack_planes(self.extra, "oracle", idx)
        arrays["mask_bits"] = np.packbits(self.mask[idx], axis=1)
        cols = {k2: v[idx] for k2, v in self.cols.items()} | {"reward": np.concatenate(reward), "ret": np.concatenate(ret),
                                                               "wall": np.concatenate(wall)}
        for key, dtype in FIELDS.items():
            arrays[key] = cols[key].astype(dtype)
        name = f"shard_{len(self.shards):05d}.npz"
        _save_npz(self.out / name, arrays)
        self.shards.append({"file": name, "decisions": int(k)})
        self.decisions += int(k)
        self.n_ready -= k
        self.free.extend(idx.tolist())

    def finish(self, extra: dict | None = None) -> dict:
        """Write the last shard and meta.json (last of all); returns the meta."""
        if self.n_ready:
            self._write(self.n_ready)
        meta = {**self.meta, **(extra or {}), "format": FORMAT, "decisions": self.decisions, "shards": self.shards}
        _write_json(self.out / "meta.json", meta)
        return meta


def open_writer(out, shard_size: int, variant: str, opts, oracle: bool, source: dict, tables: int = 1) -> DatasetWriter:
    """A :class:`DatasetWriter` for a new dataset folder with its meta (everything but the shard list)."""
    meta = _base_meta(variant, opts, oracle, source)
    return DatasetWriter(out, shard_size, meta, tuple(meta["observation"]["shape"]),
                   meta["oracle"]["shape"][0] if oracle else 0, in_play=48 * tables + 256)


def _base_meta(variant: str, opts, oracle: bool, source: dict) -> dict:
    from mjenv.encoding.observation import OBS_VERSION, ORACLE_VERSION, ObservationEncoder, OracleEncoder
    from mjenv.rules.options import n_players, options_to_dict

    enc = ObservationEncoder(variant, opts)
    meta = {"format": FORMAT, "variant": variant, "players": n_players(variant), "options": options_to_dict(opts, variant),
            "observation": {"version": OBS_VERSION, "shape": list(enc.shape),
                            "blocks": {name: [sl.start, sl.stop] for name, sl in enc.slices.items()}},
            "oracle": None, "source": source,
            "fields": {"obs": "float32 [C, 34]", "mask": "bool [111]", **{k: np.dtype(v).name for k, v in FIELDS.items()}}}
    if oracle:
        o = OracleEncoder(variant, opts)
        meta["oracle"] = {"version": ORACLE_VERSION, "shape": [o.shape[0] - enc.shape[0], o.shape[1]],
                          "note": "the rows the oracle encoding adds after the v1 rows (oracle_obs = obs + these)"}
    return meta


def write_from_replays(out: str | Path, files: Sequence[str | Path], *, oracle: bool = False,
                       shard_size: int = 16384) -> dict:
    """Re-simulate the hands of ``mjenv-replay-v1`` files and write their decisions (one variant and rule set
    for the whole dataset; a hand of other rules is an error naming its file).  ``wall`` is the header's
    ``table_id`` (the hand's index when it has none), ``agent`` the index of the header's agent name in
    ``meta.source.agents``."""
    from mjenv.engine.core import Engine
    from mjenv.replay import ReplayError, deal_header, read_replay

    hands = []
    for f in files:
        try:
            hands += read_replay(f)
        except (OSError, ReplayError) as exc:
            raise DatasetError(f"--from-replays {f}: {exc}") from None
    if not hands:
        raise DatasetError("--from-replays: no hands in the files given")
    h0 = hands[0].header
    opts = Engine(h0["variant"], 1, options=dict(h0["options"])).opts
    names: list[str] = []
    source = {"kind": "replays", "files": [str(f) for f in files], "agents": names}
    rec = open_writer(out, shard_size, h0["variant"], opts, oracle, source)
    for k, rep in enumerate(hands):
        h = rep.header
        if h["variant"] != h0["variant"] or h["options"] != h0["options"]:
            raise DatasetError(f"--from-replays {rep.path}: its rules differ from {hands[0].path}'s; one rule set per dataset")
        eng = deal_header(h)
        agent_names = list(h.get("agents") or [])
        agent_idx = []
        for s in range(eng.n):
            name = agent_names[s] if s < len(agent_names) else "unknown"
            if name not in names:
                names.append(name)
            agent_idx.append(names.index(name))
        wall = h.get("table_id", k)
        wall = wall if isinstance(wall, int) else k
        for step, a in enumerate(rep.actions):
            actor, act = int(eng.state.actor[0]), int(a["action"])
            if eng.done[0] or int(a["seat"]) != actor or not (0 <= act < N_ACTIONS) or not eng.mask[0, act]:
                raise DatasetError(f"--from-replays {rep.path}: hand {k + 1} does not replay (mjenv replay --verify says why)")
            rec.on_step(eng, np.array([0]), np.array([act]), np.array([k]), np.array([step]), np.array([agent_idx[actor]]))
            eng.step(np.array([act]))
        if not eng.done[0]:
            raise DatasetError(f"--from-replays {rep.path}: hand {k + 1} stops before its end")
        rec.on_record(SimpleNamespace(game=k, wall=wall, deltas=[float(x) for x in eng.results[0]["deltas"]]))
    return rec.finish({"hands": len(hands)})


# ------------------------------------------------------------------------------------------ reading


class DatasetReader:
    """A ``mjenv-dataset-v1`` folder: its meta and its shards as numpy arrays."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        path = self.folder / "meta.json"
        try:
            self.meta = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DatasetError(f"{path}: missing (not a dataset folder, or one whose writing did not finish)") from None
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{path}: cannot read it ({exc})") from None
        if self.meta.get("format") != FORMAT:
            raise DatasetError(f"{path}: format {self.meta.get('format')!r}, this reader reads {FORMAT}")
        self.sizes = [int(s["decisions"]) for s in self.meta["shards"]]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @property
    def has_oracle(self) -> bool:
        """Whether the shards hold the oracle rows."""
        return self.meta.get("oracle") is not None

    def raw(self, i: int) -> dict[str, np.ndarray]:
        """Shard ``i``'s stored (packed) arrays."""
        path = self.folder / self.meta["shards"][i]["file"]
        try:
            with np.load(path) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{path}: cannot read it ({exc})") from None

    def shard(self, i: int, oracle: bool = False) -> dict[str, np.ndarray]:
        """Shard ``i`` unpacked: ``obs float32 [N, C, 34]``, ``mask bool [N, 111]``, ``action int64`` and the other
        fields; ``oracle_obs`` (v1 rows then the oracle rows) with ``oracle``."""
        return unpack(self.raw(i), oracle=oracle)


def unpack(d: dict[str, np.ndarray], index: np.ndarray | slice = slice(None), oracle: bool = False) -> dict[str, np.ndarray]:
    """Decisions ``index`` of one shard's packed arrays, unpacked (see :meth:`DatasetReader.shard`)."""
    out = {"obs": unpack_planes(d, "obs", index),
           "mask": np.unpackbits(d["mask_bits"][index], axis=1, count=N_ACTIONS).astype(bool)}
    for key in FIELDS:
        out[key] = d[key][index].astype(np.int64 if np.issubdtype(d[key].dtype, np.integer) else np.float32)
    if oracle:
        if "oracle_shape" not in d:
            raise DatasetError("this dataset has no oracle rows (write it with --oracle)")
        out["oracle_obs"] = np.concatenate([out["obs"], unpack_planes(d, "oracle", index)], axis=1)
    return out


def torch_dataset(folder: str | Path, *, oracle: bool = False):
    """A map-style ``torch.utils.data.Dataset`` over every decision of a dataset folder.

    Item ``i`` is a dict of tensors: ``obs float32 [C, 34]``, ``mask bool [111]``, ``action``, ``reward``,
    ``ret``, ``seat``, ``wall``, ``hand``, ``step``, ``agent`` (and ``oracle_obs`` with ``oracle``).  The shards
    stay packed in memory (about 0.9 KB per decision) and are unpacked per item, or per batch through
    ``__getitems__`` (what ``DataLoader`` calls with a batch sampler in torch >= 2.1)."""
    import torch

    reader = DatasetReader(folder)
    if oracle and not reader.has_oracle:
        raise DatasetError(f"{folder}: this dataset has no oracle rows (write it with --oracle)")

    class DecisionDataset(torch.utils.data.Dataset):
        """Decisions of one ``mjenv-dataset-v1`` folder (see :func:`torch_dataset`)."""

        def __init__(self):
            self.reader = reader
            self.meta = reader.meta
            self.shards = [reader.raw(i) for i in range(len(reader.sizes))]

        def __len__(self) -> int:
            return len(reader)

        def _fetch(self, idx: np.ndarray) -> dict:
            idx = np.asarray(idx, dtype=np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= len(reader)):
                raise IndexError(f"decision index out of range 0..{len(reader) - 1}")
            which = np.searchsorted(reader.offsets, idx, side="right") - 1
            parts, order = [], []
            for s in np.unique(which):
                sel = np.flatnonzero(which == s)
                parts.append(unpack(self.shards[s], idx[sel] - reader.offsets[s], oracle=oracle))
                order.append(sel)
            inv = np.argsort(np.concatenate(order))
            return {k: torch.from_numpy(np.concatenate([p[k] for p in parts])[inv]) for k in parts[0]}

        def __getitem__(self, i: int) -> dict:
            return {k: v[0] for k, v in self._fetch(np.array([int(i)])).items()}

        def __getitems__(self, indices) -> list[dict]:
            batch = self._fetch(np.asarray(indices))
            return [{k: v[j] for k, v in batch.items()} for j in range(len(indices))]

    return DecisionDataset()


# ------------------------------------------------------------------------------------------ command line


def iter_batches(folder: str | Path, batch_size: int, *, seed: int = 0, oracle: bool = False) -> Iterable[dict]:
    """Shuffled minibatches of numpy arrays over a whole dataset: shards in a random order, decisions shuffled
    within each shard (one shard unpacked at a time, so memory stays at one shard)."""
    reader = DatasetReader(folder)
    rng = np.random.default_rng(seed)
    for s in rng.permutation(len(reader.sizes)):
        d = reader.shard(int(s), oracle=oracle)
        perm = rng.permutation(len(d["action"]))
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            yield {k: v[idx] for k, v in d.items()}
