"""The HTML replay viewer: the folded table equals the engine's state after every step in every variant, the
page is self-contained and carries the settlement, the command line; and in a real browser (headless Chromium)
the page steps to the end by keyboard and shows the replay's payments (a screenshot is kept)."""

from __future__ import annotations

import argparse
import base64
import io
import json
import re
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from mjenv.encoding import actions as A
from mjenv.engine.core import Engine
from mjenv.replay import Replay, ReplayError, make_header, read_replay, write_replay, _normalize
from mjenv.tools.replay_command import replay_main
from mjenv.tiles import format_counts, tile_name
from mjenv.viewer import build_html, hand_frames

VARIANTS = ("kawuxing3", "kawuxing4", "gejiu", "diedaohu", "yangzhou", "yangzhou_new", "liuwei")

# random play that likes kongs, claims, wins and 亮倒, so that hands contain them
_BONUS = np.where(np.arange(A.N_ACTIONS) >= A.LIANG, 1.5, 0.0)
_BONUS[A.KONG_SELF : A.KONG_SELF + 34] = 3.0
_BONUS[A.KONG_CLAIM] = 3.0
_BONUS[A.PASS] = 0.0


def _snapshot(eng: Engine) -> dict:
    st = eng.state
    n = eng.n
    return {
        "events": eng.event_count(0),
        "hands": [format_counts(st.hand[0, s]) for s in range(n)],
        "melds": [[(m.kind, "".join(tile_name(t) for t in sorted(m.tiles))) for m in eng.melds_of(0, s)] for s in range(n)],
        "river": [[tile_name(t) for t in st.river[0, s, : int(st.river_len[0, s])]] for s in range(n)],
        "revealed": [bool(st.revealed[0, s]) for s in range(n)],
        "hidden": [format_counts(st.hidden[0, s].astype(np.int8) * 3) for s in range(n)],
        "wall": int(eng.wall_left()[0]),
        "kong_tiles": [tile_name(t) if t >= 0 else None for t in st.kong_tiles[0]],
    }


def _frame_view(frame: dict, n_kong_tiles: int) -> dict:
    def meld_tiles(notation: str) -> str:
        from mjenv.tiles import parse_tiles

        return "".join(tile_name(t) for t in sorted(parse_tiles(notation)))

    def whole(seat: dict) -> str:
        from mjenv.tiles import parse_tiles

        ids = parse_tiles(seat["h"]) + (parse_tiles(seat["d"]) if seat["d"] and not seat.get("won") else [])
        return format_counts(np.bincount(ids, minlength=34))

    return {
        "hands": [whole(s) for s in frame["s"]],
        "melds": [[(m[0], meld_tiles(m[1])) for m in s["m"]] for s in frame["s"]],
        "river": [[r[0] for r in s["r"] if r[2] < 0] for s in frame["s"]],
        "revealed": [s["rev"] for s in frame["s"]],
        "hidden": [s["x"] for s in frame["s"]],
        "wall": frame["w"],
        "kong_tiles": frame["k"] + [None] * (2 - n_kong_tiles),
    }


def _play(variant: str, seed: int) -> tuple[Replay, list[dict]]:
    eng = Engine(variant, 1, record_events=True)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    snaps = [_snapshot(eng)]
    while not eng.done[0]:
        m = eng.mask
        eng.step((m * (rng.random(m.shape) + _BONUS)).argmax(1))
        snaps.append(_snapshot(eng))
    header = make_header(eng, 0, {"seed": seed})
    events = _normalize(list(eng.events[0]))
    return Replay(header=header, records=events, lines=list(range(2, len(events) + 2))), snaps


@pytest.mark.parametrize("variant", VARIANTS)
def test_frames_match_engine_after_every_step(variant):
    """The table folded from the events equals the engine's state after every step (hands, melds, unclaimed
    discards, 亮倒 face-down tiles, live wall, face-up kong tiles) over several hands with kongs and claims."""
    kinds = set()
    for seed in range(6):
        rep, snaps = _play(variant, seed)
        data = hand_frames(rep)
        frames = data["frames"]
        assert len(frames) == len(rep.events)
        k = len(frames[0]["k"])
        for snap in snaps:
            want = {key: v for key, v in snap.items() if key != "events"}
            got = _frame_view(frames[snap["events"] - 1], k)
            if snap is snaps[-1]:  # the end: the winning tile is shown beside a winner, not in the hand
                got["hands"], want["hands"] = None, None
            assert got == want, f"{variant} seed {seed} after event {snap['events']}"
        kinds |= {ev["type"] for ev in rep.events}
        assert data["frames"][-1]["s"][0]["money"] == rep.result["deltas"][0]
    assert "kong" in kinds
    if variant.startswith("kawuxing"):
        assert "reveal" in kinds
    if variant == "gejiu":
        assert "kong_pick" in kinds and "chi" in kinds


