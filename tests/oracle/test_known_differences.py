"""Differences from Apache Kafka found by asking it, each pinned on mockkafka and on Kafka.

Every test runs twice (``target``: mockkafka, then a real Kafka 4.4 broker) and passes on
both; each failed on mockkafka before the fix it names.
"""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest

from mockkafka.protocol.apis import API_BY_NAME, request_header_version
from mockkafka.protocol.codec import message_fields
from tests.interop.conftest import unique
from tests.oracle.conftest import Target
from tests.robustness._wire import Raw, frame

pytestmark = pytest.mark.kafka_oracle

#: ApiVersions v3+ names the client software (Kafka refuses an empty name).
_SOFTWARE = {"client_software_name": "mockkafka-oracle", "client_software_version": "1"}


def _coordinator(raw: Raw, key_type: int, key: str) -> dict[str, Any]:
    """FindCoordinator v4 until it answers (Kafka says COORDINATOR_NOT_AVAILABLE while it
    creates the internal topic); bounded to 15 s."""
    deadline = time.monotonic() + 15
    while True:
        body = raw.request("FindCoordinator", 4, {"key_type": key_type, "coordinator_keys": [key]})
        found: dict[str, Any] = body["coordinators"][0]
        if found["error_code"] == 0 or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _internal_topics(raw: Raw) -> dict[str, tuple[bool, int]]:
    body = raw.request("Metadata", 12, {"topics": None})
    return {
        t["name"]: (t["is_internal"], len(t["partitions"]))
        for t in body["topics"]
        if t["name"].startswith("__")
    }


@pytest.mark.parametrize(
    ("key_type", "topic"), [(0, "__consumer_offsets"), (1, "__transaction_state")]
)
def test_first_coordinator_lookup_creates_the_internal_topic_metadata_then_lists(
    target: Target, key_type: int, topic: str
) -> None:
    with Raw("127.0.0.1", target.port, timeout=10) as raw:
        assert _coordinator(raw, key_type, unique("key"))["error_code"] == 0
        assert _internal_topics(raw).get(topic) == (True, 50)
        named = raw.request(
            "Metadata", 12, {"topics": [{"name": topic}], "allow_auto_topic_creation": False}
        )["topics"]
        assert [(t["name"], t["error_code"], t["is_internal"]) for t in named] == [(topic, 0, True)]


def test_a_metadata_request_does_not_create_an_internal_topic_as_a_normal_one(
    target: Target,
) -> None:
    """Before the fix mockkafka auto-created ``__transaction_state`` as a one-partition,
    not-internal topic when Metadata named it."""
    with Raw("127.0.0.1", target.port, timeout=10) as raw:
        named = raw.request("Metadata", 12, {"topics": [{"name": "__transaction_state"}]})["topics"]
        (entry,) = named
        assert entry["is_internal"] is True
        if entry["error_code"] == 0:  # a coordinator lookup of another test created it
            assert len(entry["partitions"]) == 50
        else:
            assert entry["error_code"] == 3  # UNKNOWN_TOPIC_OR_PARTITION


def _null_key_find_coordinator(version: int) -> bytes:
    flexible = version >= 3
    hdr = struct.pack(">hhih", 10, version, 11, 6) + b"oracle" + (b"\x00" if flexible else b"")
    key = b"\x00" if flexible else b"\xff\xff"  # a null string
    return frame(hdr + key + b"\x00" + (b"\x00" if flexible else b""))


@pytest.mark.parametrize("version", [1, 2, 3])
def test_null_in_a_non_nullable_string_closes_the_connection_unanswered(
    target: Target, version: int
) -> None:
    """Kafka fails to parse the request and closes the connection (mockkafka answered
    UNKNOWN_SERVER_ERROR from inside the handler before the fix)."""
    with Raw("127.0.0.1", target.port) as raw:
        raw.send(_null_key_find_coordinator(version))
        assert raw.closed_by_broker(wait=5.0)
    with Raw("127.0.0.1", target.port) as raw:  # the broker itself is unharmed
        assert raw.request("ApiVersions", 3, _SOFTWARE)["error_code"] == 0


