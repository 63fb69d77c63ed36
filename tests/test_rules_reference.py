"""Tests of the rule reference: ``mjenv rules``, the generated tables of docs/rules/*.md (they must equal the
code), and the section citations of code, help texts and docs (each must name a section that docs/rules has)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from mjenv.cli import main
from mjenv.rules import options as O
from mjenv.rules import reference as R
from mjenv.rules.options import OptionError, option_info

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "rules"


@pytest.fixture(autouse=True)
def _packaged_rules(monkeypatch):
    monkeypatch.delenv(O.RULES_DIR_ENV, raising=False)


# ------------------------------------------------------------------------------------ docs vs code


def test_the_rule_pages_agree_with_the_code():
    stale = R.stale_pages(DOCS)
    assert not stale, f"generated tables differ from the code in {stale}; run 'python -m mjenv.cli rules --write-docs'"


def test_every_family_has_a_page_with_its_option_table():
    families = {spec.family for spec in O.VARIANTS.values()}
    assert set(R.PAGES) == families
    for family, page in R.PAGES.items():
        blocks = R.page_blocks((DOCS / page).read_text(encoding="utf-8"))
        assert f"options {family}" in blocks and f"fans {family}" in blocks, page
    # every block the code can render is on some page, except the preset tables of families without presets
    used = {b for p in DOCS.glob("*.md") for b in R.page_blocks(p.read_text(encoding="utf-8"))}
    without_presets = {f"presets {f}" for f in families if not O.list_presets(next(
        v for v, spec in O.VARIANTS.items() if spec.family == f))}
    assert used == set(R.BLOCKS) - without_presets
    assert "presets kawuxing" in used


def test_a_page_that_drifts_from_the_code_is_found_and_rewritten(tmp_path):
    docs = tmp_path / "rules"
    shutil.copytree(DOCS, docs)
    page = docs / "gejiu.md"
    text = page.read_text(encoding="utf-8")
    # a table row edited by hand: the default of gejiu_combine changed
    edited = text.replace("| `gejiu_combine` | multiply, add, max | `multiply` |", "| `gejiu_combine` | multiply, add, max | `add` |")
    assert edited != text
    page.write_text(edited, encoding="utf-8")
    assert R.stale_pages(docs) == ["gejiu.md"]
    assert main(["rules", "--check-docs", str(docs)]) == 1
    assert main(["rules", "--write-docs", str(docs)]) == 0
    assert page.read_text(encoding="utf-8") == text
    assert R.stale_pages(docs) == []


def test_an_option_added_to_the_code_makes_the_page_stale(tmp_path, monkeypatch):
    docs = tmp_path / "rules"
    shutil.copytree(DOCS, docs)
    real = R.option_info

    def with_extra_meaning(cls):
        infos = list(real(cls))
        if cls is O.LiuweiOptions:
            infos[0] = O.OptionInfo(infos[0].name, infos[0].domain, infos[0].default, "a changed meaning")
        return tuple(infos)

    monkeypatch.setattr(R, "option_info", with_extra_meaning)
    assert R.stale_pages(docs) == ["liuwei.md"]


def test_unknown_generated_block_is_an_error(tmp_path):
    (tmp_path / "x.md").write_text("<!-- generated: options mahjong -->\n| old |\n<!-- end generated -->\n")
    with pytest.raises(OptionError, match="unknown generated block 'options mahjong'"):
        R.stale_pages(tmp_path)
    with pytest.raises(OptionError, match="does not exist"):
        R.write_docs(tmp_path / "missing")


# ------------------------------------------------------------------------------------ option rows


def test_option_rows_follow_ruleset_and_preset():
    rows = {r.name: r for r in R.option_rows("kawuxing3", "qdjt001", "crazy")}
    assert rows["fan_combine"].default == "add"  # from qdjt001
    assert rows["cap"].default == "none" and rows["tingtou"].default == "each"  # from crazy
    assert rows["cap"].allowed == "8, 16, none"
    default = {r.name: r.default for r in R.option_rows("kawuxing3")}
    assert default["fan_combine"] == "multiply" and default["cap"] == "8"
    assert "suits" not in {r.name for r in R.option_rows("kawuxing4")}
    new = {r.name: r.default for r in R.option_rows("yangzhou_new")}
    assert new["yz_style"] == "new" and new["min_fan"] == "20"


@pytest.mark.parametrize("variant", list(O.VARIANTS))
def test_every_option_has_a_meaning_in_the_listing(variant, capsys):
    assert main(["rules", "--variant", variant]) == 0
    out = capsys.readouterr().out
    spec = O.VARIANTS[variant]
    for info in option_info(spec.options_cls):
        if info.name in spec.absent_options:
            assert not re.search(rf"^{info.name} ", out, re.M)
            continue
        line = next(line for line in out.splitlines() if line.startswith(info.name + " "))
        assert info.meaning in line and info.allowed_text in line


def test_markdown_listing(capsys):
    assert main(["rules", "--variant", "liuwei", "--markdown"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "| option | allowed values | default (`liuwei003`) | meaning |"
    assert len(lines) == 2 + len(option_info(O.LiuweiOptions))
    assert "| `bankroll` | none or a number > 0, up to 1000000 | `50` |" in "\n".join(lines)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["rules", "--variant", "kawuxing5"], "unknown variant 'kawuxing5'"),
        (["rules", "--ruleset", "nope"], "unknown ruleset 'nope'"),
        (["rules", "--variant", "gejiu", "--preset", "simple"], "unknown preset 'simple' for variant 'gejiu'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mjenv: error: ") and message in err and "\n" not in err


# ------------------------------------------------------------------------------------ citations


def _headings() -> dict[str, set[str]]:
    """Page -> the section numbers of its headings (``3.7``, ``4``, ``11`` ...)."""
    out = {}
    for page in DOCS.glob("*.md"):
        nums = re.findall(r"^#+ (\d+(?:\.\d+)?)\.? ", page.read_text(encoding="utf-8"), re.M)
        out[page.name] = set(nums)
    return out


def _cited_files() -> list[Path]:
    files = [*REPO.glob("*.py"), REPO / "README.md", *(REPO / "docs").rglob("*.md")]
    for package in ("mjenv", "agents"):
        files += (REPO / package).rglob("*.py")
    files += (REPO / "mjenv" / "rules" / "data").glob("*.toml")
    return files


def test_no_citation_of_a_rule_book_outside_the_repo():
    offenders = [
        str(f.relative_to(REPO))
        for f in _cited_files()
        if re.search(r"RULES\.md|shared/rules", f.read_text(encoding="utf-8"))
    ]
    assert not offenders, f"cite docs/rules/ instead of the shared rule book in {offenders}"


def test_every_cited_section_exists_in_docs_rules():
    numbers = set().union(*_headings().values())
    # a bare number like §3 names the chapter: it exists when some 3.x heading does
    chapters = {n.split(".")[0] for n in numbers}
    missing = set()
    for f in _cited_files():
        for sec in re.findall(r"§(\d+(?:\.\d+)?)", f.read_text(encoding="utf-8")):
            if sec not in numbers and sec not in chapters:
                missing.add(f"{f.relative_to(REPO)}: §{sec}")
    assert not missing, sorted(missing)


def test_page_citations_name_the_page_that_has_the_section():
    headings = _headings()
    wrong = set()
    for f in _cited_files():
        for page, sec in re.findall(r"docs/rules/(\w+\.md) §(\d+(?:\.\d+)?)", f.read_text(encoding="utf-8")):
            have = headings.get(page, set())
            if sec not in have and not any(h.split(".")[0] == sec for h in have):
                wrong.add(f"{f.relative_to(REPO)}: {page} §{sec}")
    assert not wrong, sorted(wrong)