# ------------------------------------------------------------------------------------------------ the page


def _replay_file(tmp_path, variant: str = "kawuxing3", want: int = 2) -> tuple:
    """A file of ``want`` hands, the first a win with settlement transfers and kong money."""
    path = tmp_path / f"{variant}.jsonl"
    found = 0
    for seed in range(200):
        eng = Engine(variant, 1, record_events=True)
        eng.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not eng.done[0]:
            m = eng.mask
            eng.step((m * (rng.random(m.shape) + _BONUS)).argmax(1))
        res = eng.results[0]
        kong_money = any(abs(d - s) > 0 for d, s in zip(res["deltas"], res["settlement_deltas"]))
        if found == 0 and not (res["winners"] and res["transfers"] and kong_money):
            continue
        write_replay(path, eng, 0, {"seed": seed}, append=found > 0)
        found += 1
        if found == want:
            return path, read_replay(path)
    raise AssertionError("no suitable hand found")


def _html_args(file, out, seat=None) -> argparse.Namespace:
    return argparse.Namespace(file=str(file), html=str(out), seat=seat, hand=None, verify=False, step=False)


def test_page_is_self_contained(tmp_path):
    """One file: the data inlined, no script, style, image or link fetched from anywhere."""
    path, hands = _replay_file(tmp_path)
    out = tmp_path / "game.html"
    assert replay_main(_html_args(path, out), out=io.StringIO()) == 0
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"""<(script|link|img|iframe)[^>]*\s(src|href)\s*=""", page, re.I)
    assert not re.search(r"""(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/""", page.replace("http://www.w3.org", ""), re.I)
    data = json.loads(re.search(r"const DATA = (.*?);</script>", page, re.S).group(1))
    assert [h["result"]["deltas"] for h in data["hands"]] == [h.result["deltas"] for h in hands]
    assert data["hands"][0]["result"]["transfers"] == hands[0].result["transfers"]


def test_html_command_errors(tmp_path, capsys):
    path, _ = _replay_file(tmp_path, want=1)
    assert replay_main(_html_args(path, tmp_path / "x.html", seat=7), out=io.StringIO()) == 2
    assert "--seat 7 is out of range 0..2" in capsys.readouterr().err
    assert replay_main(_html_args(path, tmp_path / "no" / "such" / "x.html"), out=io.StringIO()) == 2
    assert "cannot write --html" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_inconsistent_events_name_the_line(tmp_path):
    path, _ = _replay_file(tmp_path, want=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    i = next(i for i, ln in enumerate(lines) if '"type":"discard"' in ln)
    ev = json.loads(lines[i])
    ev["tile"] = "1p" if ev["tile"] != "1p" else "2p"
    lines[i] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rep = read_replay(path)[0]
    try:
        hand_frames(rep)
    except ReplayError as exc:
        assert f":{i + 1}:" in str(exc)
    else:  # the seat happened to hold the other tile too: the fold cannot notice, verification does
        pytest.skip("the altered discard is still a tile the seat holds")


# ------------------------------------------------------------------------------------- in a real browser

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
_KEY = {"Right": "\ue014", "Left": "\ue012", "Home": "\ue011", "End": "\ue010", "Up": "\ue013", "Down": "\ue015"}


class _WebDriver:
    """A minimal W3C WebDriver client (standard library only) for Debian's chromedriver + headless chromium."""

    def __init__(self, driver: str, browser: str, size=(1500, 1000)):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                if self._req("GET", "/status")["value"].get("ready"):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={size[0]},{size[1]}"]
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {"binary": browser, "args": args}}}}
        self.sid = self._req("POST", "/session", caps)["value"]["sessionId"]

    def _req(self, method: str, path: str, body=None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read().decode())

    def cmd(self, method: str, path: str, body=None):
        """One command of this session; returns its ``value``."""
        return self._req(method, f"/session/{self.sid}{path}", body)["value"]

    def js(self, script: str):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": []})

    def keys(self, *names: str) -> None:
        """Press and release keys (names of :data:`_KEY` or characters) on the page."""
        acts = []
        for k in names:
            v = _KEY.get(k, k)
            acts += [{"type": "keyDown", "value": v}, {"type": "keyUp", "value": v}]
        self.cmd("POST", "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": acts}]})

    def click(self, css: str) -> None:
        el = self.cmd("POST", "/element", {"using": "css selector", "value": css})
        self.cmd("POST", f"/element/{next(iter(el.values()))}/click", {})

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.cmd("GET", "/screenshot")))

    def quit(self) -> None:
        try:
            self._req("DELETE", f"/session/{self.sid}")
        finally:
            self.proc.terminate()
            self.proc.wait(timeout=20)


