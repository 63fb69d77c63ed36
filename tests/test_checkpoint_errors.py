"""The checkpoint loader: every bad file or payload is a CheckpointError that names the file and the problem,
and never advises loading with code execution."""

from __future__ import annotations

import pytest

from agents import make_agent

torch = pytest.importorskip("torch")

from agents.players.policy import (  # noqa: E402
    REQUIRED_KEYS,
    CheckpointError,
    PolicyAgent,
    check_payload,
    checkpoint_payload,
    load_checkpoint,
    make_head,
    make_trunk,
    save_checkpoint,
    stamp,
    tensor_checksum,
)
from mjenv.encoding.observation import ObservationEncoder  # noqa: E402
from mjenv.rules.options import load_rules  # noqa: E402


@pytest.fixture(scope="module")
def payload():
    opts = load_rules("kawuxing3")
    shape = ObservationEncoder("kawuxing3", opts).shape
    return checkpoint_payload(make_trunk(shape, 4, 8), make_head(8), variant="kawuxing3", options=opts,
                              obs_shape=shape, arch={"channels": 4, "hidden": 8})


def test_a_text_file_named_pt_is_refused_without_unsafe_advice(tmp_path):
    path = tmp_path / "notes.pt"
    path.write_text("hello, I am a text file\n", encoding="utf-8")
    with pytest.raises(CheckpointError) as exc:
        load_checkpoint(path)
    message = str(exc.value)
    assert str(path) in message and "not a readable mjenv-policy-v1 checkpoint" in message
    assert "weights_only" not in message and "\n" not in message


def test_a_missing_file_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="checkpoint file not found"):
        load_checkpoint(tmp_path / "absent.pt")


@pytest.mark.parametrize("key", REQUIRED_KEYS[1:])
def test_a_missing_key_is_named(tmp_path, payload, key):
    path = save_checkpoint(tmp_path / "part.pt", {k: v for k, v in payload.items() if k != key})
    with pytest.raises(CheckpointError, match=f"missing {key}$"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match=f"missing {key}$"):
        PolicyAgent({k: v for k, v in payload.items() if k != key})


def test_other_payloads_name_what_is_wrong(tmp_path, payload):
    with pytest.raises(CheckpointError, match="a list, not a dict"):
        load_checkpoint(save_checkpoint(tmp_path / "list.pt", [1, 2, 3]))
    with pytest.raises(CheckpointError, match="format 'other'"):
        check_payload(dict(payload, format="other"))
    with pytest.raises(CheckpointError, match="obs_shape"):
        check_payload(dict(payload, obs_shape=[100]))
    with pytest.raises(CheckpointError, match="arch"):
        check_payload(dict(payload, arch={"channels": 4}))
    with pytest.raises(CheckpointError, match="trunk is not a dict of tensors"):
        check_payload(dict(payload, trunk=[1]))


def test_weights_of_another_architecture_are_named(payload):
    with pytest.raises(CheckpointError, match=r"the trunk weights do not fit arch"):
        PolicyAgent(dict(payload, arch={"channels": 5, "hidden": 8}))
    with pytest.raises(CheckpointError, match=r"the head weights do not fit arch"):
        PolicyAgent(stamp(dict(payload, head={})))


def test_a_good_checkpoint_still_plays(tmp_path, payload):
    path = save_checkpoint(tmp_path / "ok.pt", payload)
    assert load_checkpoint(path)["variant"] == "kawuxing3"
    assert make_agent(str(path)).name == "ok"


def _altered(payload, part, name, edit):
    """A copy of ``payload`` whose tensor ``part.name`` went through ``edit`` (in place), checksum kept."""
    out = dict(payload, **{p: {k: v.clone() for k, v in payload[p].items()} for p in ("trunk", "head")})
    edit(out[part][name])
    return out


def test_a_flipped_bit_in_a_tensor_is_refused_naming_the_file(tmp_path, payload):
    name = next(iter(payload["trunk"]))

    def flip(t):
        t.reshape(-1).view(torch.int32)[3] ^= 1 << 7  # one bit of the fourth weight

    path = save_checkpoint(tmp_path / "flipped.pt", _altered(payload, "trunk", name, flip))
    with pytest.raises(CheckpointError, match=f"^{path}: damaged checkpoint: its tensors do not match their checksum"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="do not match their checksum"):
        make_agent(str(path))


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_non_finite_weight_is_refused_even_with_a_matching_checksum(tmp_path, payload, value):
    def poison(t):
        t.reshape(-1)[0] = value

    bad = stamp(_altered(payload, "head", "bias", poison))  # the checksum matches the poisoned tensors
    path = save_checkpoint(tmp_path / "nan.pt", bad)
    with pytest.raises(CheckpointError, match=f"^{path}: damaged checkpoint: tensor head.bias holds NaN or infinite"):
        load_checkpoint(path)


def test_a_checkpoint_without_a_checksum_is_refused_with_the_way_to_stamp_it(tmp_path, payload):
    path = save_checkpoint(tmp_path / "old.pt", {k: v for k, v in payload.items() if k != "checksum"})
    with pytest.raises(CheckpointError, match=f"^{path}: carries no tensor checksum .*python -m agents.players.policy stamp"):
        load_checkpoint(path)


