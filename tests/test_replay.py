"""Replays: write / read / verify round trips for every variant and for later hands of a session, tamper and
truncation errors with line numbers, the CLI."""

from __future__ import annotations

import argparse
import io
import json

import numpy as np
import pytest

import mjenv
from mjenv.encoding import actions as A
from mjenv.engine.core import Engine
from mjenv.replay import FORMAT, ReplayError, read_replay, verify_replay, write_replay
from mjenv.tools.replay_command import add_replay_subcommand, replay_main
from mjenv.tiles import tile_unicode


# Random play that prefers kongs (own and on a discard), claims, wins and 亮倒 over discards and passes,
# so that replays contain kong money, kong-tile picks, chis and reveals.
_BONUS = np.where(np.arange(A.N_ACTIONS) >= A.LIANG, 1.5, 0.0)
_BONUS[A.KONG_SELF : A.KONG_SELF + 34] = 3.0
_BONUS[A.KONG_CLAIM] = 3.0
_BONUS[A.PASS] = 0.0


def _finish(eng: Engine, rng: np.random.Generator) -> Engine:
    while not eng.done.all():
        m = eng.mask
        eng.step((m * (rng.random(m.shape) + _BONUS)).argmax(1))
    return eng


def _play_batch(variant: str, batch: int, seed: int, **kw) -> Engine:
    """Kong-happy random play of one hand on every table."""
    eng = Engine(variant, batch, **kw)
    eng.reset(seed=seed)
    return _finish(eng, np.random.default_rng(seed))


@pytest.fixture(scope="module")
def played():
    return {v: _play_batch(v, 6, 3) for v in ("kawuxing3", "kawuxing4")}


def _cli(argv, inp=None):
    parser = argparse.ArgumentParser(prog="mjenv")
    add_replay_subcommand(parser.add_subparsers())
    args = parser.parse_args(argv)
    out = io.StringIO()
    code = replay_main(args, out=out, inp=inp)
    return code, out.getvalue()


@pytest.mark.parametrize("variant", ["kawuxing3", "kawuxing4"])
def test_engine_hands_round_trip_and_verify(tmp_path, played, variant):
    eng = played[variant]
    path = tmp_path / "batch.jsonl"
    for b in range(eng.batch_size):
        write_replay(path, eng, b, {"seed": 3, "table_id": b}, append=b > 0)
    hands = read_replay(path)
    assert len(hands) == eng.batch_size
    kongs = 0
    for b, h in enumerate(hands):
        assert h.header["format"] == FORMAT and h.header["table_id"] == b
        assert h.header["wall"] == eng.events[b][0]["wall"]
        assert h.events == json.loads(json.dumps(eng.events[b]))
        assert verify_replay(h) == eng.results[b]
        kongs += sum(e["type"] == "kong" for e in h.events)
    assert kongs > 0  # kong money was part of what got verified


@pytest.mark.parametrize("variant,preset,seed", [("kawuxing3", "barbaric", 9), ("gejiu", None, 3), ("yangzhou", None, 2)])
def test_derived_decisions_equal_the_ones_the_env_kept(tmp_path, variant, preset, seed):
    env = mjenv.raw_env(variant, preset=preset)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not env.engine.done[0]:
        m = env.observe(env.agent_selection)["action_mask"]
        env.step(int((m * (rng.random(m.shape) + _BONUS)).argmax()))
    env.save_replay(tmp_path / "kept.jsonl")
    extra = {"seed": seed, "table_id": 0, "agents": env.possible_agents}
    if preset is not None:  # the env names its rules only when a ruleset or preset was chosen
        extra["rules"] = {"ruleset": None, "preset": preset}
    write_replay(tmp_path / "derived.jsonl", env.engine, 0, extra)
    kept = (tmp_path / "kept.jsonl").read_text().splitlines()
    derived = (tmp_path / "derived.jsonl").read_text().splitlines()
    assert kept == derived
    names = {json.loads(line).get("name") for line in kept}
    if variant == "gejiu":  # the decisions read back include a kong and the choice of a face-up kong tile
        assert names & {"kongtile:0", "kongtile:1"} and any(n and n.startswith("kong") for n in names)
    if variant == "yangzhou":
        assert names & {"chi_low", "chi_mid", "chi_high"}
    if variant == "kawuxing3":  # 亮倒s were declared: the event index of every later decision skips their records
        assert sum(1 for n in names if n and n.startswith("liang:")) >= 2


