"""The handler registry, the request context and the ways a handler can answer.

Each module in ``mockkafka/handlers/`` serves one API and registers it with
:func:`handler`, stating the versions it serves::

    @handler("Metadata", versions=(0, 13))
    def handle(ctx: RequestContext, request: Message) -> Result: ...

ApiVersions is built from this registry (capped by ``cluster.api_version_caps``); a version
without a handler is not advertised. Registering an API twice is an error.

A handler returns one of:

* a response ``dict`` (missing fields take schema defaults);
* :data:`NO_RESPONSE` -- send nothing (Produce with acks=0);
* :class:`Park` -- answer later: the server waits until one of ``keys`` is notified by the
  cluster (``ClusterState.notify``) or ``deadline_ms`` passes, then calls ``resume``, which
  returns any of these again. Long-polling Fetch and JoinGroup use this.

Handlers never raise for Kafka-level failures; they answer with error codes. Use
:func:`error_response` to fill every error field of a response with one code.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mockkafka.cluster.state import ClusterState
from mockkafka.handlers._context import (
    NO_RESPONSE,
    Park,
    RequestContext,
    Result,
    error_response,
)
from mockkafka.handlers.authz import gate
from mockkafka.protocol.apis import API_BY_NAME, Api
from mockkafka.protocol.codec import Message
from mockkafka.protocol.framing import RequestHeader

__all__ = [
    "HANDLERS",
    "NO_RESPONSE",
    "Handler",
    "HandlerSpec",
    "Park",
    "RequestContext",
    "Result",
    "call_handler",
    "error_response",
    "handler",
    "load_handlers",
    "prepare",
    "served_versions",
]


Handler = Callable[[RequestContext, Message], Result]


@dataclass(frozen=True, slots=True)
class HandlerSpec:
    api: Api
    min_version: int
    max_version: int
    fn: Handler


HANDLERS: dict[int, HandlerSpec] = {}


# served_versions() tables by caps; a new handler clears it.
_SERVED: dict[
    tuple[bool, bool, str | None, tuple[tuple[int, int], ...]], dict[int, tuple[int, int]]
] = {}


def handler(api_name: str, *, versions: tuple[int, int]) -> Callable[[Handler], Handler]:
    """Register ``fn`` as the handler of ``api_name`` for the inclusive version range."""
    a = API_BY_NAME[api_name]
    lo, hi = versions
    if lo < a.min_version or hi > a.max_version or lo > hi:
        raise ValueError(
            f"{api_name} handler versions {lo}-{hi} outside schema range "
            f"{a.min_version}-{a.max_version}"
        )

    def register(fn: Handler) -> Handler:
        known = HANDLERS.get(a.key)
        if known is not None and not getattr(known.fn, "lazy", False):
            raise ValueError(f"{api_name} has two handlers: {known.fn} and {fn}")
        if known is not None and (known.min_version, known.max_version) != (lo, hi):
            raise ValueError(
                f"{api_name}: mockkafka/handlers/_index.py says versions "
                f"{known.min_version}-{known.max_version}, the handler {lo}-{hi}; "
                "regenerate it: python tools/gen_handler_index.py"
            )
        HANDLERS[a.key] = HandlerSpec(a, lo, hi, fn)
        if known is None:
            _SERVED.clear()  # (a module loaded on first use serves what the index said)
        return fn

    return register


_loaded = False


def load_handlers() -> dict[int, HandlerSpec]:
    """The registry, every API in it: an API whose module is not imported yet has a stand-in
    (from ``handlers/_index.py``: its module and versions) that imports the module on the
    API's first request, which then replaces it. A ``serve`` answering ApiVersions does not
    import the group, transaction or admin machinery (issue 28)."""
    global _loaded
    if not _loaded:
        from mockkafka.handlers._index import INDEX

        for name, (module, lo, hi) in INDEX.items():
            key = API_BY_NAME[name].key
            if key not in HANDLERS:
                HANDLERS[key] = HandlerSpec(API_BY_NAME[name], lo, hi, _on_first_use(key, module))
        _SERVED.clear()
        _loaded = True
    return HANDLERS


def _on_first_use(key: int, module: str) -> Handler:
    """A stand-in for the handler of API ``key`` in ``module``: imports it (which registers
    the real one in its place) and runs it."""

    def first_use(ctx: RequestContext, request: Message) -> Result:
        importlib.import_module(f"mockkafka.handlers.{module}")
        real = HANDLERS[key].fn
        if real is first_use:
            raise RuntimeError(f"mockkafka.handlers.{module} registered no handler for API {key}")
        return real(ctx, request)

    first_use.lazy = True  # type: ignore[attr-defined]
    return first_use


#: The requests of a test's first moments: a client's bootstrap (ApiVersions, Metadata), a
#: topic (CreateTopics), a producer's id and its first record (InitProducerId, Produce).
FIRST_REQUESTS = ("ApiVersions", "Metadata", "CreateTopics", "InitProducerId", "Produce")


def prepare(cluster: ClusterState, apis: Iterable[str] = FIRST_REQUESTS) -> None:
    """Do now what the first request of each API in ``apis`` would do before it can be
    answered: import its handler module and build its request and response codecs at the
    newest version ``cluster`` serves (the version a current client sends), and load the
    CRC32C of record batches. ``mockkafka serve`` calls it before it prints
    ``bootstrap.servers=``, so that the line means ready (issue 33). The cluster's state is
    read (its served versions), never changed: no topic, group or producer id is made."""
    from mockkafka.protocol.codec import codec
    from mockkafka.protocol.records import load_crc32c

    served = served_versions(cluster)
    for name in apis:
        spec = HANDLERS[API_BY_NAME[name].key]
        if getattr(spec.fn, "lazy", False):
            importlib.import_module(f"mockkafka.handlers.{_index_module(name)}")
        versions = served.get(spec.api.key)
        if versions is not None:
            codec(spec.api.request_name, versions[1])
            codec(spec.api.response_name, versions[1])
    # Every client's first frames: the request headers (v2 is the flexible one) and the
    # ApiVersions v3 that the Java client and librdkafka open with.
    for message, version in _FIRST_FRAMES:
        codec(message, version)
    load_crc32c()


_FIRST_FRAMES = (
    ("RequestHeader", 1),
    ("RequestHeader", 2),
    ("ResponseHeader", 1),
    ("ApiVersionsRequest", 3),
    ("ApiVersionsResponse", 3),
)


def _index_module(api_name: str) -> str:
    from mockkafka.handlers._index import INDEX

    return INDEX[api_name][0]


def handler_modules() -> dict[str, tuple[str, int, int]]:
    """Import every handler module; ``{API name: (module, lowest, highest version)}`` of what
    they register (what ``tools/gen_handler_index.py`` writes to ``handlers/_index.py``)."""
    import mockkafka.handlers as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_") and info.name != "base":
            importlib.import_module(f"mockkafka.handlers.{info.name}")
    out: dict[str, tuple[str, int, int]] = {}
    for spec in HANDLERS.values():
        if getattr(spec.fn, "lazy", False):
            raise RuntimeError(f"no module registers {spec.api.name} any more")
        module = spec.fn.__module__.rpartition(".")[2]
        out[spec.api.name] = (module, spec.min_version, spec.max_version)
    return dict(sorted(out.items()))


# KIP-714 client telemetry. Kafka advertises these only when a client-metrics plugin is
# configured, and librdkafka logs a line to stderr whenever they are advertised; so they are
# served only when the cluster turns them on (ClusterConfig.telemetry).
TELEMETRY_APIS = frozenset({"GetTelemetrySubscriptions", "PushTelemetry"})

# KIP-932 share groups: v0 as Kafka 4.0 served them (early access), v1+ as 4.1+ (GA); advertised
# while the broker config ``group.share.enable`` is true (mockkafka's default). A 4.0 preset,
# whose recorded ApiVersions lack them (a 4.0 broker advertised them only with
# ``unstable.api.versions.enable``), advertises v0 only; 4.1+ presets what they recorded.
SHARE_EARLY_ACCESS_APIS = frozenset(
    {"ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge"}
)
# Kafka 4.1+ (KIP-932 GA): the share-group offset admin APIs.
SHARE_APIS = SHARE_EARLY_ACCESS_APIS | {
    "DescribeShareGroupOffsets",
    "AlterShareGroupOffsets",
    "DeleteShareGroupOffsets",
}


def _release_at_least(kafka_version: str, major: int, minor: int) -> bool:
    parts = kafka_version.split(".")
    try:
        return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0) >= (major, minor)
    except ValueError:
        return False


def served_versions(cluster: ClusterState) -> dict[int, tuple[int, int]]:
    """api key -> (min, max) as this cluster advertises them: the handlers' versions, within
    the ``kafka_version`` preset's (if any), capped by ``cap_api_versions``; the telemetry APIs
    only with ``ClusterConfig.telemetry``, the share-group APIs only with
    ``group.share.enable`` and, except under a 4.0 preset (early access), the finalized
    feature ``share.version`` at 1 or more, as Kafka 4.1+ (see :data:`SHARE_APIS`).

    Every request is checked against it, so the table is built once per (telemetry, share,
    preset, caps); treat the returned dict as read-only.
    """
    telemetry = cluster.config.telemetry
    kafka_version = cluster.config.kafka_version
    share = cluster.broker_configs.get("group.share.enable", "false").lower() == "true"
    early_access = kafka_version is not None and not _release_at_least(kafka_version, 4, 1)
    if share and not early_access:
        from mockkafka.cluster.features import feature_level

        share = feature_level(cluster, "share.version") >= 1
    key_ = (telemetry, share, kafka_version, tuple(cluster.api_version_caps.items()))
    served = _SERVED.get(key_)
    if served is not None:
        return served
    out: dict[int, tuple[int, int]] = {}
    release = None
    if kafka_version is not None:
        from mockkafka.protocol.releases import release_api_versions

        release = release_api_versions(kafka_version)
    for key, spec in load_handlers().items():
        if spec.api.name in TELEMETRY_APIS and not telemetry:
            continue
        if spec.api.name in SHARE_APIS and not share:
            continue
        lo = spec.min_version
        hi = min(spec.max_version, cluster.api_version_caps.get(key, spec.max_version))
        if release is not None and kafka_version is not None:
            if key in release:
                lo, hi = max(lo, release[key][0]), min(hi, release[key][1])
            elif spec.api.name not in SHARE_EARLY_ACCESS_APIS or not _release_at_least(
                kafka_version, 4, 0
            ):
                continue
            else:
                hi = min(hi, 0)  # Kafka 4.0's early-access share APIs
        if hi >= lo:
            out[key] = (lo, hi)
    served = _SERVED[key_] = dict(sorted(out.items()))
    return served


def call_handler(
    cluster: ClusterState,
    api_name: str,
    request: Message,
    *,
    version: int | None = None,
    broker_id: int = 1,
    client_id: str | None = "test",
    correlation_id: int = 1,
    codec_roundtrip: bool = True,
    principal: str = "User:ANONYMOUS",
) -> Result:
    """Run the handler of ``api_name`` on ``cluster`` as the server would, with no socket.

    For sans-IO tests of broker behaviour. ``version`` defaults to the newest served. With
    ``codec_roundtrip`` the request is encoded and decoded first (defaults filled as on the
    wire) and a dict response is encoded and decoded back, so the test sees what a client
    would. A :class:`Park` or :data:`NO_RESPONSE` is returned as it is: drive a Park with
    ``cluster.run_timers()`` / ``park.resume(timed_out)``. With ``ClusterConfig(authorizer=
    True)`` the request is authorized for ``principal`` first, as the server does
    (``handlers/authz.py``; the answers of refused items are added to a dict result only).
    """
    from mockkafka.protocol.codec import codec

    spec = load_handlers()[API_BY_NAME[api_name].key]
    v = spec.max_version if version is None else version
    if codec_roundtrip:
        req_codec = codec(spec.api.request_name, v)
        request, _ = req_codec.decode(req_codec.encode(request))
    ctx = RequestContext(
        cluster=cluster,
        broker_id=broker_id,
        connection_id=1,
        header=RequestHeader(spec.api.key, v, correlation_id, client_id),
        api=spec.api,
        now_ms=cluster.now_ms(),
        principal=principal,
    )
    finish = refusal = None
    if cluster.config.authorizer:
        refusal, request, finish = gate(ctx, request)
    result = refusal if refusal is not None else spec.fn(ctx, request)
    if finish is not None and isinstance(result, dict):
        result = finish(result)
    if codec_roundtrip and isinstance(result, dict):
        resp_codec = codec(spec.api.response_name, v)
        result, _ = resp_codec.decode(resp_codec.encode(result))
    return result
