"""The API registry of the wire protocol: keys, names, version ranges, header versions.

Built from the generated schema data. ``API_BY_KEY[1]`` and ``API_BY_NAME["Fetch"]`` give
an :class:`Api`; :func:`request_header_version` and :func:`response_header_version` say
which header layout a (key, version) uses on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockkafka.protocol.codec import SUMMARY

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7


@dataclass(frozen=True, slots=True)
class Api:
    """One API key: the versions both its request and response schemas define."""

    key: int
    name: str
    min_version: int
    max_version: int
    request_flexible_from: int | None
    response_flexible_from: int | None

    @property
    def request_name(self) -> str:
        return self.name + "Request"

    @property
    def response_name(self) -> str:
        return self.name + "Response"

    def request_flexible(self, version: int) -> bool:
        f = self.request_flexible_from
        return f is not None and version >= f

    def response_flexible(self, version: int) -> bool:
        f = self.response_flexible_from
        return f is not None and version >= f


def _build() -> tuple[dict[int, Api], dict[str, Api]]:
    by_key: dict[int, Api] = {}
    for msg_name, (api_key, kind, req_segs) in SUMMARY.items():
        if kind != "request":
            continue
        name = msg_name.removesuffix("Request")
        resp = SUMMARY.get(name + "Response")
        if resp is None or api_key is None:
            continue
        resp_segs = resp[2]
        lo = max(req_segs[0][0], resp_segs[0][0])
        hi = min(req_segs[-1][1], resp_segs[-1][1])
        # Flexible-from is the same in every segment of one message.
        by_key[api_key] = Api(
            key=api_key,
            name=name,
            min_version=lo,
            max_version=hi,
            request_flexible_from=req_segs[-1][2],
            response_flexible_from=resp_segs[-1][2],
        )
    by_name = {a.name: a for a in by_key.values()}
    return dict(sorted(by_key.items())), by_name


API_BY_KEY, API_BY_NAME = _build()


def api(name_or_key: str | int) -> Api:
    """Look up an API by name (``"Produce"``) or key (``0``); raises KeyError naming it."""
    try:
        if isinstance(name_or_key, int):
            return API_BY_KEY[name_or_key]
        return API_BY_NAME[name_or_key]
    except KeyError:
        raise KeyError(f"unknown Kafka API {name_or_key!r}") from None


def request_header_version(api_key: int, version: int) -> int:
    """0, 1 or 2: the request header layout for this API version."""
    if api_key == CONTROLLED_SHUTDOWN_KEY and version == 0:
        return 0
    a = API_BY_KEY.get(api_key)
    if a is not None and a.request_flexible(version):
        return 2
    return 1


def response_header_version(api_key: int, version: int) -> int:
    """0 or 1: the response header layout. ApiVersions always answers with header v0."""
    if api_key == API_VERSIONS_KEY:
        return 0
    a = API_BY_KEY.get(api_key)
    if a is not None and a.response_flexible(version):
        return 1
    return 0
