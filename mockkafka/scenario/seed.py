"""Seed data for scenarios: records from faker templates, reproducible from a seed.

A template is a string where ``{{ faker.PROVIDER }}`` and ``{{ index }}`` are replaced
(``"order-{{ index }}"``, ``"{{ faker.uuid4 }}"``), or a mapping
``{faker: PROVIDER, ...keyword arguments}``; ``{faker: json, fields: {name: name}}`` is a
JSON object whose values come from the named providers. A string template starting with
``{`` (not a ``{{`` field) or ``[`` is JSON (``'{"id": {{ index }}, "note": "{{ faker.paragraph }}"}'``): faker
values are escaped as JSON string content, and the loader refuses one whose records would
not parse. The same ``random_seed`` gives the same records.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable
from typing import Any

from mockkafka.scenario.plan import Path, ScenarioError, SeedSpec, did_you_mean

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")

Render = Callable[[Any, int], str | None]


def _faker(seed: int) -> Any:
    """A seeded Faker, or None where faker is not installed (an optional extra: its own
    pytest plugin would cost every pytest session of a user)."""
    try:
        from faker import Faker
    except ImportError:
        return None
    fake = Faker()
    fake.seed_instance(seed)
    return fake


def _provider(fake: Any, name: str, path: Path) -> Callable[..., Any]:
    if fake is None:
        raise ScenarioError(
            path,
            f"faker.{name} needs the faker package: pip install faker (the [scenarios] extra: pip install '.[scenarios]' in a clone) "
            '(or use a plain template such as "order-{{ index }}")',
        )
    fn = getattr(fake, name, None) if not name.startswith("_") else None
    if not callable(fn):
        known = [n for n in dir(fake) if not n.startswith("_")]
        raise ScenarioError(
            path, f"{name!r} is not a faker provider{did_you_mean(name, known)} (e.g. uuid4, name)"
        )
    return fn  # type: ignore[no-any-return]


def _const(text: str) -> Callable[[int], str]:
    return lambda _i: text


def _call(fn: Callable[[], Any]) -> Callable[[int], str]:
    return lambda _i: str(fn())


def _is_json(template: str) -> bool:
    """Whether a string template is JSON: it starts with ``{`` (not a ``{{`` field) or ``[``."""
    text = template.lstrip()
    return text.startswith("[") or (text.startswith("{") and not text.startswith("{{"))


def _json_escaped(part: Callable[[int], str]) -> Callable[[int], str]:
    """A value as the inside of a JSON string: a quote or backslash from faker cannot end
    the string early."""
    return lambda i: json.dumps(part(i))[1:-1]


def renderer(template: Any, fake: Any, path: Path) -> Render:
    """Check ``template`` now (unknown providers raise ScenarioError) and return a function
    ``(index) -> str`` producing one value."""
    if template is None:
        return lambda _t, _i: None
    if isinstance(template, tuple):  # a frozen mapping
        args = dict(template)
        prov = args.pop("faker")
        if prov == "json":
            fields = dict(args.pop("fields", ()))
            if args:
                raise ScenarioError(path, f"faker json takes fields only, got {sorted(args)}")
            fns = {k: _provider(fake, str(v), (*path, "fields", k)) for k, v in fields.items()}
            return lambda _t, _i: json.dumps({k: str(f()) for k, f in fns.items()})
        fn = _provider(fake, str(prov), (*path, "faker"))
        return lambda _t, _i: str(fn(**args))
    text = str(template)
    is_json = _is_json(text)
    parts: list[Callable[[int], str]] = []
    pos = 0
    for m in _FIELD.finditer(text):
        lit = text[pos : m.start()]
        parts.append(_const(lit))
        name = m.group(1)
        if name == "index":
            parts.append(str)
        elif name.startswith("faker."):
            fn = _provider(fake, name[len("faker.") :], path)
            parts.append(_json_escaped(_call(fn)) if is_json else _call(fn))
        else:
            raise ScenarioError(
                path,
                f"unknown template field {{{{ {name} }}}}; use {{{{ index }}}} or "
                "{{ faker.PROVIDER }}",
            )
        pos = m.end()
    tail = text[pos:]
    parts.append(lambda _i: tail)
    return lambda _t, i: "".join(p(i) for p in parts)


def seed_records(
    spec: SeedSpec, random_seed: int, partitions: int
) -> list[tuple[int, str | None, str | None]]:
    """The seed records of one topic: ``[(partition, key, value)]``, the same for the same
    ``random_seed``."""
    fake = _faker(random_seed * 1_000_003 + zlib.crc32(spec.topic.encode()))
    path: Path = ("seed", spec.topic)
    key_fn = renderer(spec.key, fake, (*path, "key"))
    value_fn = renderer(spec.value, fake, (*path, "value"))
    out = []
    for i in range(spec.count):
        key = key_fn(None, i)
        value = value_fn(None, i)
        if spec.partition is not None:
            part = spec.partition
        elif key is not None:
            part = zlib.crc32(key.encode()) % partitions
        else:
            part = i % partitions
        out.append((part, key, value))
    return out


def check_templates(spec: SeedSpec, random_seed: int) -> None:
    """Raise ScenarioError now for an unknown provider or template field, or a JSON
    template (one starting with ``{`` or ``[``) whose records would not be JSON."""
    fake = _faker(random_seed)
    for part, template in (("key", spec.key), ("value", spec.value)):
        path: Path = ("seed", spec.topic, part)
        render = renderer(template, fake, path)
        if isinstance(template, str) and _is_json(template):
            sample = render(None, 0)
            try:
                json.loads(sample or "")
            except ValueError as exc:
                raise ScenarioError(
                    path,
                    f"{template!r} starts like JSON but its records are not JSON "
                    f"({exc}; the first would be {sample!r}): check its braces and quotes "
                    '(a field standing for text goes in quotes: "{{ faker.name }}")',
                ) from None
