"""What every fault action is: the base class, the phases, the arguments, the call interface.

See the package docstring (``mockkafka/faults/actions/__init__.py``) for how to add one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import Field, dataclass, fields
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn, Protocol

from mockkafka.faults._checks import nondefault_repr

if TYPE_CHECKING:
    from mockkafka.errors import ErrorCode
    from mockkafka.faults.match import Match, RequestInfo

# -- phases: when the dispatch stage applies an action ---------------------------------------

#: Before the handler runs (the request may be lost here: sleep, close, never answer).
BEFORE = "before"
#: Instead of the handler: set ``call.response`` (or claim partitions); the first answer wins.
INSTEAD = "instead"
#: After the handler: edit ``call.response``.
AFTER = "after"
#: On the record data of the response: :meth:`Action.edit_records`, decided per response.
DATA = "data"
#: On the connection, once the response is known (throttle, delay it, drop it).
CONNECTION = "connection"
#: Every phase, in the order the fault stage runs them.
PHASES = (BEFORE, INSTEAD, AFTER, DATA, CONNECTION)

#: APIs whose responses carry record data (what ``DATA`` actions edit).
RECORD_RESPONSE_APIS = ("Fetch", "ShareFetch")


# -- arguments --------------------------------------------------------------------------------


def arg(
    doc: str,
    *,
    schema: dict[str, Any] | None = None,
    python_type: str | None = None,
    positional: bool = False,
    fuzz: bool = True,
) -> dict[str, Any]:
    """The ``metadata`` of an action's dataclass field: what the argument means.

    ``doc``: one line for the builder's docstring and the docs. ``schema``: its JSON Schema
    (YAML, control endpoint). ``python_type``: the builder method's annotation when it
    accepts more than the field holds (``"ErrorCode | int | str"`` for a code the action
    normalises to a name). ``positional``: the builder takes it positionally, and YAML takes
    a bare value for it (``error: NOT_LEADER_OR_FOLLOWER``). ``fuzz``: ``fault_plans()``
    may draw it (required arguments are always drawn).
    """
    return {
        "doc": doc,
        "schema": schema,
        "python_type": python_type,
        "positional": positional,
        "fuzz": fuzz,
    }


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of an action, read from its dataclass field (see :func:`arg`)."""

    name: str
    doc: str
    annotation: str
    python_type: str
    required: bool
    default: Any
    schema: dict[str, Any] | None
    positional: bool
    fuzz: bool


def _arg_of(f: Field[Any]) -> Arg:
    meta = f.metadata
    from dataclasses import MISSING

    annotation = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    annotation = annotation.replace("'", '"')  # Literal['a'] as the source (and ruff) write it
    return Arg(
        name=f.name,
        doc=meta.get("doc", ""),
        annotation=annotation,
        python_type=meta.get("python_type") or annotation,
        required=f.default is MISSING and f.default_factory is MISSING,
        default=None if f.default is MISSING else f.default,
        schema=meta.get("schema"),
        positional=bool(meta.get("positional", False)),
        fuzz=bool(meta.get("fuzz", True)),
    )


# -- the call interface: what an action may do to the request it fires on --------------------


class FaultCall(Protocol):
    """The request an action fires on, as the dispatch stage hands it over.

    Read: ``api``, ``version``, ``request`` (the decoded body; do not mutate), ``info``
    (the facts rules match on), ``context`` (the handler's ``RequestContext``, for custom
    handlers). Answer: assign ``response`` (``answered`` says whether someone did);
    ``error_response(code)`` builds the answer Kafka gives with ``code`` everywhere;
    ``claim(match, code)`` answers the partitions ``match`` covers with ``code`` and lets
    the handler process the rest; ``partitions()`` walks the response's partition entries.
    Act: ``await flush()`` sends the answers held before this request, ``await
    sleep(seconds)``, ``close(reason)`` drops the connection now (the request is lost),
    ``close_after_response()`` drops it once the response is recorded (applied, never
    sent), ``await never_respond()`` parks until the client hangs up, ``mute(seconds)``
    reads nothing more from the connection for that long (KIP-219), ``has_field(name)``
    says whether the response version has that field, ``next_batch(topic, index,
    records)`` is the log's batch after ``records`` (for cutting one), ``previous_batch(topic,
    index)`` the log's batch holding the offset before the Fetch offset (what the consumer
    read last; None at the log start), ``silence()`` answers nothing more on this
    connection (every later request on it is read and dropped until the client closes it:
    Kafka answers in order, so an answer after a swallowed request would break the
    client), ``record_error(exc)``
    keeps an exception raised by test code so the test fails.
    """

    api: str
    version: int
    request: dict[str, Any]
    info: RequestInfo
    context: Any
    response: Any

    @property
    def answered(self) -> bool: ...
    def error_response(self, code: ErrorCode) -> Any: ...
    def claim(self, match: Match, code: ErrorCode) -> None: ...
    def partitions(self) -> Iterator[tuple[str | None, int, Any]]: ...
    async def flush(self) -> None: ...
    async def sleep(self, seconds: float) -> None: ...
    def close(self, reason: str) -> NoReturn: ...
    def close_after_response(self) -> None: ...
    async def never_respond(self) -> NoReturn: ...
    def mute(self, seconds: float) -> None: ...
    def has_field(self, name: str) -> bool: ...
    def next_batch(self, topic: str, index: int, records: Any) -> bytes | None: ...
    def previous_batch(self, topic: str, index: int) -> bytes | None: ...
    def silence(self) -> None: ...
    def record_error(self, exc: BaseException) -> None: ...


