"""The checkpoint loader: every bad file or payload is a CheckpointError that names the file and the problem,
and never advises loading with code execution."""

from __future__ import annotations

import pytest

from agents import make_agent

torch = pytest.importorskip("torch")

from agents.policy import (  # noqa: E402
    REQUIRED_KEYS,
    CheckpointError,
    PolicyAgent,
    check_payload,
    checkpoint_payload,
    load_checkpoint,
    make_head,
    make_trunk,
    save_checkpoint,
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
        PolicyAgent(dict(payload, head={}))


def test_a_good_checkpoint_still_plays(tmp_path, payload):
    path = save_checkpoint(tmp_path / "ok.pt", payload)
    assert load_checkpoint(path)["variant"] == "kawuxing3"
    assert make_agent(str(path)).name == "ok"
