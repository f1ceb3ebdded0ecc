"""Kafka error codes as data, and the exceptions mockkafka raises to test authors.

``ErrorCode`` has one member per Kafka error code (generated from Kafka's error table):
``ErrorCode.NOT_LEADER_OR_FOLLOWER.code == 6``, ``.retriable`` is what clients treat as
retriable. Kafka-level failures travel to clients as these codes inside responses; they are
never raised inside the broker. Look a code up by name or number with :func:`error_code`.
"""

from __future__ import annotations

import difflib

from mockkafka._error_codes import ErrorCode

# The exceptions the sans-IO protocol layer raises live here, at the bottom of the import
# graph, with the base class every layer derives from; mockkafka.protocol.errors re-exports
# them for the codec modules.


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


def error_code(value: ErrorCode | int | str) -> ErrorCode:
    """``error_code("NOT_LEADER_OR_FOLLOWER")``, ``error_code(6)``: the ErrorCode member.

    Raises ``ConfigError`` (a ``ValueError``, listing close names for a misspelling) when
    the code is unknown.
    """
    if isinstance(value, ErrorCode):
        return value
    if isinstance(value, int):
        member = ErrorCode._value2member_map_.get(value)
        if member is None:
            raise ConfigError(f"unknown Kafka error code {value}") from None
        return member  # type: ignore[return-value]
    name = value.strip().upper().replace("-", "_")
    try:
        return ErrorCode[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(ErrorCode.__members__), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ConfigError(f"unknown Kafka error name {value!r}{hint}") from None


class ConfigError(MockKafkaError, ValueError):
    """A wrong argument or configuration value; the message names the argument."""


class KafkaApiError(MockKafkaError):
    """A cluster verb refused, with the Kafka error code a broker would answer.

    Handlers turn it into that code in the response; a test calling the verb directly sees
    the exception, whose message says what to change.
    """

    def __init__(self, error: ErrorCode | int | str, message: str = "") -> None:
        self.error = error_code(error)
        super().__init__(f"{self.error.name}: {message}" if message else self.error.name)
        self.detail = message


class ListenError(MockKafkaError, OSError):
    """A broker cannot listen (a ``port`` in use, an address not available). One line,
    naming the broker and ``host:port``, as ``mockkafka serve`` and the pytest plugin
    report it; ``errno`` is the operating system's. Choose another port, or ``port=0``
    for free ones."""

    def __str__(self) -> str:
        return str(self.strerror or super().__str__())


class WaitTimeout(MockKafkaError, TimeoutError):
    """A wait (``wait_for_group``, ``rule.wait_fired``, ...) did not see what it waited for
    in time. The message shows the last state seen; ``last_seen`` holds it as text."""

    def __init__(self, message: str, last_seen: str = "") -> None:
        super().__init__(message)
        self.last_seen = last_seen


class UnfiredRulesError(MockKafkaError, AssertionError):
    """Fault rules were added and never fired, and the cluster is strict
    (``Cluster(strict_faults=True)``): the test did not exercise what it meant to."""


class UnfiredRuleWarning(UserWarning):
    """Fault rules were added and never fired (an error with ``strict_faults=True``)."""


class ProtocolViolationWarning(UserWarning):
    """A client broke a rule of the Kafka protocol during the test (see
    ``Cluster.protocol_violations``); ``pytest --kafka-violations=error`` fails the test."""


class BrokerError(MockKafkaError):
    """An exception raised inside the broker during a test, re-raised in that test.

    The original exception is chained (``__cause__``) with the broker's traceback.
    """


__all__ = [
    "BrokerError",
    "ConfigError",
    "ErrorCode",
    "FrameTooLarge",
    "KafkaApiError",
    "ListenError",
    "MockKafkaError",
    "ProtocolError",
    "UnfiredRuleWarning",
    "UnfiredRulesError",
    "UnsupportedVersion",
    "WaitTimeout",
    "error_code",
]


def leaf_exception(exc: BaseException) -> BaseException:
    """The one exception inside nested exception groups (trio's nurseries wrap what fails
    while a cluster starts), or ``exc`` itself when there is not exactly one."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc
