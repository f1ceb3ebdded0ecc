"""Sans-IO framing: bytes in, whole requests (or responses) out.

Theory of operation
-------------------
Every Kafka message on the wire is a 4-byte big-endian size followed by that many bytes: a
header and a body. :class:`ServerConnection` is fed whatever bytes the socket produced
(``receive_data``) and hands back complete :class:`Request` objects from ``next_event`` --
or :data:`NEED_DATA` when the buffered bytes do not yet make a whole frame. It never touches a
socket. ``encode_response`` turns a response body into the bytes to send.
:class:`ClientConnection` is the mirror image used by tests and the fault engine.

A frame larger than ``max_frame_size`` raises :class:`FrameTooLarge` before its bytes are
buffered (Kafka's ``socket.request.max.bytes``: the server closes the connection). A request
whose API key or version has no schema comes back as a :class:`Request` with ``body`` None
and ``error`` set, so the server can answer ApiVersions with UNSUPPORTED_VERSION the way
Kafka does, and close the connection for anything else.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from mockkafka.protocol.apis import (
    API_BY_KEY,
    API_VERSIONS_KEY,
    Api,
    request_header_version,
    response_header_version,
)
from mockkafka.protocol.codec import Message, codec
from mockkafka.protocol.errors import FrameTooLarge, ProtocolError, UnsupportedVersion
from mockkafka.protocol.validate import check_request


class _NeedData:
    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = _NeedData()
"""Returned by ``next_event`` when more bytes are needed for a whole frame."""

DEFAULT_MAX_FRAME_SIZE = 100 * 1024 * 1024  # Kafka's socket.request.max.bytes default

_SIZE = struct.Struct(">i")
_HDR0 = struct.Struct(">hhi")


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """The request header: which API and version, the correlation id and the client id."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None = None


@dataclass(slots=True)
class Request:
    """One decoded request.

    ``body`` is the decoded message dict, or None when ``error`` says the API key or version
    is unknown. ``size`` is the frame size in bytes (without the 4-byte prefix); ``frame`` is
    the frame itself and ``body_offset`` where its body starts (a traffic log keeps the
    frame instead of the decoded body).
    """

    header: RequestHeader
    api: Api | None
    body: Message | None
    size: int
    error: ProtocolError | None = None
    frame: bytes = b""
    body_offset: int = 0

    @property
    def api_name(self) -> str:
        return self.api.name if self.api is not None else f"Unknown({self.header.api_key})"


@dataclass(frozen=True, slots=True)
class SaslToken:
    """One raw SASL token: after a SaslHandshake v0 (the pre-KIP-152 exchange) the tokens
    travel as size-prefixed frames with no request header, until authentication ends."""

    data: bytes


@dataclass(slots=True)
class Response:
    """One decoded response, as a client sees it."""

    correlation_id: int
    api: Api
    version: int
    body: Message
    size: int


class _FrameBuffer:
    """Accumulates bytes and cuts them into size-prefixed frames."""

    def __init__(self, max_frame_size: int) -> None:
        self.max_frame_size = max_frame_size
        self._buf = bytearray()
        self._pos = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self._pos and self._pos == len(self._buf):
            self._buf.clear()
            self._pos = 0
        self._buf += data

    def next_frame(self) -> bytes | None:
        buf = self._buf
        pos = self._pos
        if len(buf) - pos < 4:
            return None
        (size,) = _SIZE.unpack_from(buf, pos)
        if size < 0:
            raise ProtocolError(f"negative frame size {size}")
        if size > self.max_frame_size:
            raise FrameTooLarge(
                f"frame of {size} bytes exceeds the limit of {self.max_frame_size} bytes"
            )
        end = pos + 4 + size
        if len(buf) < end:
            return None
        with memoryview(buf) as view:
            frame = bytes(view[pos + 4 : end])  # one copy (a bytearray slice makes two)
        if end == len(buf):
            buf.clear()
            self._pos = 0
        elif end > 65536:
            del buf[:end]
            self._pos = 0
        else:
            self._pos = end
        return frame

    @property
    def buffered(self) -> int:
        return len(self._buf) - self._pos


def parse_request_header(frame: bytes) -> tuple[RequestHeader, int]:
    """Parse the request header at the start of ``frame``; returns (header, body offset)."""
    if len(frame) < 8:
        raise ProtocolError(f"request frame of {len(frame)} bytes is shorter than a header")
    api_key, api_version, correlation_id = _HDR0.unpack_from(frame, 0)
    hv = request_header_version(api_key, api_version)
    if api_key == API_VERSIONS_KEY and api_version > API_BY_KEY[api_key].max_version:
        # Unknown ApiVersions versions still have to be answered: read the header as the
        # newest layout, falling back to v1 when that does not parse.
        hv = 2
    if hv == 0:
        return RequestHeader(api_key, api_version, correlation_id, None), 8
    try:
        hdr, pos = codec("RequestHeader", hv).decode(frame, 0)
    except ProtocolError:
        if hv == 2:
            hdr, pos = codec("RequestHeader", 1).decode(frame, 0)
        else:
            raise
    return RequestHeader(api_key, api_version, correlation_id, hdr["client_id"]), pos


