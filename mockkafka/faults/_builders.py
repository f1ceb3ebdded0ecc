"""The ``Rule`` builder methods, one per fault action: GENERATED, do not edit.

``python tools/gen_fault_actions.py`` writes this file from the action registry
(``mockkafka/faults/actions/``); ``tests/faults/test_action_registry.py`` fails while it is
stale. A method adds its action to the rule (and the rule to its cluster, if not yet added);
a wrong call says how to call it (``builder_arguments``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Self

from mockkafka.errors import ErrorCode
from mockkafka.faults._checks import builder_arguments

if TYPE_CHECKING:
    from mockkafka.faults.actions._base import Action


class ActionBuilders:
    """The action methods of :class:`~mockkafka.faults.engine.Rule` (one per action)."""

    __slots__ = ()

    def then(self, action: Action) -> Self:
        """Add ``action`` to the rule (defined by ``Rule``)."""
        raise NotImplementedError

    @builder_arguments
    def error(
        self,
        code: ErrorCode | int | str,
        *,
        level: Literal["auto", "request", "partition"] = "auto",
    ) -> Self:
        """Answer with ``code``. ``level="request"``: every error field of the response (the request
        is not processed); ``"partition"``: only the partitions the rule matches (the others are
        processed normally); ``"auto"``: per partition when the rule names a topic or partition,
        else the whole request.

        ``code``: the error, by name (NOT_LEADER_OR_FOLLOWER) or number.
        ``level``: auto, request or partition (see above).

        Adds :class:`~mockkafka.faults.actions.error.Error`.
        """
        from mockkafka.faults.actions.error import Error

        return self.then(Error(code=code, level=level))  # type: ignore[arg-type]

    @builder_arguments
    def delay(self, *, ms: int, before_processing: bool = False) -> Self:
        """Hold the response back ``ms`` (or the request, with ``before_processing``).

        ``ms``: milliseconds to wait.
        ``before_processing``: wait before the handler runs, not after.

        Adds :class:`~mockkafka.faults.actions.delay.Delay`.
        """
        from mockkafka.faults.actions.delay import Delay

        return self.then(Delay(ms=ms, before_processing=before_processing))

    @builder_arguments
    def throttle(self, *, ms: int) -> Self:
        """Answer with ``throttle_time_ms=ms`` and, as KIP-219 brokers do, read nothing more from
        that connection until the throttle time has passed.

        ``ms``: the throttle time in milliseconds.

        Adds :class:`~mockkafka.faults.actions.throttle.Throttle`.
        """
        from mockkafka.faults.actions.throttle import Throttle

        return self.then(Throttle(ms=ms))

    @builder_arguments
    def drop_connection(self, *, after_processing: bool = False) -> Self:
        """Close the connection: before processing (the request is lost), or after processing (the
        request is applied, the response is lost).

        ``after_processing``: apply the request, then close instead of answering.

        Adds :class:`~mockkafka.faults.actions.drop_connection.DropConnection`.
        """
        from mockkafka.faults.actions.drop_connection import DropConnection

        return self.then(DropConnection(after_processing=after_processing))

    @builder_arguments
    def never_respond(self) -> Self:
        """Never answer; the request is not processed. The connection stays open (and answers
        nothing more, as requests are handled in order) until the client closes it.

        Adds :class:`~mockkafka.faults.actions.never_respond.NeverRespond`.
        """
        from mockkafka.faults.actions.never_respond import NeverRespond

        return self.then(NeverRespond())

    @builder_arguments
    def partial_trailing_batch(self) -> Self:
        """Fetch: end a matching partition's records with a batch cut mid-record (as a broker does
        when ``max_bytes`` runs out). Fires only on responses with records to cut. ShareFetch: the
        acquired batches arrive whole and a cut copy of the next batch in the log follows them
        (fires only when the log has one).

        Adds :class:`~mockkafka.faults.actions.partial_trailing_batch.PartialTrailingBatch`.
        """
        from mockkafka.faults.actions.partial_trailing_batch import PartialTrailingBatch

        return self.then(PartialTrailingBatch())

    @builder_arguments
    def corrupt_batch(self) -> Self:
        """Fetch and ShareFetch: flip a byte in the CRC-covered part of a matching partition's first
        batch.

        Adds :class:`~mockkafka.faults.actions.corrupt_batch.CorruptBatch`.
        """
        from mockkafka.faults.actions.corrupt_batch import CorruptBatch

        return self.then(CorruptBatch())

    @builder_arguments
    def duplicate(self) -> Self:
        """Fetch: a matching partition's answer starts with the batch the consumer read last (the
        one holding the offset before its fetch offset, from the log, at its original offsets), as a
        new leader's answer can after a leader change. Clients drop records below their fetch
        position (librdkafka and the Java client do), so a correct consumer delivers nothing twice.
        Fires on a partition answered without error, with or without records, that has a batch
        before the fetch offset.

        Adds :class:`~mockkafka.faults.actions.duplicate.Duplicate`.
        """
        from mockkafka.faults.actions.duplicate import Duplicate

        return self.then(Duplicate())

    @builder_arguments
    def corrupt_payload(
        self,
        *,
        part: Literal["value", "key", "headers"] = "value",
        seed: int | None = None,
    ) -> Self:
        """Fetch and ShareFetch: every record's value (or key, or header values) in a matching
        partition's answer has each byte changed, length kept, and the batches are re-encoded with
        valid CRCs in their format and codec: the client library accepts them and the application's
        deserializer meets the garbage. The log is untouched. Null and empty values are left alone.

        ``part``: what to garble: value, key or headers (header values).
        ``seed``: the same garbage on every run (None: fresh each time).

        Adds :class:`~mockkafka.faults.actions.corrupt_payload.CorruptPayload`.
        """
        from mockkafka.faults.actions.corrupt_payload import CorruptPayload

        return self.then(CorruptPayload(part=part, seed=seed))

    @builder_arguments
    def schema_id(self, *, id: int | None = None, magic: int | None = None) -> Self:
        """Fetch and ShareFetch: each value in the Confluent schema-registry wire format (magic byte
        0, then a 4-byte big-endian schema id) gets schema id ``id`` (one the registry does not
        know, or another subject's) and/or magic byte ``magic``; the payload is kept, batches stay
        valid. Values not in that format are left alone (no registry serializer wrote them).

        ``id``: the schema id to write (int32).
        ``magic``: the magic byte to write instead of 0.

        Adds :class:`~mockkafka.faults.actions.schema_id.SchemaId`.
        """
        from mockkafka.faults.actions.schema_id import SchemaId

        return self.then(SchemaId(id=id, magic=magic))

    @builder_arguments
    def skew_timestamps(self, *, ms: int) -> Self:
        """Fetch and ShareFetch: the CreateTime timestamps of a matching partition's records moved
        by ``ms`` (positive: from the future; negative: from the past, not below 0), batch
        timestamps and CRCs kept valid. LogAppendTime batches and records without a timestamp are
        left alone. Match a partition (``partition=``) to skew one producer's clock.

        ``ms``: milliseconds to move by (non-zero; negative: into the past).

        Adds :class:`~mockkafka.faults.actions.skew_timestamps.SkewTimestamps`.
        """
        from mockkafka.faults.actions.skew_timestamps import SkewTimestamps

        return self.then(SkewTimestamps(ms=ms))

    @builder_arguments
    def lost_ack(self) -> Self:
        """Produce: the batch is appended and the answer lost -- the connection closes before the
        response is sent, as when the network fails between broker and client -- so the producer
        retries it: twice in the log with ``enable.idempotence=false``, once with idempotence (the
        broker recognises the sequence numbers).

        Adds :class:`~mockkafka.faults.actions.lost_ack.LostAck`.
        """
        from mockkafka.faults.actions.lost_ack import LostAck

        return self.then(LostAck())

    @builder_arguments
    def blackhole(self) -> Self:
        """Swallow every matching request: not processed, never answered, the connection left open.
        Kafka answers a connection's requests in order, so once a request is swallowed that
        connection answers nothing more (later requests on it are read and dropped, as if the
        network lost them) until the client times out and reconnects; when the rule has ended
        (``for_ms``, ``between``, ``remove()``) the new connection is answered. Fires on every match
        unless a count was given. On a group member's ``client_id`` the coordinator hears nothing
        from it and evicts it after its session timeout.

        Adds :class:`~mockkafka.faults.actions.blackhole.Blackhole`.
        """
        from mockkafka.faults.actions.blackhole import Blackhole

        return self.then(Blackhole())

    @builder_arguments
    def observe(self) -> Self:
        """Do nothing but count (and mark the exchange in traffic).

        Adds :class:`~mockkafka.faults.actions.observe.Observe`.
        """
        from mockkafka.faults.actions.observe import Observe

        return self.then(Observe())

    @builder_arguments
    def handler(self, fn: Callable[[dict[str, Any], Any], Any]) -> Self:
        """Call ``fn(request, ctx)``: a returned dict is the response (missing fields take defaults;
        the request is not processed), ``None`` lets the request through.

        ``fn``: fn(request, ctx) -> response dict, or None to let the request through.

        Adds :class:`~mockkafka.faults.actions.custom_handler.CustomHandler`.
        """
        from mockkafka.faults.actions.custom_handler import CustomHandler

        return self.then(CustomHandler(fn=fn))
