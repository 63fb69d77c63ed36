"""The compact observation ``mjenv-obs-v2``: the information of ``mjenv-obs-v1`` in a seventh of its bytes.

An ``mjenv-obs-v1`` observation is ``float32 [C, 34]`` (13.6 KB for Kawuxing-3p), though most of its rows are 0/1
planes, thermometers or "scalar" rows holding one value 34 times.  ``mjenv-obs-v2`` keeps the same rows in
one ``uint8 [N]`` byte string per observation (docs/observation.md gives both layouts):

* **planes** — bytes ``0 .. 34·P``: ``uint8 [P, 34]``, one plane per v1 tile row of small integers (one-hots,
  meld counts, kinds, winds, kong tiles, 大吊车, the oracle's wall) and one per **thermometer** (own hand, each
  seat's discards and face-up tiles, the oracle's hands): the count, whose v1 row ``i`` is ``count > i``.
  ``P`` is padded to an even number, so the values start 4-byte aligned;
* **values** — bytes ``34·P .. N``: ``float32 [F]`` (little-endian), one per v1 scalar row and 34 per v1 row of
  arbitrary floats (each seat's discard recency, the options rows).

Where each v1 row is kept is the **row map** (:attr:`CompactEncoder.rmap`, ``int64 [C, 3]``: kind, index,
thermometer level), built from the v1 block list, so decoding is exact: :meth:`CompactEncoder.decode` (numpy)
and :func:`torch_decoder` (a ``torch.nn.Module``, for decoding on the device a batch came to) give the v1 array
bit for bit (tests/test_observation_v2.py checks it on random play of every variant, oracle included).  The
encoder writes v2 directly with the same compiled loop as v1 (:func:`mjenv.encoding.observation._make_encode_rows`:
one source, two versions); :meth:`CompactEncoder.pack` turns v1 arrays already made into v2.

v1 stays the default everywhere (checkpoints record the version they were trained on); the envs take
``obs_version="mjenv-obs-v2"`` (:data:`OBS_V2_VERSION`) and policies decode v2 input on the fly.
``mjenv-oracle-v2`` is the oracle encoding kept the same way.
"""

from __future__ import annotations

import numpy as np

from mjenv.encoding.observation import (
    _NO_OUT,
    _NO_STATIC,
    _NO_VALUES,
    _RK_FLOATS,
    _RK_PLANE,
    _RK_SCALAR,
    _RK_THERMO,
    OBS_VERSION,
    ORACLE_VERSION,
    ObservationEncoder,
    OracleEncoder,
)

OBS_V2_VERSION = "mjenv-obs-v2"
ORACLE_V2_VERSION = "mjenv-oracle-v2"
VERSIONS = (OBS_VERSION, OBS_V2_VERSION, ORACLE_VERSION, ORACLE_V2_VERSION)
"""Every observation version string :func:`encoder_class` knows."""

# How each v1 block is kept: a kind for every row, or per seat a repeating pattern (the seat blocks).
_T4 = (_RK_THERMO,) * 4
_BLOCK_KINDS = {
    "hand": _T4,
    "drawn": (_RK_PLANE,),
    "kinds": (_RK_PLANE,),
    "melds": (_RK_PLANE,) * 5,
    "discards": _T4 + (_RK_FLOATS,),
    "reveal": (_RK_SCALAR, _RK_SCALAR) + _T4 + (_RK_SCALAR,),
    "kong_chain": (_RK_SCALAR,),
    "wall": (_RK_SCALAR,),
    "kong_tiles": (_RK_PLANE,),
    "seats": (_RK_SCALAR,),
    "winds": (_RK_PLANE,),
    "phase": (_RK_SCALAR,),
    "lock": (_RK_SCALAR,),
    "dadiaoche": (_RK_PLANE,),
    "money": (_RK_SCALAR,),
    "bankroll": (_RK_SCALAR,),
    "options": (_RK_FLOATS,),
    "oracle_hands": _T4,
    "oracle_locks": (_RK_SCALAR,),
    "oracle_dadiaoche": (_RK_PLANE,),
    "oracle_wall": (_RK_PLANE,),
}


