"""The HTML report in a real browser (headless Chromium): it renders (the screenshot is not
blank), logs nothing to the console, and the numbers in its DOM are those of the JSON report.
Skipped, saying why, only when no Chromium is installed (`.ci/run` installs Debian's)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from litmus_rules.cli import main
from report12_batch import write_batch

CHROMIUM = next((p for p in (shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium)")


def _chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
         "--enable-logging=stderr", "--v=0", f"--user-data-dir={cwd / 'profile'}", *args],
        capture_output=True, text=True, timeout=120, cwd=cwd,
    )


def _console(stderr: str) -> list[str]:
    """Console messages Chromium logged (`...:INFO:CONSOLE(12)] "message", source: ...`)."""
    return [line for line in stderr.splitlines() if "CONSOLE" in line]


def _pixels(png: bytes) -> tuple[int, int, set[bytes]]:
    """Width, height and the distinct RGB(A) colours of an 8-bit RGB or RGBA PNG: enough of a decoder
    to tell a blank page from a drawn one without an imaging library."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos:pos + 4])
        kind, data = png[pos + 4:pos + 8], png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and colour in (2, 6)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours: set[bytes] = set()
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 0xFF
            elif f == 2:
                line[x] = (line[x] + b) & 0xFF
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        if y % 8 == 0:  # a sample of rows is plenty
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 4))
        prev = line
    return width, height, colours


class _Numbers(HTMLParser):
    """(data-path, data-format, text) of every element that carries `data-path`."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str | None, str]] = []
        self._open: list[tuple[str, str | None, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("data-path"):
            self._open.append((str(a["data-path"]), a.get("data-format"), []))

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][2].append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and tag in ("td", "span"):
            path, fmt, text = self._open.pop()
            self.found.append((path, fmt, "".join(text).strip()))


def _at(doc: Any, path: str) -> Any:
    node = doc
    for part in path.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("report12-browser")
    write_batch(tmp / "episodes")
    verdicts = tmp / "v.jsonl"
    main(["check", str(tmp / "episodes"), "--format", "jsonl", "-o", str(verdicts)])
    for fmt in ("html", "json"):
        assert main(["report", str(verdicts), "--by", "run.model,run.attack", "--format", fmt,
                     "-o", str(tmp / f"report.{fmt}")]) == 0
    return {"tmp": tmp, "html": tmp / "report.html", "json": json.loads((tmp / "report.json").read_text("utf-8"))}


def test_the_page_renders_and_is_not_blank(rendered: dict[str, Any]) -> None:
    tmp = rendered["tmp"]
    shot = tmp / "shot.png"
    proc = _chromium(f"--screenshot={shot}", "--window-size=1200,2400", "--hide-scrollbars",
                     rendered["html"].as_uri(), cwd=tmp)
    assert shot.exists(), proc.stderr[-2000:]
    width, height, colours = _pixels(shot.read_bytes())
    assert (width, height) == (1200, 2400)
    assert len(colours) > 20  # text, table rules and the charts' colours; a blank page has one
    assert not _console(proc.stderr)


def test_console_errors_would_be_seen(rendered: dict[str, Any]) -> None:
    """The console check above can fail: a page that logs an error is caught the same way."""
    tmp = rendered["tmp"]
    page = tmp / "noisy.html"
    page.write_text("<!DOCTYPE html><title>x</title><script>console.error('boom')</script>", "utf-8")
    proc = _chromium("--dump-dom", page.as_uri(), cwd=tmp)
    assert any("boom" in line for line in _console(proc.stderr))


def test_numbers_in_the_dom_equal_the_json_report(rendered: dict[str, Any]) -> None:
    tmp = rendered["tmp"]
    proc = _chromium("--dump-dom", rendered["html"].as_uri(), cwd=tmp)
    assert "<section" in proc.stdout, proc.stderr[-2000:]
    assert not _console(proc.stderr)
    parser = _Numbers()
    parser.feed(proc.stdout)
    assert len(parser.found) > 100
    report = rendered["json"]
    for path, fmt, text in parser.found:
        value = _at(report, path)
        if value is None:
            assert text == "n/a", path
        elif fmt == "pct":
            assert re.fullmatch(r"-?\d+\.\d%", text), (path, text)
            assert float(text[:-1]) == pytest.approx(100 * value, abs=0.05 + 1e-9), path
        elif fmt == "fixed3":
            assert float(text) == pytest.approx(value, abs=5e-4 + 1e-12), path
        else:
            assert int(text) == value, path
    paths = {p for p, _, _ in parser.found}
    assert {"summary.REJECTED", "flow.groups.0.scored", "rates.groups.0.rates.0.validated.lo"} <= paths