@pytest.mark.parametrize("variant", mjenv.VARIANTS)
def test_a_random_hand_of_every_variant_is_written_and_verified(tmp_path, variant):
    eng = _play_batch(variant, 4, 3)
    path = tmp_path / f"{variant}.jsonl"
    for b in range(eng.batch_size):
        write_replay(path, eng, b, {"seed": 3, "table_id": b}, append=b > 0)
    code, text = _cli(["replay", "--verify", str(path)])  # re-simulates every hand
    assert code == 0, text
    assert text.count(": OK (") == 4
    hands = read_replay(path)
    for b, h in enumerate(hands):
        assert h.result == eng.results[b]
        # Sessions are recorded where they exist: a fresh session dealt by the same dealer.
        if eng.sessions[b] is None:
            assert "session" not in h.header
        else:
            assert h.header["session"] == {"dealer": 0, "rounds": eng.opts.rounds, "passes": 0, "hands": 0}
    kinds = {e["type"] for h in hands for e in h.events}
    assert "kong" in kinds
    if variant in ("gejiu", "yangzhou", "yangzhou_new"):
        assert "chi" in kinds
    if variant == "gejiu":
        assert "kong_pick" in kinds
        picked = [r for h in hands for r in h.records if r["type"] == "action" and r["action"] >= A.KONGTILE_0]
        assert picked  # a decision between two face-up kong tiles was recorded and re-played
        code, text = _cli(["replay", "--hand", "1", str(path)])
        assert "face-up kong tiles: 0: " in text


def _session_replays(tmp_path, variant: str, options: dict, hands: int, seed: int):
    """Play ``hands`` hands of one session (``next_hand``) kong-happily; write each to its own file."""
    eng = Engine(variant, 1, options=options)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    paths = []
    for k in range(hands):
        start = (eng.sessions[0], eng.balance[0].copy())
        _finish(eng, rng)
        path = tmp_path / f"{variant}_{k}.jsonl"
        write_replay(path, eng, 0)
        head = read_replay(path)[0].header
        ses = start[0]
        assert head["session"] == {"dealer": ses.dealer, "rounds": ses.rounds, "passes": ses.passes, "hands": k}
        if "balances" in head:
            assert head["balances"] == start[1].tolist()
        paths.append(path)
        if eng.session_over[0]:
            break
        eng.next_hand(seed=seed + 1 + k)
    return eng, paths


def test_later_hands_of_a_bankroll_session_verify_and_need_their_balances(tmp_path):
    # A 1 b bankroll with 米钱 of 0.5–1 b per kong payer (RULES.md §7.5, §7.7): balances run out within a
    # few hands, so payments are limited, busted players pay nothing and the session ends early.
    eng, paths = _session_replays(tmp_path, "diedaohu", {"bankroll": 1}, 6, 25)
    assert len(paths) == 2 and eng.session_over[0]  # a player busted in the second hand
    assert read_replay(paths[-1])[0].result["session_over"]
    stale = 0
    for path in paths:
        rep = read_replay(path)[0]
        assert _cli(["replay", "--verify", str(path)])[0] == 0
        code, text = _cli(["replay", str(path)])
        assert "balances A " in text.splitlines()[0]
        # The same hand re-played as if it began a fresh session (full bankrolls) pays differently.
        rep.header = {k: v for k, v in rep.header.items() if k not in ("balances", "session")}
        try:
            verify_replay(rep)
        except ReplayError:
            stale += 1
    assert stale >= 1


def test_a_yangzhou_hand_in_the_south_round_records_its_session(tmp_path):
    eng, paths = _session_replays(tmp_path, "yangzhou", {}, 6, 3)
    heads = [read_replay(p)[0].header for p in paths]
    assert [h["session"]["hands"] for h in heads] == list(range(len(paths)))
    south = [p for p, h in zip(paths, heads) if h["session"]["passes"] >= 4]
    assert south  # random play mostly draws, and a drawn hand passes the deal (draw_dealer: rotate)
    rep = read_replay(south[0])[0]
    assert verify_replay(rep) == rep.result
    code, text = _cli(["replay", str(south[0])])
    assert "round 2 of 4 (S wind)" in text.splitlines()[0]


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


@pytest.fixture()
def one_hand(tmp_path, played):
    path = tmp_path / "hand.jsonl"
    eng = played["kawuxing3"]
    b = next(i for i in range(eng.batch_size) if any(e["type"] == "kong" for e in eng.events[i]))
    write_replay(path, eng, b, {"seed": 3, "table_id": b})
    return path


def test_tampered_payment_is_caught_with_its_line(one_hand):
    lines = _lines(one_hand)
    k = next(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "kong")
    ev = json.loads(lines[k])
    ev["transfers"][0]["amount"] += 1
    lines[k] = json.dumps(ev)
    one_hand.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayError, match=rf"hand.jsonl:{k + 1}: kong event differs: transfers\[0\].amount: recorded"):
        verify_replay(read_replay(one_hand)[0])


