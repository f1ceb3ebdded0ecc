"""Generate ``mockkafka/cluster/_release_configs.py``: the broker and topic configs of each
Apache Kafka release from 0.11 to 3.9 (names, types, defaults, dynamic update modes, the
broker config that supplies a topic config's default), so a release preset
(``Cluster(kafka_version="3.9")``) reports configs as that release does.

The facts come from the Apache Kafka website repository (``apache/kafka-site``): each
release folder (``0110``, ``10``, ``11``, ``20`` ... ``39``) holds the generated config
reference ``generated/kafka_config.html`` (broker) and ``generated/topic_config.html``.
Three layouts occur: a ``data-table`` (0.11 - 2.3), ``horizontal-list`` items (2.4 - 2.x)
and ``<h4>`` headed tables (later). Only the facts are kept (no descriptions); the HTML is
not part of this repository. 4.x presets use the Kafka 4 model of ``cluster/configs.py``.

Encoding: the newest release is stored in full; each older release stores only what differs
from the next newer one (a name mapped to None: that release did not have it).

Usage::

    python tools/gen_release_configs.py --site PATH [--check]

``PATH`` is a checkout of ``apache/kafka-site`` or its bare git directory (read with
``git show HEAD:...``). Without ``--site``, ``$KAFKA_SITE`` or ``../kafka-site``.
``--check`` exits 1 when the committed module differs from what the site gives.
"""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "mockkafka" / "cluster" / "_release_configs.py"
DEFAULT_SITE = Path(os.environ.get("KAFKA_SITE", ROOT.parent / "kafka-site"))

# kafka-site folder -> release name (as in mockkafka/protocol/_releases_data.py).
FOLDERS: dict[str, str] = {
    "0110": "0.11",
    "10": "1.0",
    "11": "1.1",
    **{f"2{n}": f"2.{n}" for n in range(9)},
    **{f"3{n}": f"3.{n}" for n in range(10)},
}

TYPES = {
    "boolean": 1,
    "string": 2,
    "int": 3,
    "short": 4,
    "long": 5,
    "double": 6,
    "list": 7,
    "class": 8,
    "password": 9,
}
"""Type names of the reference -> ``ConfigType`` numbers (DescribeConfigs ``config_type``)."""

MODES = {"read-only": 0, "per-broker": 1, "cluster-wide": 2}

_TAG = re.compile(r"<[^>]+>")
_WITH_UNIT = re.compile(r"^(-?\d+) \([^)]*\)$")  # "604800000 (7 days)"
_RANGE = re.compile(r"^\[(-?[\d.E]+),\.\.\.(?:,(-?[\d.E]+))?\]$")  # [1,...] / [0,...,9]
_CHOICES = re.compile(r"^\[([A-Za-z0-9_.-]+(?:, [A-Za-z0-9_.-]+)*)\]$")  # [delete, compact]


