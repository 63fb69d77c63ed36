"""Decision datasets (mjenv/dataset.py, docs/dataset.md): every stored decision replays on the engine to the same
observation, mask and money; replay files give the same rows as live play; the torch Dataset and
agents.training.clone.clone_from_dataset read them; bad folders are one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.tournament.arena import play_duplicate
from mjenv.cli import main as cli_main
from mjenv.dataset import DatasetError, DatasetReader, pack_planes, unpack_planes
from agents.tournament.recording import write_from_play
from mjenv.dataset import write_from_replays
from mjenv.encoding.observation import encoder_for
from mjenv.engine.core import Engine


def test_packing_is_lossless_for_every_kind_of_row():
    rng = np.random.default_rng(0)
    x = rng.random((40, 6, 34)).astype(np.float32)
    x[:, 1] = x[:, 1, :1]  # scalar rows
    x[:, 2] = rng.random((40, 34)) < 0.3  # 0/1 rows
    x[:, 3] = 0.0
    packed = pack_planes(x)
    assert list(packed["obs_scalar_rows"]) == [1, 3] and list(packed["obs_bit_rows"]) == [2]
    assert np.array_equal(unpack_planes(packed), x)
    assert np.array_equal(unpack_planes(packed, index=np.array([5, 2])), x[[5, 2]])


def test_every_decision_replays_to_the_same_observation_mask_and_money(tmp_path):
    meta = write_from_play(tmp_path / "d", ["heuristic", "random"], walls=3, seed=7, first_wall=10, oracle=True,
                           shard_size=50)
    assert meta["hands"] == 3 and len(meta["shards"]) == -(-meta["decisions"] // 50)
    reader = DatasetReader(tmp_path / "d")
    assert len(reader) == meta["decisions"] and meta["source"]["agents"] == ["heuristic", "random"]
    rows = {}
    for i in range(len(reader.sizes)):
        for k, v in reader.shard(i, oracle=True).items():
            rows.setdefault(k, []).append(v)
    d = {k: np.concatenate(v) for k, v in rows.items()}
    assert sorted(set(d["wall"])) == [10, 11, 12]
    eng = Engine("kawuxing3", 1)
    enc, oenc = encoder_for(eng), encoder_for(eng, oracle=True)
    for wall in (10, 11, 12):
        sel = np.flatnonzero(d["wall"] == wall)
        sel = sel[np.argsort(d["step"][sel])]
        assert list(d["step"][sel]) == list(range(len(sel)))
        eng.reset(seed=7, table_ids=[wall], dealer=np.array([wall % 3]))
        for i in sel:
            seat = int(eng.state.actor[0])
            assert d["seat"][i] == seat and d["agent"][i] == (1 if seat == 1 else 0)  # seats A B A
            assert np.array_equal(d["obs"][i], enc.encode(eng.state, np.array([seat]), np.array([0]))[0])
            assert np.array_equal(d["oracle_obs"][i], oenc.encode(eng.state, np.array([seat]), np.array([0]))[0])
            assert np.array_equal(d["mask"][i], eng.mask[0]) and eng.mask[0, d["action"][i]]
            eng.step(np.array([d["action"][i]]))
        assert eng.done[0]
        deltas = eng.results[0]["deltas"]
        assert np.allclose(d["ret"][sel], [deltas[s] for s in d["seat"][sel]])
        for s in range(3):  # the money arrives once, at the seat's last decision
            mine = sel[d["seat"][sel] == s]
            assert d["reward"][mine].sum() == pytest.approx(deltas[s]) and (d["reward"][mine[:-1]] == 0).all()


def test_replay_files_give_the_same_rows_as_live_play(tmp_path):
    agents = [make_agent("heuristic"), make_agent("random", seed=3 * 1000 + 1)]  # the seeds write_from_play gives
    play_duplicate(agents, walls=2, seed=3, seat_plan=[(0, 1, 0)], replay_dir=tmp_path / "rp", n_replays=2)
    write_from_play(tmp_path / "live", ["heuristic", "random"], walls=2, seed=3)
    write_from_replays(tmp_path / "rep", sorted((tmp_path / "rp").glob("*.jsonl")))
    a, b = DatasetReader(tmp_path / "live").shard(0), DatasetReader(tmp_path / "rep").shard(0)
    for key in ("obs", "mask", "action", "seat", "wall", "step", "ret", "reward"):
        oa = np.lexsort((a["step"], a["wall"]))
        ob = np.lexsort((b["step"], b["wall"]))
        assert np.array_equal(a[key][oa], b[key][ob]), key


def test_torch_dataset_and_cloning_from_a_dataset(tmp_path):
    torch = pytest.importorskip("torch")
    from agents.training.clone import clone_from_dataset
    from agents.players.policy import make_head, make_trunk
    from mjenv.dataset import torch_dataset

    write_from_play(tmp_path / "d", ["heuristic"], walls=8, seed=1, shard_size=64)
    ds = torch_dataset(tmp_path / "d")
    item = ds[5]
    assert item["obs"].shape == (100, 34) and item["mask"].dtype == torch.bool and bool(item["mask"][item["action"]])
    loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True)
    batch = next(iter(loader))
    assert batch["obs"].shape == (64, 100, 34) and batch["mask"][torch.arange(64), batch["action"]].all()
    torch.manual_seed(0)
    trunk, head = make_trunk((100, 34), 8, 32), make_head(32)
    report = clone_from_dataset(lambda x: (head(trunk(x)), None), list(trunk.parameters()) + list(head.parameters()),
                                tmp_path / "d", epochs=3, batch_size=32, lr=3e-3)
    assert report["decisions"] == len(ds)
    assert report["policy_loss"][-1] < report["policy_loss"][0]


def test_the_command_line_writes_once_and_refuses_bad_folders(tmp_path, capsys):
    out = tmp_path / "ds"
    assert cli_main(["dataset", "--agents", "random", "--walls", "2", "--out", str(out)]) == 0
    assert "decisions of 2 hands" in capsys.readouterr().out
    assert cli_main(["dataset", "--agents", "random", "--walls", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and "not an empty folder" in err[0]
    assert cli_main(["dataset", "--agents", "wizard", "--walls", "2", "--out", str(tmp_path / "x")]) == 2
    assert "--agents: unknown agent 'wizard'" in capsys.readouterr().err
    (tmp_path / "half").mkdir()
    with pytest.raises(DatasetError, match="meta.json: missing"):
        DatasetReader(tmp_path / "half")


def test_each_decision_is_stored_with_its_own_observation_when_reused_slots_come_out_of_order(tmp_path):
    """Slots handed back by a written shard can come out of the free list as ``c, c+2, c+1, c+3``: spanning ``K``
    places but not in order.  Each decision's observation must land in its own slot (beside its mask and action),
    not in the next place of an in-place block."""
    from agents.players.base import resolve_options
    from mjenv.dataset import open_writer

    eng = Engine("kawuxing3", 4)
    eng.reset(seed=5)
    for _ in range(7):  # a few moves, so the four tables' observations differ
        eng.step(np.argmax(eng.mask, axis=1))
    w = open_writer(tmp_path / "d", 64, "kawuxing3", resolve_options("kawuxing3", None), False, {"kind": "test"}, tables=4)
    w.free = w.free[:-8] + [13, 11, 12, 10]  # taken from the end, reversed: slots 10, 12, 11, 13
    tables = np.arange(4)
    w.on_step(eng, tables, np.argmax(eng.mask, axis=1), np.arange(4), np.zeros(4, np.int64), np.zeros(4, np.int64))
    want = encoder_for(eng).encode(eng.state, eng.state.actor[tables].astype(np.int64), tables)
    assert len({want[t].tobytes() for t in tables}) == 4
    for t, slot in zip(tables, (10, 12, 11, 13)):
        assert np.array_equal(w.obs[slot], want[t]) and np.array_equal(w.mask[slot], eng.mask[t])
