"""mockkafka's Kafka 4 config model against what real Kafka brokers report.

``mockkafka/cluster/_recorded_configs.py`` holds the DescribeConfigs answers of Apache Kafka
4.0-4.4 brokers (``tools/record_kafka_releases.py``). Every topic config Kafka 4.4 has is
modelled with its type, default and the broker config that supplies it; every broker config
mockkafka models exists in Kafka 4.4 with the same type, default and read-only flag. A
difference that stays is listed, with its reason, in ``tests/oracle/allowed.py``.
"""

from __future__ import annotations

from collections.abc import Iterator

from mockkafka.cluster._recorded_configs import RECORDED_CONFIGS
from mockkafka.cluster.configs import BROKER_CONFIG_DEFS, TOPIC_CONFIG_DEFS, TOPIC_TO_BROKER
from mockkafka.protocol._releases_recorded import RECORDED
from mockkafka.protocol.releases import RELEASE_API_VERSIONS, normalize_release
from tests.oracle.allowed import allowed_by
from tests.oracle.harness import Difference

NEWEST = max(RECORDED_CONFIGS, key=lambda r: tuple(int(x) for x in r.split(".")))


def _differences() -> Iterator[Difference]:
    rec = RECORDED_CONFIGS[NEWEST]

    def d(path: str, fake: object, kafka: object) -> Difference:
        return Difference("configs", 0, "DescribeConfigs", 4, path, fake, kafka)

    for name, (ctype, default, supplier) in sorted(rec["topic"].items()):
        model = TOPIC_CONFIG_DEFS.get(name)
        if model is None:
            yield d(f"topic:{name}.missing", None, (ctype, default))
            continue
        if int(model.type) != ctype:
            yield d(f"topic:{name}.type", int(model.type), ctype)
        if model.default != default:
            yield d(f"topic:{name}.default", model.default, default)
        if name in TOPIC_TO_BROKER and TOPIC_TO_BROKER[name] != supplier:
            yield d(f"topic:{name}.supplier", TOPIC_TO_BROKER[name], supplier)
    for name, model in sorted(BROKER_CONFIG_DEFS.items()):
        if name not in rec["broker"]:
            yield d(f"broker:{name}.unknown", name, None)
            continue
        ctype, default, read_only = rec["broker"][name]
        if int(model.type) != ctype:
            yield d(f"broker:{name}.type", int(model.type), ctype)
        if model.default != default:
            yield d(f"broker:{name}.default", model.default, default)
        if (not model.dynamic) != read_only:
            yield d(f"broker:{name}.read_only", not model.dynamic, read_only)


def test_the_config_model_matches_kafka_or_says_why() -> None:
    unexplained = [
        f"{x.path}: mockkafka={x.fake!r} kafka={x.kafka!r}"
        for x in _differences()
        if allowed_by(x) is None
    ]
    assert unexplained == [], "\n".join(unexplained)


def test_every_config_allowance_is_still_needed() -> None:
    from tests.oracle.allowed import ALLOWED

    used = {allowed_by(x) for x in _differences()}
    stale = [e.key for e in ALLOWED if e.kind == "config" and e.key not in used]
    assert stale == []


def test_recorded_releases_are_presets_with_their_brokers_api_versions() -> None:
    for release, data in RECORDED.items():
        assert normalize_release(release) == release
        assert RELEASE_API_VERSIONS[release] == data["apis"]
    assert normalize_release("4.4.0") == "4.4"