def test_tampered_deltas_and_actions_are_caught(one_hand):
    lines = _lines(one_hand)
    end = json.loads(lines[-1])
    end["deltas"][0] += 2
    end["deltas"][1] -= 2
    bad = lines[:-1] + [json.dumps(end)]
    one_hand.write_text("\n".join(bad) + "\n")
    with pytest.raises(ReplayError, match=rf":{len(lines)}: end event differs: deltas\[0\]: recorded"):
        verify_replay(read_replay(one_hand)[0])
    a = next(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "action")
    act = json.loads(lines[a])
    act["action"], act["name"] = A.KONGTILE_1, "kongtile:1"  # never legal in Kawuxing
    lines[a] = json.dumps(act)
    one_hand.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayError, match=rf":{a + 1}: action kongtile:1 of seat \d is not legal"):
        verify_replay(read_replay(one_hand)[0])


@pytest.mark.parametrize(
    "mangle,message",
    [
        (lambda ls: ls[:-3], r"has no 'end' event \(file truncated\?\)"),
        (lambda ls: ls[:5] + [ls[5][: len(ls[5]) // 2]] + ls[6:], r":6: not valid JSON"),
        (lambda ls: ls[1:], r":1: a 'deal' line before any header line"),
        (lambda ls: [ls[0].replace(FORMAT, "mjenv-replay-v0")] + ls[1:], r":1: unsupported replay format"),
        (lambda ls: ls[:3] + ['{"type": "teleport"}'] + ls[3:], r":4: unknown line type 'teleport'"),
        (lambda ls: ls + [ls[2]], r"after the hand's 'end' event"),
        (lambda ls: [], r"no header line"),
    ],
)
def test_corrupt_or_truncated_files_name_the_line(one_hand, mangle, message):
    one_hand.write_text("\n".join(mangle(_lines(one_hand))) + "\n")
    with pytest.raises(ReplayError, match=message):
        read_replay(one_hand)
    code, _ = _cli(["replay", str(one_hand)])
    assert code == 2


def test_a_header_that_cannot_be_dealt_is_reported_at_its_line(one_hand):
    lines = _lines(one_hand)
    head = json.loads(lines[0])
    head["wall"] = head["wall"][:-2]
    one_hand.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    with pytest.raises(ReplayError, match=r"hand.jsonl:1: header wall must hold each of the variant's 21 tile kinds"):
        read_replay(one_hand)
    head["wall"] = json.loads(lines[0])["wall"]
    head["options"]["cap"] = 7
    one_hand.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    with pytest.raises(ReplayError, match=r"hand.jsonl:1: header options: .*option 'cap': 7 is not allowed"):
        read_replay(one_hand)
    del head["options"]["cap"]
    head["session"] = {"dealer": 0, "rounds": 1, "passes": 0, "hands": 0}  # Kawuxing-3p has no sessions
    one_hand.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    with pytest.raises(ReplayError, match=r"hand.jsonl:1: cannot deal the header's hand: variant 'kawuxing3' has no se"):
        verify_replay(read_replay(one_hand)[0])


def test_header_is_protected_and_events_are_required():
    eng = Engine("kawuxing3", 1)
    eng.reset(seed=0)
    with pytest.raises(ValueError, match="override"):
        write_replay("/dev/null", eng, 0, {"wall": "x"})
    with pytest.raises(ValueError, match="override 'balances'"):
        write_replay("/dev/null", eng, 0, {"balances": [1, 2, 3]})
    quiet = Engine("kawuxing3", 1, record_events=False)
    quiet.reset(seed=0)
    with pytest.raises(ReplayError, match="record_events"):
        write_replay("/dev/null", quiet, 0)
    with pytest.raises(ReplayError, match="still in play"):
        write_replay("/dev/null", eng, 0)


def test_cli_shows_the_hand_with_unicode_tiles_and_verifies(one_hand, tmp_path):
    code, text = _cli(["replay", str(one_hand)])
    assert code == 0
    hand = read_replay(one_hand)[0]
    assert text.startswith("== kawuxing3 hand (seed 3")
    assert "Deal, dealer A:" in text
    assert any(tile_unicode(t) in text for t in range(9, 34))
    assert " kong " in text and "deltas:" in text
    n_moves = sum(1 for r in hand.records if r["type"] not in ("action", "end"))
    code, _ = _cli(["replay", "--step", str(one_hand)], inp=io.StringIO("\n" * 3))
    assert code == 0
    prompts = io.StringIO("\n" * (n_moves + 5))
    _cli(["replay", "--step", str(one_hand)], inp=prompts)
    assert prompts.read() == "\n" * 5  # one Enter consumed per move
    code, text = _cli(["replay", "--verify", str(one_hand)])
    assert code == 0 and text.startswith("hand 1: OK")
    lines = _lines(one_hand)
    end = json.loads(lines[-1])
    end["next_dealer"] = (end["next_dealer"] + 1) % 3
    one_hand.write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    code, text = _cli(["replay", "--verify", str(one_hand)])
    assert code == 1 and "FAILED" in text and f":{len(lines)}:" in text
    code, _ = _cli(["replay", "--hand", "2", str(one_hand)])
    assert code == 2
    code, _ = _cli(["replay", str(tmp_path / "missing.jsonl")])
    assert code == 2