def _row_kinds(blocks) -> list[int]:
    """The kind of every v1 row of ``blocks`` (a block's pattern repeated over its rows)."""
    kinds: list[int] = []
    for blk in blocks:
        if blk.name == "claim":  # the tile under claim, then scalars
            kinds += [_RK_PLANE] + [_RK_SCALAR] * (blk.rows - 1)
            continue
        pattern = _BLOCK_KINDS.get(blk.name)
        if pattern is None:  # a new block must be given a v2 form, not silently dropped
            raise TypeError(f"block {blk.name!r}: no mjenv-obs-v2 form; add it to _BLOCK_KINDS")
        if blk.rows % len(pattern):
            raise TypeError(f"block {blk.name!r}: {blk.rows} rows do not repeat its v2 pattern of {len(pattern)}")
        kinds += list(pattern) * (blk.rows // len(pattern))
    return kinds


def row_map(blocks) -> tuple[np.ndarray, int, int]:
    """``(rmap int64 [C, 3], P, F)``: where each v1 row of ``blocks`` is kept (kind, plane or value index,
    thermometer level), the number of planes (even) and of float values."""
    kinds = _row_kinds(blocks)
    rmap = np.zeros((len(kinds), 3), np.int64)
    planes = values = 0
    r = 0
    while r < len(kinds):
        kind = kinds[r]
        if kind == _RK_THERMO:  # four rows, one plane
            for level in range(4):
                rmap[r + level] = (_RK_THERMO, planes, level)
            planes += 1
            r += 4
            continue
        if kind == _RK_PLANE:
            rmap[r] = (_RK_PLANE, planes, 0)
            planes += 1
        elif kind == _RK_SCALAR:
            rmap[r] = (_RK_SCALAR, values, 0)
            values += 1
        else:
            rmap[r] = (_RK_FLOATS, values, 0)
            values += 34
        r += 1
    return rmap, planes + planes % 2, values


class CompactEncoder(ObservationEncoder):
    """The ``mjenv-obs-v2`` encoder: :meth:`encode` returns ``uint8 [K, N]`` (see the module docstring).

    ``blocks`` and ``slices`` describe the v1 rows it keeps (``v1_shape`` = ``(C, 34)``); ``shape`` is ``(N,)``,
    ``low`` / ``high`` the byte bounds 0 / 255; ``rmap``, ``n_planes``, ``n_values`` and ``values_offset`` the
    layout.
    """

    version = OBS_V2_VERSION
    v1_version = OBS_VERSION
    compact = True
    dtype = np.dtype(np.uint8)

    def __init__(self, variant=None, opts=None, *, rules=None):
        super().__init__(variant, opts, rules=rules)
        self.v1_shape = self.shape
        self.v1_low, self.v1_high = self.low, self.high
        self.rmap, self.n_planes, self.n_values = row_map(self.blocks)
        self.values_offset = 34 * self.n_planes
        self.n_bytes = self.values_offset + 4 * self.n_values
        self.shape = (self.n_bytes,)
        self._final_shape = self.shape
        self.low = np.zeros(self.shape, np.uint8)
        self.high = np.full(self.shape, 255, np.uint8)
        static = self.pack(self._static[None])
        self.static_planes = self._planes(static)[0].copy()
        self.static_values = self._values(static)[0].copy()

    # ------------------------------------------------------------------ the two views of a byte array
    def _planes(self, x: np.ndarray) -> np.ndarray:
        """``uint8 [K, P, 34]``: the planes of the C-contiguous ``uint8 [K, N]`` array ``x`` (a view)."""
        return np.lib.stride_tricks.as_strided(
            x, (x.shape[0], self.n_planes, 34), (x.strides[0], 34, 1), writeable=x.flags.writeable
        )

    def _values(self, x: np.ndarray) -> np.ndarray:
        """``float32 [K, F]``: the values of the C-contiguous ``uint8 [K, N]`` array ``x`` (a view)."""
        return x[:, self.values_offset :].view("<f4")

    def _front(self, dest: np.ndarray) -> tuple:
        """The encoding loop's first arguments for the C-contiguous byte array ``dest`` (v1's arrays unused)."""
        return (_NO_OUT, dest.reshape(dest.shape[0], 1, self.n_bytes), _NO_VALUES, self.rmap, _NO_STATIC,
                self.static_planes, self.static_values)  # fmt: skip

    # ------------------------------------------------------------------ conversions
    def pack(self, v1: np.ndarray) -> np.ndarray:
        """``uint8 [..., N]``: the v2 form of v1 observations ``float32 [..., C, 34]`` of this encoder's layout."""
        v1 = np.asarray(v1, np.float32)
        if v1.shape[-2:] != self.v1_shape:
            raise ValueError(f"v1 observations must end in {self.v1_shape}, got {v1.shape}")
        lead = v1.shape[:-2]
        x = v1.reshape((-1,) + self.v1_shape)
        out = np.zeros((x.shape[0], self.n_bytes), np.uint8)
        planes, values = self._planes(out), self._values(out)
        kind, src, level = self.rmap.T
        for r in range(len(kind)):
            if kind[r] == _RK_PLANE:
                planes[:, src[r]] = x[:, r].astype(np.uint8)
            elif kind[r] == _RK_THERMO:
                planes[:, src[r]] += (x[:, r] > 0).astype(np.uint8)
            elif kind[r] == _RK_SCALAR:
                values[:, src[r]] = x[:, r, 0]
            else:
                values[:, src[r] : src[r] + 34] = x[:, r]
        return out.reshape(lead + self.shape)

    def decode(self, x: np.ndarray) -> np.ndarray:
        """``float32 [..., C, 34]``: the v1 observations that v2 byte arrays ``x`` (``uint8 [..., N]``) hold."""
        x = np.asarray(x)
        if x.dtype != np.uint8 or x.shape[-1:] != self.shape:
            raise ValueError(f"v2 observations must be uint8 [..., {self.n_bytes}], got {x.dtype} {x.shape}")
        lead = x.shape[:-1]
        x = np.ascontiguousarray(x.reshape(-1, self.n_bytes))
        planes, values = self._planes(x), self._values(x)
        ix = _Indices.of(self)
        out = np.empty((x.shape[0],) + self.v1_shape, np.float32)
        out[:, ix.plane_rows] = planes[:, ix.plane_src]
        out[:, ix.thermo_rows] = planes[:, ix.thermo_src] > ix.thermo_level[:, None]
        out[:, ix.scalar_rows] = values[:, ix.scalar_src, None]
        out[:, ix.float_rows] = values[:, ix.float_src[:, None] + np.arange(34)]
        return out.reshape(lead + self.v1_shape)

    def block(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The v1 rows of block ``name`` of v2 observations ``obs`` (decoded: ``[..., rows, 34]``)."""
        return self.decode(obs)[..., self.slices[name], :]

    def describe(self) -> str:
        """Markdown of the v1 rows kept and the v2 byte layout."""
        return (super().describe().replace(self.version, self.version + " (v1 rows)", 1)
                + f"\n\nbytes: {self.n_planes} planes x 34 uint8, then {self.n_values} float32 values at byte "
                  f"{self.values_offset}: {self.n_bytes} bytes (v1: {4 * 34 * self.v1_shape[0]})")  # fmt: skip


class CompactOracleEncoder(CompactEncoder, OracleEncoder):
    """``mjenv-oracle-v2``: the ``mjenv-oracle-v1`` rows kept as :class:`CompactEncoder` keeps v1's."""

    version = ORACLE_V2_VERSION
    v1_version = ORACLE_VERSION


class _Indices:
    """The row map split by kind, as index arrays for the decoders (one per encoder)."""

    def __init__(self, enc: CompactEncoder):
        kind, src, level = enc.rmap.T
        self.plane_rows = np.flatnonzero(kind == _RK_PLANE)
        self.plane_src = src[self.plane_rows]
        self.thermo_rows = np.flatnonzero(kind == _RK_THERMO)
        self.thermo_src = src[self.thermo_rows]
        self.thermo_level = level[self.thermo_rows]
        self.scalar_rows = np.flatnonzero(kind == _RK_SCALAR)
        self.scalar_src = src[self.scalar_rows]
        self.float_rows = np.flatnonzero(kind == _RK_FLOATS)
        self.float_src = src[self.float_rows]

    @staticmethod
    def of(enc: CompactEncoder) -> "_Indices":
        ix = enc.__dict__.get("_indices")
        if ix is None:
            ix = enc.__dict__["_indices"] = _Indices(enc)
        return ix


def torch_decoder(encoder: CompactEncoder):
    """A ``torch.nn.Module`` mapping v2 bytes ``uint8 [..., N]`` (any device) to the v1 ``float32 [..., C, 34]``
    bit for bit, for decoding batches on the device they were sent to (its index tensors move with ``.to()``)."""
    import torch

    ix = _Indices.of(encoder)

    class V2ToV1(torch.nn.Module):
        """v2 bytes → v1 planes (:func:`mjenv.encoding.compact.torch_decoder`)."""

        def __init__(self):
            super().__init__()
            self.n_planes, self.values_offset, self.n_bytes = encoder.n_planes, encoder.values_offset, encoder.n_bytes
            self.v1_shape = tuple(encoder.v1_shape)
            for name in ("plane_rows", "plane_src", "thermo_rows", "thermo_src", "scalar_rows", "scalar_src",
                         "float_rows"):  # fmt: skip
                self.register_buffer(name, torch.as_tensor(getattr(ix, name)), persistent=False)
            self.register_buffer("thermo_level", torch.as_tensor(ix.thermo_level, dtype=torch.uint8)[:, None], persistent=False)
            cols = torch.as_tensor(ix.float_src)[:, None] + torch.arange(34)
            self.register_buffer("float_cols", cols, persistent=False)

        def forward(self, x):
            """``float32 [..., C, 34]`` from ``uint8 [..., N]``."""
            if x.dtype != torch.uint8 or x.shape[-1] != self.n_bytes:
                raise ValueError(f"v2 observations must be uint8 [..., {self.n_bytes}], got {x.dtype} {tuple(x.shape)}")
            lead = x.shape[:-1]
            x = x.reshape(-1, self.n_bytes).contiguous()
            planes = x[:, : self.values_offset].view(-1, self.n_planes, 34)
            values = x[:, self.values_offset :].view(torch.float32)
            out = torch.empty((x.shape[0],) + self.v1_shape, dtype=torch.float32, device=x.device)
            out[:, self.plane_rows] = planes[:, self.plane_src].float()
            out[:, self.thermo_rows] = (planes[:, self.thermo_src] > self.thermo_level).float()
            out[:, self.scalar_rows] = values[:, self.scalar_src, None].expand(-1, -1, 34)
            out[:, self.float_rows] = values[:, self.float_cols]
            return out.reshape(lead + self.v1_shape)

    return V2ToV1()


def encoder_class(version: str) -> type[ObservationEncoder]:
    """The encoder class of observation version ``version`` (one of :data:`VERSIONS`)."""
    classes = {OBS_VERSION: ObservationEncoder, OBS_V2_VERSION: CompactEncoder, ORACLE_VERSION: OracleEncoder,
               ORACLE_V2_VERSION: CompactOracleEncoder}  # fmt: skip
    cls = classes.get(version)
    if cls is None:
        raise ValueError(f"unknown observation version {version!r}; known: {', '.join(VERSIONS)}")
    return cls


def encoder_for(engine, oracle: bool = False, obs_version: str = OBS_VERSION) -> ObservationEncoder:
    """The (cached) encoder of ``engine``'s variant and options: ``obs_version`` ``mjenv-obs-v1`` (the default) or
    ``mjenv-obs-v2``, its oracle form with ``oracle`` (what the envs' ``obs_version`` / ``oracle`` options pick)."""
    if obs_version not in (OBS_VERSION, OBS_V2_VERSION):
        raise ValueError(f"obs_version must be {OBS_VERSION!r} or {OBS_V2_VERSION!r}, got {obs_version!r}")
    compact = obs_version == OBS_V2_VERSION
    version = (ORACLE_V2_VERSION if compact else ORACLE_VERSION) if oracle else obs_version
    return encoder_class(version).for_engine(engine)
