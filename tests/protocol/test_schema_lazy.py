"""The schema table is parsed per message on first use: a process that speaks a few APIs
(``mockkafka serve`` answering its first ApiVersions) does not pay for all of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mockkafka.protocol.apis import API_BY_NAME
from mockkafka.protocol.codec import MESSAGES, SUMMARY

ROOT = Path(__file__).resolve().parents[2]


def test_a_fresh_process_parses_only_the_messages_it_uses() -> None:
    code = (
        "from mockkafka.protocol import apis, codec\n"
        "assert apis.API_BY_NAME['Produce'].max_version >= 9\n"
        "parsed = codec.MESSAGES._parsed\n"
        "assert not parsed, sorted(parsed)\n"
        "codec.codec('ApiVersionsRequest', 3)\n"
        "print(sorted(parsed))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['ApiVersionsRequest']"


def test_the_summary_agrees_with_every_parsed_message() -> None:
    assert len(MESSAGES) == len(SUMMARY) > 100
    for name, (api_key, kind, bounds) in SUMMARY.items():
        msg = MESSAGES[name]
        assert (msg["api_key"], msg["type"]) == (api_key, kind)
        assert [s[:3] for s in msg["segments"]] == [tuple(b) for b in bounds]
        assert all(isinstance(s[3], list) for s in msg["segments"])
    produce = MESSAGES["ProduceRequest"]
    assert produce["segments"][-1][1] == API_BY_NAME["Produce"].max_version
    assert MESSAGES.get("NoSuchRequest") is None