def test_the_checksum_covers_names_shapes_and_values_only(payload):
    copy = {p: {k: v.clone() for k, v in payload[p].items()} for p in ("trunk", "head")}
    assert tensor_checksum(copy) == payload["checksum"]
    copy["head"]["bias"] = copy["head"]["bias"].reshape(1, -1)
    assert tensor_checksum(copy) != payload["checksum"]


# every variant's shipped default checkpoint (docs/training.md, "The shipped bots"); a new one must be listed here
SHIPPED_DEFAULTS = ["kawuxing3-default.pt", "kawuxing4-default.pt", "diedaohu-default.pt", "yangzhou-default.pt",
                    "yangzhou_new-default.pt", "liuwei-default.pt", "gejiu-default.pt"]


def test_every_shipped_default_checkpoint_is_listed():
    from agents import shipped_checkpoints

    assert sorted(p.name for p in shipped_checkpoints() if p.name.endswith("-default.pt")) == sorted(SHIPPED_DEFAULTS)


@pytest.mark.parametrize("name", SHIPPED_DEFAULTS)
def test_the_shipped_checkpoints_are_stamped_and_intact_and_play_their_variant(name):
    """Each shipped ``<variant>-default.pt`` loads (checksum, advisor) and plays legal moves in its variant's engine.
    The variant's default bot (:func:`agents.default_checkpoint`: this file, or in Kawuxing the network-only
    ``kawuxing3-network-qfit3.pt``, docs/experiments/network-only.md) heads ``shipped_checkpoints(V)``, this file
    follows it, and the default bot is what ``evaluate.py`` with no ``--agents`` plays."""
    import numpy as np

    from agents import CHECKPOINT_DIR, shipped_checkpoints
    from mjenv.encoding.observation import encoder_for
    from mjenv.engine.core import Engine

    variant = name.removesuffix("-default.pt")
    assert CHECKPOINT_DIR / name in shipped_checkpoints()
    import evaluate
    from agents import default_checkpoint

    bot, shipped = default_checkpoint(variant), shipped_checkpoints(variant)
    assert shipped[0] == bot and shipped[0 if bot.name == name else 1] == CHECKPOINT_DIR / name
    assert evaluate.default_agents(variant, [(None, None)]) == ["random", "heuristic", str(bot)]
    if variant == "kawuxing3":
        assert bot.name == "kawuxing3-network-qfit3.pt" and load_checkpoint(bot)["network_only"] is True
        assert make_agent(f"network:{bot}", variant).name == "kawuxing3-network-qfit3"
    else:
        assert bot.name == name
    ck = load_checkpoint(CHECKPOINT_DIR / name)
    assert ck["variant"] == variant
    assert ck["checksum"] == tensor_checksum(ck)
    assert ck["advisor"]["agent"] == "heuristic-flush" and ck["advisor"]["fingerprint"].startswith("sha256:")
    agent = make_agent(str(CHECKPOINT_DIR / name), variant)
    eng = Engine(variant, 2)
    enc = encoder_for(eng)
    eng.reset(seed=5)
    moves = 0
    for _ in range(30):
        live = np.flatnonzero(~eng.done)
        if not len(live):
            break
        acts = np.zeros(eng.batch_size, np.int64)
        acts[live] = agent.act(enc.encode(eng.state, eng.state.actor[live].astype(np.int64), live, engine=eng),
                               eng.mask[live])
        assert eng.mask[live, acts[live]].all()
        moves += len(live)
        eng.step(acts)
    assert moves >= 30


def test_an_advised_checkpoint_refuses_to_load_once_its_advisor_plays_differently(tmp_path, monkeypatch):
    """The network of an advised checkpoint reads heuristic-flush's move; when heuristic-flush changes (here: its
    danger estimate), the fingerprint changes and the checkpoint is refused instead of playing on other inputs."""
    import agents.players.advice as advice
    from agents.players.heuristic import HeuristicAgent

    opts = load_rules("kawuxing3")
    shape = ObservationEncoder("kawuxing3", opts).shape
    shape = (shape[0] + advice.ROWS, shape[1])
    ck = checkpoint_payload(make_trunk(shape, 4, 8, advice_row=shape[0] - advice.ROWS), make_head(8, advice=True),
                            variant="kawuxing3", options=opts, obs_shape=shape, arch={"channels": 4, "hidden": 8, "advice": 1},
                            features="heuristic-advice-v2")
    assert ck["advisor"] == {"agent": "heuristic-flush",
                             "fingerprint": advice.advisor_fingerprint("kawuxing3", opts, "heuristic-advice-v2")}
    path = save_checkpoint(tmp_path / "advised.pt", ck)
    assert load_checkpoint(path)["features"] == "heuristic-advice-v2"

    danger = HeuristicAgent.danger
    monkeypatch.setattr(HeuristicAgent, "danger", lambda self, d, rows: danger(self, d, rows) * 0)
    advice._fingerprint.cache_clear()
    try:
        with pytest.raises(CheckpointError, match=f"^{path}: its network reads heuristic-flush's advice, and "
                                                  "heuristic-flush has changed since the checkpoint was trained"):
            load_checkpoint(path)
        no_record = save_checkpoint(tmp_path / "unrecorded.pt", {k: v for k, v in ck.items() if k != "advisor"})
        with pytest.raises(CheckpointError, match="records no version of heuristic-flush"):
            load_checkpoint(no_record)
    finally:
        advice._fingerprint.cache_clear()

