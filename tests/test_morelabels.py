"""The default Kawuxing policy since session 17 (docs/experiments/departure-head.md, "More labels"):
``kawuxing3-default.pt`` is ``python train.py --config morelabels``, the network of ``kawuxing3-long.pt`` (the default
before it, ``--config long``) with that head averaged with one fitted on 455,000 labels, tau 0."""

import pytest

torch = pytest.importorskip("torch")

LONG = "agents/checkpoints/kawuxing3-long.pt"
DEFAULT = "agents/checkpoints/kawuxing3-default.pt"


def test_the_morelabels_config_is_longs_with_more_labels_merged_at_tau_0():
    import train
    from agents.script_args import parse_args

    long, _ = parse_args(train.Args, ["--config", "long"], config_dir=train.CONFIG_DIR)
    more, _ = parse_args(train.Args, ["--config", "morelabels"], config_dir=train.CONFIG_DIR)
    assert (more.departure_seed, more.departure_decisions, more.departure_holdout, more.departure_tau) == \
        (7500, 455_000, 0.0, 0.0)
    assert more.departure_merge == LONG and more.seed == long.seed
    # the network is long's as it ships, not rebuilt by a clone stage (whose torch arithmetic is machine-dependent)
    assert (more.init_checkpoint, more.bc_rounds) == (LONG, 0)
    changed = ("departure_seed", "departure_decisions", "departure_holdout", "departure_tau", "departure_merge",
               "exp_name", "init_checkpoint", "bc_rounds")
    assert all(getattr(more, k) == getattr(long, k) for k in vars(long) if k not in changed)
    train.check_args(more)


def test_the_default_is_the_long_network_with_the_averaged_head():
    from agents.players.policy import PolicyAgent, load_checkpoint

    ck, long = load_checkpoint(DEFAULT), load_checkpoint(LONG)
    assert ck["checksum"] == "sha256:f6c6338b1536e80c4f1a8aa2ab170a81b0447d7a9b1c76f534d814852451459b"
    assert long["checksum"] == "sha256:b1125bec3e10a163cdc95a7dd7f761b768f6360a9025478f32a2cabf8dbe0832"
    assert all(torch.equal(ck["trunk"][k], v) for k, v in long["trunk"].items())
    dep = ck["departures"]
    assert dep["arch"] == {"members": 10, "hidden": 64} and dep["tau"] == 0.0 and long["departures"]["tau"] == 0.1
    for key, value in long["departures"]["state"].items():  # long's members come first, but for the input scale
        if key.startswith("members.") and not key.split(".")[2] == "0":
            assert torch.equal(dep["state"][key], value), key
    assert PolicyAgent(DEFAULT, "kawuxing3").departures.tau == 0.0
