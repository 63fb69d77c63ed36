"""A rule family is one plugin: every per-family particular the CLI, the viewer, the rule reference and the agents
use is read from its rules class (mjenv/rules/families.py) or its engine adapter (mjenv/engine/family.py, a
subclass of it); its variants from mjenv/rules/variants.py (no compiled code runs here)."""

from __future__ import annotations

import pytest

from agents.players.heuristic import FAMILY_PARAMS, family_params
from mjenv.cli import _FLAGS
from mjenv.engine.family import FAMILIES, family_class
from mjenv.rules.families import RULE_FAMILIES, rule_family
from mjenv.rules import reference
import mjenv
from mjenv.rules import options as O
from mjenv.rules.options import VARIANTS, VariantSpec, all_kinds, get_variant, register_variants
from mjenv.viewer import fan_names

_HEURISTIC_KEYS = {"flush_bonus", "triplets_bonus", "exposure_weight", "deal_in", "flush_variant"}


@pytest.mark.parametrize("family", sorted({spec.family for spec in VARIANTS.values()}))
def test_every_registered_family_is_a_complete_plugin(family):
    cls = family_class(family)
    assert cls.name == family and FAMILIES[family] is cls
    assert issubclass(cls, rule_family(family)) and RULE_FAMILIES[family] is rule_family(family)
    assert (reference.DOCS_DIR / cls.page).is_file() and reference.PAGES[family] == cls.page
    fans = cls.fans()
    assert fans and all(len(row) >= 3 and isinstance(row[0], str) for row in fans.values())
    header, rows = cls.fan_table()
    assert rows and all(len(r) == len(header) for r in rows)
    assert set(FAMILY_PARAMS[family]) <= _HEURISTIC_KEYS, set(FAMILY_PARAMS[family]) - _HEURISTIC_KEYS
    # the readers take the family's own table, not a copy
    assert fan_names(family) == {k: f"{v[0]} {v[1]}" for k, v in fans.items()}
    assert reference.BLOCKS[f"fans {family}"]() == reference.fans_markdown(family)
    assert (f"kong money {family}" in reference.BLOCKS) == cls.pays_kong_money
    # every situation fact its scorer reads is a ``mjenv score`` flag that applies to it
    flags = {f.dest: f for f in _FLAGS}
    assert set(cls.situation) <= set(flags) and all(family in flags[d].families for d in cls.situation)


def test_heuristic_parameters_come_from_the_players_table(monkeypatch):
    monkeypatch.setitem(FAMILY_PARAMS, "gejiu", {"flush_bonus": 5, "triplets_bonus": 2})
    p = family_params("gejiu")
    assert (p["flush_bonus"], p["triplets_bonus"], p["exposure_weight"], p["deal_in"]) == (5, 2, 0.0, None)


def test_unknown_family_is_named():
    with pytest.raises(ValueError, match="unknown rule family 'mahjong'; known: kawuxing"):
        family_class("mahjong")


def test_variants_are_declared_by_their_family():
    # the registry of the rules layer lists each family's variants, in the families' order; each family's rules
    # class (and so its engine adapter) lists exactly its own
    declared = [spec for cls in RULE_FAMILIES.values() for spec in cls.__dict__.get("variants", ())]
    assert list(VARIANTS.items()) == [(spec.name, spec) for spec in declared]
    assert list(RULE_FAMILIES) == list(FAMILIES)
    assert mjenv.VARIANTS == tuple(VARIANTS)
    for spec in declared:
        assert rule_family(spec.family).__dict__["variants"].count(spec) == 1
        assert family_class(spec.family).variants.count(spec) == 1
        assert get_variant(spec.name) is spec


def test_a_variant_added_to_a_family_is_known_everywhere():
    spec = VariantSpec(name="gejiu_test", family="gejiu", options_cls=O.GejiuOptions, n_players=4,
                       default_ruleset="gejiu002", kinds=all_kinds, description="a test variant")
    register_variants("gejiu", [spec])
    try:
        assert get_variant("gejiu_test") is spec and O.n_players("gejiu_test") == 4
        assert O.load_rules("gejiu_test") == O.load_rules("gejiu")  # the family's rules files serve it
        assert "gejiu_test" in reference._family_variants("gejiu")
    finally:
        del VARIANTS._specs["gejiu_test"]


def test_a_variant_registered_by_another_family_or_twice_is_refused():
    spec = VariantSpec(name="x", family="gejiu", options_cls=O.GejiuOptions, n_players=4,
                       default_ruleset="gejiu002", kinds=all_kinds)
    with pytest.raises(ValueError, match="variant 'x' says family 'gejiu' but is declared by 'liuwei'"):
        register_variants("liuwei", [spec])
    clash = VariantSpec(name="gejiu", family="gejiu", options_cls=O.GejiuOptions, n_players=4,
                        default_ruleset="gejiu002", kinds=all_kinds)
    with pytest.raises(ValueError, match="variant 'gejiu' is registered twice"):
        register_variants("gejiu", [clash])
    assert "x" not in VARIANTS and get_variant("gejiu") is not clash