# -- the base class -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, repr=False)
class Action:
    """Base class of fault actions (see the package docstring).

    A subclass is a frozen dataclass whose fields are its arguments (with :func:`arg`
    metadata) and whose class attributes say the rest: ``NAME`` (the builder method and the
    YAML key), ``PHASE`` (one of :data:`PHASES`; override :meth:`phase_on` when it depends
    on the arguments), ``ORDER`` (its place in tables and docs), ``SCENARIO`` (False when it
    holds a Python object YAML cannot: a custom handler), ``EDITS_EMPTY`` (a ``DATA``
    action that also edits a partition answered without records), ``EVERY_MATCH`` (its rule
    fires on every match unless a count is given), ``AS_KAFKA`` (a real broker or
    network could do this), ``APIS`` (the APIs it can act on; None: every API), ``COVERAGE``
    (listed in the coverage report's universe), ``RISKY`` (left out of ``fault_plans()``
    unless asked for by name).
    """

    NAME: ClassVar[str] = ""
    PHASE: ClassVar[str] = AFTER
    ORDER: ClassVar[int] = 1000
    SCENARIO: ClassVar[bool] = True
    AS_KAFKA: ClassVar[bool] = True
    APIS: ClassVar[tuple[str, ...] | None] = None
    COVERAGE: ClassVar[bool] = True
    RISKY: ClassVar[bool] = False
    #: Phases ``phase_on`` may choose besides ``PHASE`` (for the docs table).
    OTHER_PHASES: ClassVar[tuple[str, ...]] = ()
    #: ``DATA`` actions: also edit a partition answered without error and without records.
    EDITS_EMPTY: ClassVar[bool] = False
    #: A rule of this action fires on every match unless a count is given (a blackhole).
    EVERY_MATCH: ClassVar[bool] = False
    #: The action reads the partition log (``call.previous_batch``): a proxy, whose log is
    #: upstream, cannot apply it, and a scenario step with it is refused there.
    NEEDS_LOG: ClassVar[bool] = False

    def __repr__(self) -> str:
        return nondefault_repr(self)

    # -- what it is ---------------------------------------------------------------------

    @classmethod
    def args(cls) -> tuple[Arg, ...]:
        """The action's arguments, in field order."""
        return tuple(_arg_of(f) for f in fields(cls))

    @classmethod
    def summary(cls) -> str:
        """The first paragraph of the class docstring, on one line."""
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(doc.split())

    @property
    def needs_data(self) -> bool:
        """The action edits record data: its rule only counts responses that carry some."""
        return self.PHASE == DATA

    @property
    def replaces_response(self) -> bool:
        """The request is not processed normally (only one such rule fires per request)."""
        return self.PHASE == INSTEAD

    def phase_on(self, api: str) -> str:
        """The phase this action runs in on a request of ``api``."""
        return self.PHASE

    def coverage_detail(self) -> str:
        """The third part of the coverage key (the error name for ``error``)."""
        return ""

    @classmethod
    def coverage_details(cls, api: str) -> tuple[str, ...]:
        """What the coverage universe lists for ``api`` (``("",)``: the action itself)."""
        if not cls.COVERAGE or (cls.APIS is not None and api not in cls.APIS):
            return ()
        return ("",)

    @classmethod
    def as_kafka_on(cls, api: str, detail: str = "") -> bool:
        """Whether a real broker could do this to a correct client's ``api`` request."""
        return cls.AS_KAFKA

    # -- what it does ---------------------------------------------------------------------

    async def apply(self, call: FaultCall, match: Match) -> None:
        """Act on ``call`` in this action's phase (``match``: the rule's match)."""

    def edit_records(self, call: FaultCall, topic: str, index: int, records: Any) -> Any:
        """``DATA`` actions: the edited records of one partition, or None to leave them."""
        return None

    def why_not(self, call: FaultCall, topic: str, index: int, records: Any) -> str:
        """``DATA`` actions: why :meth:`edit_records` left these records alone (it returned
        None), in one line that reads the same for the same cause: the rule's
        ``declined`` counts it, and ``cluster.why_unfired`` shows it. Say what a test
        author can change."""
        from mockkafka.faults.record_edits import why_unedited

        return why_unedited(records) or "it found nothing to edit in the records"