def _browser():
    browser = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        pytest.skip(
            "headless Chromium is not available (needs Debian's chromium and chromium-driver: "
            "apt-get install -y chromium chromium-driver; .ci/run installs them)"
        )
    return driver, browser


_DOM = """
const t = [...document.querySelectorAll('#settlement tr.transfer')].map(r => [+r.dataset.payer, +r.dataset.payee,
           +r.dataset.amount, r.dataset.reason]);
const d = [...document.querySelectorAll('#settlement td.delta')].map(c => +c.dataset.value);
const seats = [...document.querySelectorAll('.seat')].map(s => ({
  money: s.querySelector('.money').textContent,
  hidden: s.querySelectorAll('.hand svg.tile[data-tile=""]').length,
  faceup: s.querySelectorAll('.hand svg.tile:not([data-tile=""])').length}));
return {step: +document.body.dataset.step, last: +document.body.dataset.last, hand: +document.body.dataset.hand,
        transfers: t, deltas: d, seats, wall: document.getElementById('wall').textContent,
        caption: document.getElementById('caption').textContent,
        fans: [...document.querySelectorAll('#settlement tr.fan')].map(r => r.dataset.fan)};
"""


def test_browser_steps_to_the_end_and_shows_the_payments(tmp_path):
    """Headless Chromium: the keyboard and buttons step through both hands; at the end of each the DOM's
    settlement (every transfer, the deltas, the fans) equals the replay file's; one seat's view hides the other
    seats' concealed tiles; a screenshot of the end of hand 1 is kept in tests/artifacts/."""
    driver, browser = _browser()
    path, hands = _replay_file(tmp_path)
    out = tmp_path / "game.html"
    assert replay_main(_html_args(path, out), out=io.StringIO()) == 0
    wd = _WebDriver(driver, browser)
    try:
        wd.cmd("POST", "/url", {"url": out.as_uri()})
        dom = wd.js(_DOM)
        assert (dom["step"], dom["hand"]) == (0, 0)
        assert dom["last"] == len(hands[0].events) - 1
        wd.keys("Right", "Right", "Right", "Left")
        assert wd.js(_DOM)["step"] == 2
        wd.click("#next")
        assert wd.js(_DOM)["step"] == 3
        for i, rep in enumerate(hands):
            wd.keys("End")
            dom = wd.js(_DOM)
            assert (dom["hand"], dom["step"]) == (i, dom["last"])
            res = rep.result
            want = [[t["payer"], t["payee"], t["amount"], t["reason"]] for t in res["transfers"]]
            assert dom["transfers"] == want
            assert dom["deltas"] == res["deltas"]
            assert dom["fans"] == [f for w in res["winners"] for f in w["fans"]]
            assert [s["money"] for s in dom["seats"]] == [f"+{d:g}" if d > 0 else f"{d:g}" for d in res["deltas"]]
            frames = hand_frames(rep)["frames"]
            assert dom["wall"] == str(frames[-1]["w"])
            if i + 1 < len(hands):
                wd.keys("Down")
                assert wd.js(_DOM)["step"] == 0
        wd.keys("Up", "End")
        assert wd.js(_DOM)["transfers"]  # hand 1 again, at its settlement
        ARTIFACTS.mkdir(exist_ok=True)
        wd.screenshot(ARTIFACTS / "viewer_end.png")
        wd.keys("Home", "v", "v")  # the view of seat B (index 1)
        seats = wd.js(_DOM)["seats"]
        assert seats[1]["hidden"] == 0 and seats[1]["faceup"] > 0
        assert seats[0]["hidden"] > 0 and seats[0]["faceup"] == 0
        wd.screenshot(ARTIFACTS / "viewer_seat_view.png")
        wd.keys("End")  # the hand is over: every hand is shown, also in one seat's view
        assert all(s["hidden"] == 0 for s in wd.js(_DOM)["seats"])
    finally:
        wd.quit()
    assert (ARTIFACTS / "viewer_end.png").stat().st_size > 10_000
