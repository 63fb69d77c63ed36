"""The Rules value (mjenv.rules.load_rules): equality and hash, immutability, errors, idempotence, and the doors
that take it (Engine, the envs, ObservationEncoder) without resolving the rules again."""

import dataclasses
import pickle

import numpy as np
import pytest

import mjenv
from mjenv.encoding.observation import ObservationEncoder
from mjenv.engine.core import Engine
from mjenv.rules import Rules, load_rules, resolution_count
from mjenv.rules.options import KawuxingOptions, OptionError, tile_kinds
from mjenv.rules.options import load_rules as load_options


def test_fields_follow_the_variant():
    r = load_rules("kawuxing3")
    assert (r.variant, r.family, r.n_players) == ("kawuxing3", "kawuxing", 3)
    assert r.options == load_options("kawuxing3")
    assert np.array_equal(r.kinds_mask, tile_kinds("kawuxing3", r.options))
    assert r.kinds == tuple(np.flatnonzero(tile_kinds("kawuxing3", r.options)))
    assert r.tile_count == 84 and load_rules("gejiu").tile_count == 136
    assert load_rules("kawuxing4").n_players == 4 and load_rules("liuwei").family == "liuwei"
    assert load_rules().variant == "kawuxing3"
    assert r.spec.default_ruleset == "kwx004"
    assert r.options_dict()["cap"] == r.options.cap


def test_equal_rules_are_equal_and_hash_equal():
    a = load_rules("kawuxing3")
    b = load_rules("kawuxing3", ruleset="kwx004")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    c = load_rules("kawuxing3", options={"cap": 16})
    assert c != a and c.options.cap == 16
    assert load_rules("kawuxing3", options={"cap": "16"}) == c  # command-line text coerces the same
    assert load_rules("kawuxing4") != load_rules("kawuxing3")  # same options class, another variant
    assert load_rules("kawuxing3", preset="crazy") != a
    assert pickle.loads(pickle.dumps(c)) == c


def test_rules_are_immutable():
    r = load_rules("gejiu")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.variant = "kawuxing3"
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.options = load_options("kawuxing3")
    mask = r.kinds_mask
    mask[:] = False  # a fresh array each time: the value is untouched
    assert r.kinds_mask.sum() == 34


def test_errors_name_the_option_and_the_allowed_values():
    with pytest.raises(OptionError, match="unknown variant 'kawuxing5'.*known variants: kawuxing3"):
        load_rules("kawuxing5")
    with pytest.raises(OptionError, match=r"unknown option 'capp'.*did you mean 'cap'"):
        load_rules("kawuxing3", options={"capp": 8})
    with pytest.raises(OptionError, match="kaikou") as e:
        load_rules("kawuxing3", options={"kaikou": "maybe"})
    assert "hard" in str(e.value) and "none" in str(e.value)
    with pytest.raises(OptionError, match="suits"):
        load_rules("kawuxing4", options={"suits": "ps"})  # an option kawuxing4 lacks
    with pytest.raises(OptionError, match="nosuch"):
        load_rules("kawuxing3", ruleset="nosuch")
    with pytest.raises(TypeError, match="KawuxingOptions"):
        load_rules("gejiu", options=KawuxingOptions())
    with pytest.raises(TypeError, match="ruleset"):
        load_rules("kawuxing3", ruleset="kwx004", options=KawuxingOptions())
    with pytest.raises(TypeError, match="KawuxingOptions"):
        Rules("kawuxing3", load_options("gejiu"))
    with pytest.raises(ValueError, match="n_players"):
        Rules("kawuxing3", KawuxingOptions(), n_players=4)


def test_load_rules_is_idempotent_and_resolves_once():
    before = resolution_count()
    r = load_rules("diedaohu", options={"base": 2})
    assert resolution_count() == before + 1
    assert load_rules(r) is r
    assert load_rules(load_rules(r)) is r
    assert resolution_count() == before + 1  # handing the value on resolves nothing
    with pytest.raises(TypeError, match="ruleset"):
        load_rules(r, ruleset="kwx004")
    with pytest.raises(TypeError, match="options"):
        load_rules(r, options={"base": 2})
    opts = load_options("kawuxing3")
    assert load_rules("kawuxing3", options=opts).options is opts  # a complete options value is not resolved
    assert resolution_count() == before + 2


def test_the_doors_take_rules_without_resolving_again():
    r = load_rules("yangzhou")
    before = resolution_count()
    eng = Engine(rules=r, batch_size=2)
    assert eng.rules is r and eng.variant == "yangzhou" and eng.opts is r.options and eng.n == 4
    assert Engine(r).rules is r
    enc = ObservationEncoder(rules=r)
    assert enc.rules is r and enc.shape == ObservationEncoder("yangzhou").shape
    e = mjenv.env(rules=r)
    assert e.unwrapped.rules is r and e.unwrapped.variant == "yangzhou"
    v = mjenv.vector_env(rules=r, num_envs=2)
    assert v.core.rules is r
    assert resolution_count() == before + 1  # only the ObservationEncoder("yangzhou") above
    with pytest.raises(ValueError, match="differs"):
        Engine("gejiu", rules=r)
    with pytest.raises(TypeError, match="ruleset"):
        Engine(rules=r, ruleset="kwx004")
    with pytest.raises(TypeError, match="Rules value"):
        Engine(rules="yangzhou")
    assert Engine().variant == "kawuxing3"  # the string doors keep their defaults
