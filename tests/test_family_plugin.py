"""A rule family is one plugin: every per-family particular the CLI, the viewer, the rule reference and the agents
use is read from its class in mjenv/engine/family.py (no compiled code runs here)."""

from __future__ import annotations

import pytest

from agents.heuristic import family_params
from mjenv.cli import _FLAGS
from mjenv.engine.family import FAMILIES, family_class
from mjenv.rules import reference
from mjenv.rules.options import VARIANTS
from mjenv.viewer import fan_names

_HEURISTIC_KEYS = {"flush_bonus", "triplets_bonus", "exposure_weight", "deal_in", "flush_variant"}


@pytest.mark.parametrize("family", sorted({spec.family for spec in VARIANTS.values()}))
def test_every_registered_family_is_a_complete_plugin(family):
    cls = family_class(family)
    assert cls.name == family and FAMILIES[family] is cls
    assert (reference.DOCS_DIR / cls.page).is_file() and reference.PAGES[family] == cls.page
    fans = cls.fans()
    assert fans and all(len(row) >= 3 and isinstance(row[0], str) for row in fans.values())
    header, rows = cls.fan_table()
    assert rows and all(len(r) == len(header) for r in rows)
    assert set(cls.heuristic) <= _HEURISTIC_KEYS, set(cls.heuristic) - _HEURISTIC_KEYS
    # the readers take the family's own table, not a copy
    assert fan_names(family) == {k: f"{v[0]} {v[1]}" for k, v in fans.items()}
    assert reference.BLOCKS[f"fans {family}"]() == reference.fans_markdown(family)
    assert (f"kong money {family}" in reference.BLOCKS) == cls.pays_kong_money
    # every situation fact its scorer reads is a ``mjenv score`` flag that applies to it
    flags = {f.dest: f for f in _FLAGS}
    assert set(cls.situation) <= set(flags) and all(family in flags[d].families for d in cls.situation)


def test_heuristic_parameters_come_from_the_family(monkeypatch):
    monkeypatch.setattr(FAMILIES["gejiu"], "heuristic", {"flush_bonus": 5, "triplets_bonus": 2})
    p = family_params("gejiu")
    assert (p["flush_bonus"], p["triplets_bonus"], p["exposure_weight"], p["deal_in"]) == (5, 2, 0.0, None)


def test_unknown_family_is_named():
    with pytest.raises(ValueError, match="unknown rule family 'mahjong'; known: kawuxing"):
        family_class("mahjong")
