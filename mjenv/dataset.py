"""Decision datasets for offline learning: the ``mjenv-dataset-v1`` format, and reading it back
(:class:`DatasetReader`, :func:`torch_dataset`, :func:`iter_batches`).

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

Writing (``mjenv dataset``: agents playing seeded walls, or replay files re-simulated) is
:mod:`mjenv.tools.dataset`, a floor above: it plays agents, which this module, read by the agents' training, must
not import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

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