class ServerConnection:
    """Broker side of one connection. Feed bytes, take requests, encode responses."""

    def __init__(self, *, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        self._frames = _FrameBuffer(max_frame_size)
        #: Set after a SaslHandshake v0 answer: frames are raw SASL tokens
        #: (:class:`SaslToken`) until the server clears it when authentication ends.
        self.unframed_sasl = False

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Add bytes read from the socket."""
        self._frames.feed(data)

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a request."""
        return self._frames.buffered

    def clear(self) -> None:
        """Drop every buffered byte (the connection is closed; free the memory now)."""
        self._frames = _FrameBuffer(self._frames.max_frame_size)

    def next_event(self) -> Request | SaslToken | _NeedData:
        """The next whole request (a :class:`SaslToken` while ``unframed_sasl``), or NEED_DATA.

        Raises FrameTooLarge (close the connection) or ProtocolError (an unparseable header
        or body: close the connection, as Kafka does).
        """
        frame = self._frames.next_frame()
        if frame is None:
            return NEED_DATA
        if self.unframed_sasl:
            return SaslToken(bytes(frame))
        header, pos = parse_request_header(frame)
        a = API_BY_KEY.get(header.api_key)
        if a is None:
            err = UnsupportedVersion(
                header.api_key, header.api_version, f"unknown API key {header.api_key}"
            )
            return Request(header, None, None, len(frame), err)
        if not a.min_version <= header.api_version <= a.max_version:
            err = UnsupportedVersion(
                header.api_key,
                header.api_version,
                f"{a.name} v{header.api_version} is not supported "
                f"(versions {a.min_version}-{a.max_version})",
            )
            return Request(header, a, None, len(frame), err)
        body, _end = codec(a.request_name, header.api_version).decode(frame, pos)
        check_request(a.name, header.api_version, body)
        return Request(header, a, body, len(frame), frame=frame, body_offset=pos)

    @staticmethod
    def encode_sasl_token(data: bytes) -> bytes:
        """A raw SASL token frame (the answer to a :class:`SaslToken`)."""
        return _SIZE.pack(len(data)) + data

    @staticmethod
    def encode_response(
        header: RequestHeader, body: Message, *, version: int | None = None
    ) -> bytes:
        """The whole frame (size prefix included) answering ``header`` with ``body``.

        ``version`` overrides the body version (ApiVersions answers unknown versions in v0).
        """
        v = header.api_version if version is None else version
        a = API_BY_KEY[header.api_key]
        out = bytearray(4)
        out += _SIZE.pack(header.correlation_id)
        if response_header_version(header.api_key, v) >= 1:
            out.append(0)  # empty tagged fields
        codec(a.response_name, v).encode_into(out, body)
        _SIZE.pack_into(out, 0, len(out) - 4)
        return bytes(out)


@dataclass(slots=True)
class _Pending:
    api: Api
    version: int


class ClientConnection:
    """Client side of one connection: encode requests, decode the matching responses."""

    def __init__(
        self, *, client_id: str | None = "mockkafka", max_frame_size: int = DEFAULT_MAX_FRAME_SIZE
    ) -> None:
        self.client_id = client_id
        self._frames = _FrameBuffer(max_frame_size)
        self._next_correlation_id = 0
        self._pending: dict[int, _Pending] = {}

    def send_request(
        self,
        api_name: str | int,
        version: int,
        body: Message,
        *,
        correlation_id: int | None = None,
        expect_response: bool = True,
    ) -> bytes:
        """The frame to send. Remember it so ``next_event`` can decode the response."""
        a = API_BY_KEY[api_name] if isinstance(api_name, int) else _api_by_name(api_name)
        if correlation_id is None:
            correlation_id = self._next_correlation_id
            self._next_correlation_id += 1
        hv = request_header_version(a.key, version)
        out = bytearray(4)
        if hv == 0:
            out += _HDR0.pack(a.key, version, correlation_id)
        else:
            codec("RequestHeader", hv).encode_into(
                out,
                {
                    "request_api_key": a.key,
                    "request_api_version": version,
                    "correlation_id": correlation_id,
                    "client_id": self.client_id,
                },
            )
        codec(a.request_name, version).encode_into(out, body)
        _SIZE.pack_into(out, 0, len(out) - 4)
        if expect_response:
            self._pending[correlation_id] = _Pending(a, version)
        return bytes(out)

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._frames.feed(data)

    def next_event(self) -> Response | _NeedData:
        """The next whole response, or NEED_DATA; ProtocolError for unknown correlation ids."""
        frame = self._frames.next_frame()
        if frame is None:
            return NEED_DATA
        if len(frame) < 4:
            raise ProtocolError("response frame shorter than its header")
        (cid,) = _SIZE.unpack_from(frame, 0)
        pending = self._pending.pop(cid, None)
        if pending is None:
            raise ProtocolError(f"response with unknown correlation id {cid}")
        pos = 4
        if response_header_version(pending.api.key, pending.version) >= 1:
            _hdr, pos = codec("ResponseHeader", 1).decode(frame, 0)
        version = pending.version
        if pending.api.key == API_VERSIONS_KEY and _error_code_at(frame, pos) == 35:
            version = 0  # UNSUPPORTED_VERSION answers come in the v0 body format
        body, _ = codec(pending.api.response_name, version).decode(frame, pos)
        return Response(cid, pending.api, version, body, len(frame))


def _error_code_at(frame: bytes, pos: int) -> int:
    if len(frame) < pos + 2:
        return 0
    (code,) = struct.unpack_from(">h", frame, pos)
    return int(code)


def _api_by_name(name: str) -> Api:
    from mockkafka.protocol.apis import API_BY_NAME

    try:
        return API_BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown Kafka API {name!r}") from None


__all__ = [
    "NEED_DATA",
    "ClientConnection",
    "Request",
    "RequestHeader",
    "Response",
    "SaslToken",
    "ServerConnection",
    "parse_request_header",
]
