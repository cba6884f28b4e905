"""Compressed data inside base64 or hex (domain/printable.py, `_inflated`): a gzip or zlib payload is
inflated and searched; one that inflates past printable.INFLATED_MAX makes the search unknown (an
explained reject), never clean."""

from __future__ import annotations

import base64
import gzip
import zlib

import pytest

from litmus_rules.domain import printable
from litmus_rules.domain.decoding import LimitUnknown
from litmus_rules.domain.matching import first_leak, leaks

TOKEN = "lc-5f0e9a1d7c3b"


@pytest.mark.parametrize("blob", [
    gzip.compress(f"forward the report to {TOKEN}".encode()),
    zlib.compress(f"note {TOKEN}".encode(), 9),
    zlib.compress(("padding " * 40 + TOKEN).encode(), 1),
    zlib.compress(f"{TOKEN} é ü".encode()),
])
@pytest.mark.parametrize("encode", [lambda b: base64.b64encode(b).decode(), bytes.hex,
                                    lambda b: base64.urlsafe_b64encode(b).decode()])
def test_a_compressed_payload_is_inflated(blob: bytes, encode: object) -> None:
    text = f"attachment: {encode(blob)} (end)"  # type: ignore[operator]
    witness = leaks(TOKEN, text)
    assert witness is not None, text
    assert first_leak(TOKEN, ["plain text", text]) == (1, witness)


def test_a_stream_cut_short_is_read_as_far_as_it_goes() -> None:
    blob = zlib.compress(f"{TOKEN} and then a long tail of other words to cut".encode())
    assert leaks(TOKEN, base64.b64encode(blob[: len(blob) - 12]).decode()) is not None


def test_past_the_limit_the_search_is_unknown_and_names_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(printable, "INFLATED_MAX", 1 << 12)
    bomb = base64.b64encode(gzip.compress(b"A" * (1 << 14) + TOKEN.encode())).decode()
    with pytest.raises(LimitUnknown, match="INFLATED_MAX"):
        leaks("zz-zzzzzzzz", f"x {bomb}")
    with pytest.raises(LimitUnknown) as caught:
        first_leak("zz-zzzzzzzz", ["plain", "other", f"y {bomb}"])
    assert getattr(caught.value, "index", None) == 2


@pytest.mark.parametrize("raw", [b"x\x9c\xff\xff\xff\xff", b"\x1f\x8b\x08" + bytes(range(40)), b"x" * 40, b"\x78\x01"])
def test_bytes_that_only_look_compressed_are_not_text(raw: bytes) -> None:
    assert printable._printable(raw) is None or printable._printable(raw) == raw.decode("utf-8", "replace")
    assert printable._printable_many([raw]) == [printable._printable(raw)]


def test_deflate_without_a_header_is_not_guessed() -> None:
    blob = zlib.compress(TOKEN.encode())[2:-4]
    assert leaks(TOKEN, base64.b64encode(blob).decode()) is None


def test_many_small_bombs_share_one_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # each inflates to less than the limit, all of them together to more: unknown, not a gigabyte
    monkeypatch.setattr(printable, "INFLATED_MAX", 1 << 16)
    bomb = base64.b64encode(gzip.compress(b"A" * (1 << 13), mtime=0)).decode()
    with pytest.raises(LimitUnknown, match="INFLATED_MAX"):
        leaks("zz-zzzzzzzz", " ".join([bomb] * 40))
