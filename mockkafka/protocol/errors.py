"""Errors raised by the sans-IO protocol layer, and the base class of every mockkafka error.

:class:`MockKafkaError` lives here, at the bottom of the import graph, so every layer can
derive from it; the public name is ``mockkafka.MockKafkaError``.
"""


class MockKafkaError(Exception):
    """Base class of the exceptions mockkafka raises to a test author."""


class ProtocolError(MockKafkaError):
    """Bytes that are not valid Kafka protocol.

    The server answers by closing the connection (framing, request bodies) or with
    CORRUPT_MESSAGE (record batches). Test code sees it when it feeds bytes to a codec by hand:
    the message says what was wrong and where.
    """


class UnsupportedVersion(ProtocolError):
    """A request names an API key or version this codec has no schema for.

    ``api_key`` and ``api_version`` say which; the server answers ApiVersions with
    UNSUPPORTED_VERSION in the v0 body format and closes the connection for other APIs, as a
    real broker does.
    """

    def __init__(self, api_key: int, api_version: int, message: str) -> None:
        super().__init__(message)
        self.api_key = api_key
        self.api_version = api_version


class FrameTooLarge(ProtocolError):
    """A frame's size prefix exceeds the configured limit (``socket.request.max.bytes``).

    The server closes the connection, as Kafka does.
    """