class Site:
    """Files of a kafka-site checkout or bare git directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bare = not (path / "39").is_dir() and (path / "HEAD").is_file()
        self.commit = self._git("rev-parse", "HEAD").strip()

    def _git(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.path), *args], capture_output=True, text=True, check=True
        ).stdout

    def read(self, rel: str) -> str:
        if self.bare:
            return self._git("show", f"HEAD:{rel}")
        return (self.path / rel).read_text(encoding="utf-8")


def _text(fragment: str) -> str:
    return html.unescape(_TAG.sub("", fragment)).strip()


def parse_reference(page: str) -> list[dict[str, str]]:
    """One dict per config of a generated reference page: Name, Type, Default, ..."""
    if page.lstrip().startswith("<table"):
        return _parse_table(page)
    if 'class="horizontal-list"' in page:
        return _parse_horizontal(page)
    return _parse_headed(page)


def _parse_table(page: str) -> list[dict[str, str]]:
    header: list[str] = []
    rows = []
    for row in page.split("<tr>")[1:]:
        heads = re.findall(r"<th>(.*?)</th>", row, re.S)
        if heads:
            header = [_text(h) for h in heads]
            continue
        cells = [_text(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _parse_horizontal(page: str) -> list[dict[str, str]]:
    rows = []
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^<li><b>([\w.-]+)</b>:", page, re.M)]
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(page)
        block = page[pos:end]
        attrs = block[block.rindex('<ul class="horizontal-list">') :]
        row = {"Name": name}
        for key, value in re.findall(r"<li><b>([^<]+)</b>:(.*?)</li>", attrs, re.S):
            row[_text(key)] = _text(value)
        rows.append(row)
    return rows


def _parse_headed(page: str) -> list[dict[str, str]]:
    rows = []
    parts = re.split(r"<h4[^>]*>(.*?)</h4>", page, flags=re.S)
    for heading, block in zip(parts[1::2], parts[2::2], strict=True):
        row = {"Name": _text(heading)}
        for key, value in re.findall(r"<tr><th>([^<]+)</th><td>(.*?)</td></tr>", block, re.S):
            row[_text(key).rstrip(":")] = _text(value)
        rows.append(row)
    return rows


def _default(text: str | None) -> str | None:
    if text is None or text == "" or text == "null":
        return None  # no default: the config has no value unless set
    if text == '""':
        return ""
    m = _WITH_UNIT.match(text)
    return m.group(1) if m else text


def _valid(text: str | None) -> str | None:
    """The valid-values text when mockkafka checks it: a range, or a few choices (long
    lists, the message format versions, change every release and are not checked)."""
    if text and (_RANGE.match(text) or (_CHOICES.match(text) and text.count(",") < 8)):
        return text
    return None


Entry = tuple[object, ...]


def release_configs(site: Site, folder: str) -> tuple[dict[str, Entry], dict[str, Entry]]:
    """(broker configs, topic configs) of one release folder.

    Broker entry: (type, default, update mode, valid values); topic entry: (type, default,
    server default property, valid values). Before 1.1 no broker config was dynamic.
    """
    broker: dict[str, Entry] = {}
    for row in parse_reference(site.read(f"{folder}/generated/kafka_config.html")):
        mode = row.get("Update Mode", row.get("Dynamic Update Mode", "read-only"))
        broker[row["Name"]] = (
            TYPES[row["Type"]],
            _default(row.get("Default")),
            MODES[mode],
            _valid(row.get("Valid Values")),
        )
    topic: dict[str, Entry] = {}
    for row in parse_reference(site.read(f"{folder}/generated/topic_config.html")):
        topic[row["Name"]] = (
            TYPES[row["Type"]],
            _default(row.get("Default")),
            _default(row.get("Server Default Property")),
            _valid(row.get("Valid Values")),
        )
    return broker, topic


def _delta(older: dict[str, Entry], newer: dict[str, Entry]) -> dict[str, Entry | None]:
    out: dict[str, Entry | None] = {k: None for k in newer if k not in older}
    out.update({k: v for k, v in older.items() if newer.get(k) != v})
    return dict(sorted(out.items()))


def render(site: Site) -> str:
    releases = sorted(FOLDERS, key=lambda f: tuple(int(x) for x in FOLDERS[f].split(".")))
    data = {f: release_configs(site, f) for f in releases}
    newest = releases[-1]
    lines = [
        f'''"""Broker and topic configs of each Apache Kafka release, 0.11 to {FOLDERS[newest]}.

Generated by ``tools/gen_release_configs.py``; do not edit. Facts (names, types, defaults,
dynamic update modes, the broker config that supplies a topic default, checked valid values)
from the generated config reference of the Apache Kafka website repository,
github.com/apache/kafka-site at commit {site.commit},
``<release>/generated/kafka_config.html`` and ``<release>/generated/topic_config.html``.

``BROKER[release]`` / ``TOPIC[release]``: the newest release in full, each older one only as
its difference from the next newer release (None: that release did not have the config).
Broker entry: (config_type, default, update mode 0 read-only / 1 per-broker / 2
cluster-wide, valid values); topic entry: (config_type, default, server default property,
valid values). Read through :mod:`mockkafka.cluster.release_configs`.
"""

# fmt: off
NEWEST = {FOLDERS[newest]!r}
''',
    ]
    for index, title in ((0, "BROKER"), (1, "TOPIC")):
        lines.append(f"\n{title}: dict[str, dict[str, tuple[object, ...] | None]] = {{\n")
        newer: dict[str, Entry] | None = None
        for folder in reversed(releases):
            configs = data[folder][index]
            table = dict(sorted(configs.items())) if newer is None else _delta(configs, newer)
            lines.append(f"    {FOLDERS[folder]!r}: {{\n")
            lines.extend(f"        {k!r}: {v!r},\n" for k, v in table.items())
            lines.append("    },\n")
            newer = configs
        lines.append("}\n")
    lines.append("# fmt: on\n")
    return "".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--site", type=Path, default=DEFAULT_SITE, help="kafka-site checkout or git dir"
    )
    ap.add_argument("--check", action="store_true", help="exit 1 if the module is stale")
    args = ap.parse_args()
    if not args.site.exists():
        print(f"no kafka-site at {args.site}; give --site PATH", file=sys.stderr)
        return 2
    text = render(Site(args.site))
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale: run tools/gen_release_configs.py --site {args.site}")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