def _first_nullable_violation(api_name: str, version: int) -> bytes | None:
    """A request frame of ``api_name`` v``version`` whose first top-level field is a
    non-nullable string or array sent as null, the fields before it at their zero values;
    None when the message has no such field before a field of another kind."""
    api = API_BY_NAME[api_name]
    flexible = api.request_flexible(version)
    hv = request_header_version(api.key, version)
    hdr = struct.pack(">hhih", api.key, version, 13, 6) + b"oracle"
    if hv >= 2:
        hdr += b"\x00"
    body = b""
    for _name, ftype, versions, nullable, tagged, *_ in message_fields(api.request_name, version):
        if versions is None or not versions[0] <= version <= versions[1]:
            continue
        if flexible and tagged is not None and tagged[0] <= version <= tagged[1]:
            continue
        is_nullable = nullable is not None and nullable[0] <= version <= nullable[1]
        if ftype in ("string", "bytes") or ftype.startswith("[]"):
            if not is_nullable:
                wide = b"\xff\xff" if ftype == "string" else b"\xff\xff\xff\xff"
                return frame(hdr + body + (b"\x00" if flexible else wide))
            body += b"\x00" if flexible else (b"\xff\xff" if ftype == "string" else b"\xff" * 4)
        elif ftype in ("int8", "bool"):
            body += b"\x00"
        elif ftype in ("int16",):
            body += b"\x00" * 2
        elif ftype in ("int32",):
            body += b"\x00" * 4
        elif ftype in ("int64", "float64"):
            body += b"\x00" * 8
        elif ftype == "uuid":
            body += b"\x00" * 16
        else:
            return None
    return None


#: Requests one broker refuses before parsing them on a fresh PLAINTEXT connection for a
#: reason of its own (ApiVersions: Kafka answers UNSUPPORTED_VERSION-style errors itself;
#: SaslHandshake/SaslAuthenticate: the SASL state machine reads them).
_NOT_PARSED_LIKE_OTHERS = {"ApiVersions", "SaslHandshake", "SaslAuthenticate"}


def test_every_api_refuses_a_null_in_its_first_non_nullable_field(target: Target) -> None:
    """For each API mockkafka serves, at its newest version Kafka 4.4 also serves, a null in
    the first non-nullable top-level field closes the connection on both brokers."""
    from mockkafka.handlers.base import load_handlers

    served = load_handlers()
    with Raw("127.0.0.1", target.port) as raw:
        kafka_versions = {
            a["api_key"]: a["max_version"]
            for a in raw.request("ApiVersions", 3, _SOFTWARE)["api_keys"]
        }
    checked, answered = [], []
    for key in sorted(served):
        api = next(a for a in API_BY_NAME.values() if a.key == key)
        if api.name in _NOT_PARSED_LIKE_OTHERS or key not in kafka_versions:
            continue
        version = min(kafka_versions[key], served[key].max_version)
        request = _first_nullable_violation(api.name, version)
        if request is None:
            continue
        with Raw("127.0.0.1", target.port) as raw:
            raw.send(request)
            if not raw.closed_by_broker(wait=3.0):
                answered.append(f"{api.name} v{version}")
        checked.append(api.name)
    assert len(checked) >= 30, checked
    assert answered == [], f"answered instead of closing: {answered}"


def test_refused_oauthbearer_token_fails_with_the_json_error_of_the_challenge(
    target: Target,
) -> None:
    """Kafka's SASL_AUTHENTICATION_FAILED message is the challenge's JSON itself (mockkafka
    sent a prose message before the fix)."""
    with Raw("127.0.0.1", target.sasl_port) as raw:
        assert raw.request("SaslHandshake", 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        first = b"n,,\x01auth=Bearer not.a.jws\x01\x01"
        challenge = raw.request("SaslAuthenticate", 2, {"auth_bytes": first})
        assert (challenge["error_code"], challenge["auth_bytes"]) == (
            0,
            b'{"status":"invalid_token"}',
        )
        failed = raw.request("SaslAuthenticate", 2, {"auth_bytes": b"\x01"})
        assert (failed["error_code"], failed["error_message"]) == (
            58,  # SASL_AUTHENTICATION_FAILED
            '{"status":"invalid_token"}',
        )
        assert raw.closed_by_broker(wait=5.0)


_ACL_FILTER = {
    "resource_type_filter": 2,
    "resource_name_filter": None,
    "pattern_type_filter": 3,
    "principal_filter": None,
    "host_filter": None,
    "operation": 1,
    "permission_type": 1,
}


@pytest.mark.parametrize(
    "field", ["resource_type_filter", "pattern_type_filter", "operation", "permission_type"]
)
def test_an_acl_filter_with_an_unknown_enum_closes_the_connection(
    target: Target, field: str
) -> None:
    """Kafka's DescribeAclsRequest refuses UNKNOWN (0) while parsing; another unknown code
    (99) parses and is answered (SECURITY_DISABLED: neither broker has an authorizer)."""
    with Raw("127.0.0.1", target.port) as raw:
        assert raw.request("DescribeAcls", 3, {**_ACL_FILTER, field: 99})["error_code"] == 54
        raw.send(raw.conn.send_request("DescribeAcls", 3, {**_ACL_FILTER, field: 0}))
        assert raw.closed_by_broker(wait=5.0)
