"""What every API authorizes when ``Cluster(authorizer=True)``, and the one place it is
enforced.

Theory of operation. :data:`RULES` holds one declaration per API key (a test fails when a
handler is added without one): the resource, operation and error Kafka's ``KafkaApis``
uses. The server calls :func:`gate` before the handler, only when the authorizer is on
(a single attribute check per request otherwise). A declaration is a tuple of checks:

* :class:`Whole` -- the request names one resource; without the operation on it the whole
  request is answered with the resource type's ``*_AUTHORIZATION_FAILED`` (e.g. JoinGroup:
  READ on the group).
* :class:`Each` -- the request lists resources (topics, groups, config resources); the ones
  the principal may not act on are taken out before the handler runs and answered with the
  error next to the handler's answers (e.g. DeleteTopics: DELETE per topic, a topic
  ``TOPIC_AUTHORIZATION_FAILED``, the others deleted).
* :class:`Hide` -- the answer lists resources; the ones the principal may not describe are
  left out silently (ListGroups, ListTransactions, OffsetFetch of all topics).
* :class:`Custom` -- a function for the few APIs whose rule fits none of these
  (InitProducerId, CreateDelegationToken).
* :data:`IN_HANDLER` -- the handler makes the checks itself (with :func:`allowed`) because
  they shape its answer (Produce and Fetch per partition, Metadata, FindCoordinator, the ACL
  APIs, DescribeDelegationToken, the share-group data path), and :data:`OPEN` -- nothing is
  authorized (ApiVersions, the SASL exchange, telemetry, DescribeCluster).

A new handler adds its line to :data:`RULES`; see
``tests/handlers/test_authz.py``. :func:`authorized_operations` computes KIP-430's
``authorized_operations`` bit fields.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mockkafka.cluster.acls import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AclOperation,
    ResourceType,
    operations_bit_field,
)
from mockkafka.errors import ErrorCode
from mockkafka.handlers._context import RequestContext, Result, error_response
from mockkafka.protocol.codec import Message

#: ``authorized_operations`` when the client did not ask for them (Kafka's INT32 min).
AUTHORIZED_OPERATIONS_OMITTED = -(2**31)

_TOPIC, _G, _T = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID
_C, _USER = ResourceType.CLUSTER, ResourceType.USER
_R, _W, _D = AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE
_DESC, _ALTER = AclOperation.DESCRIBE, AclOperation.ALTER
_ANY_VERSION = (0, 32767)


def allowed(ctx: RequestContext, op: AclOperation, rtype: ResourceType, name: str) -> bool:
    """May this request's principal do ``op`` on resource ``rtype``/``name``?"""
    if not ctx.cluster.config.authorizer:
        return True
    host = ctx.peer.rsplit(":", 1)[0] if ":" in ctx.peer else ctx.peer
    return ctx.cluster.acls.authorize(ctx.principal, host, op, rtype, name)


def topic_allowed(ctx: RequestContext, op: AclOperation, topic: str) -> bool:
    return allowed(ctx, op, _TOPIC, topic)


def group_allowed(ctx: RequestContext, op: AclOperation, group: str) -> bool:
    return allowed(ctx, op, _G, group)


def cluster_allowed(ctx: RequestContext, op: AclOperation) -> bool:
    return allowed(ctx, op, _C, CLUSTER_NAME)


_FAILED = {
    _G: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    _T: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    _C: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    _TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.DELEGATION_TOKEN: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
    _USER: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}


# Kafka's messages for the errors (Errors.java), sent where a response has a message field.
_MESSAGES = {
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
    ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED: "Delegation Token authorization failed.",
}


def failed_code(rtype: ResourceType) -> ErrorCode:
    """The error Kafka answers when ``rtype`` is not authorized."""
    return _FAILED[rtype]


def authorized_operations(ctx: RequestContext, rtype: ResourceType, name: str) -> int:
    """KIP-430's bit field of the operations the principal may do on the resource (every
    operation Kafka supports for ``rtype`` when the authorizer is off)."""
    ops = SUPPORTED_OPERATIONS[rtype]
    if ctx.cluster.config.authorizer:
        ops = tuple(op for op in ops if allowed(ctx, op, rtype, name))
    return operations_bit_field(ops)


def cluster_operations(ctx: RequestContext, asked: bool) -> int:
    """``cluster_authorized_operations`` of Metadata v8-10 and DescribeCluster: omitted
    when not ``asked``, 0 without DESCRIBE on the cluster."""
    if not asked:
        return AUTHORIZED_OPERATIONS_OMITTED
    if not cluster_allowed(ctx, _DESC):
        return 0
    return authorized_operations(ctx, _C, CLUSTER_NAME)


# -- declarations --------------------------------------------------------------------------

#: What locates a resource in a request item: item -> (type, name), or None to let the
#: handler answer it (an unknown topic id, say).
Locate = Callable[[RequestContext, Any], "tuple[ResourceType, str] | None"]


@dataclass(frozen=True, slots=True)
class Whole:
    """The request is refused whole unless the principal may ``op`` on the resource named
    by request field ``field`` (the cluster when ``rtype`` is CLUSTER). A request whose
    field is empty is let through (AddPartitionsToTxn v4+ batches). The refusal answers
    every part of the request with the error, or is ``answer(request, error)`` where Kafka's
    differs (DescribeLogDirs: the error and no log dirs)."""

    rtype: ResourceType
    op: AclOperation
    field: str = ""
    versions: tuple[int, int] = _ANY_VERSION
    answer: Callable[[Message, ErrorCode], Message] | None = None


@dataclass(frozen=True, slots=True)
class Each:
    """Per item of request array ``array``: an item whose resource (``locate``) the
    principal may not ``op`` is taken out and answered in response array ``answer`` with
    the type's error (``key`` names the response field that identifies a plain string
    item). ``unless_cluster``: an operation on the cluster that allows every item.
    ``within``: (request array, response array, identity field) when the items sit in an
    outer array (OffsetFetch v8+ groups). ``not_attempted``: when any item is refused,
    none is done and the others answer OPERATION_NOT_ATTEMPTED (AddPartitionsToTxn)."""

    array: str
    answer: str
    locate: Locate
    op: AclOperation
    key: str = "name"
    unless_cluster: AclOperation | None = None
    within: tuple[str, str, str] | None = None
    versions: tuple[int, int] = _ANY_VERSION
    not_attempted: bool = False


@dataclass(frozen=True, slots=True)
class Hide:
    """Answer items of response array ``answer`` (field ``key`` names the resource) the
    principal may not ``op`` are left out, unless it may ``unless_cluster`` on the cluster;
    ``when``: only for requests it holds for (None: always). ``within`` as for Each."""

    answer: str
    key: str
    rtype: ResourceType
    op: AclOperation
    unless_cluster: AclOperation | None = None
    when: Callable[[Message], bool] | None = None
    within: tuple[str, str, str] | None = None
    versions: tuple[int, int] = _ANY_VERSION


@dataclass(frozen=True, slots=True)
class Custom:
    """``check(ctx, request)`` returns the error to answer the whole request with, or None."""

    check: Callable[[RequestContext, Message], ErrorCode | None]


@dataclass(frozen=True, slots=True)
class Marker:
    why: str


#: The handler authorizes what it answers itself (the checks shape its answer).
IN_HANDLER = Marker("checked by the handler")
#: Kafka authorizes nothing for this API.
OPEN = Marker("not authorized")

Check = Whole | Each | Hide | Custom | Marker


def topic(field: str = "name") -> Locate:
    """Locate a topic by name in item field ``field`` (or a plain string item)."""

    def locate(_ctx: RequestContext, item: Any) -> tuple[ResourceType, str] | None:
        name = item if isinstance(item, str) else item.get(field)
        return (_TOPIC, name) if name else None

    return locate


def _topic_by_name_or_id(ctx: RequestContext, item: Any) -> tuple[ResourceType, str] | None:
    if isinstance(item, str):
        return _TOPIC, item
    if item.get("name"):
        return _TOPIC, str(item["name"])
    tid = item.get("topic_id")
    t = ctx.cluster.topics_by_id.get(tid) if isinstance(tid, uuid.UUID) else None
    return None if t is None else (_TOPIC, t.name)


def group(field: str = "group_id") -> Locate:
    """Locate a group in item field ``field`` (or a plain string item)."""

    def locate(_ctx: RequestContext, item: Any) -> tuple[ResourceType, str] | None:
        name = item if isinstance(item, str) else item.get(field)
        return (_G, name) if name is not None else None

    return locate


def _transactional_id(_ctx: RequestContext, item: Any) -> tuple[ResourceType, str] | None:
    return (_T, item) if isinstance(item, str) else None


# ConfigResource.Type codes -> the ACL resource their configs belong to.
_CONFIG_RESOURCE = {2: _TOPIC, 4: _C, 8: _C, 16: _C, 32: _G}


def _config_resource(_ctx: RequestContext, item: Any) -> tuple[ResourceType, str] | None:
    rtype = _CONFIG_RESOURCE.get(item.get("resource_type"))
    if rtype is None:
        return None  # the handler answers INVALID_REQUEST
    return rtype, CLUSTER_NAME if rtype == _C else str(item.get("resource_name") or "")


def _init_producer_id(ctx: RequestContext, request: Message) -> ErrorCode | None:
    # WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the cluster or WRITE
    # on some topic (Kafka 3.x authorizeByResourceType).
    txn = request.get("transactional_id")
    if txn:
        return (
            None if allowed(ctx, _W, _T, txn) else ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        )
    if cluster_allowed(ctx, AclOperation.IDEMPOTENT_WRITE) or any(
        topic_allowed(ctx, _W, t) for t in ctx.cluster.topics
    ):
        return None
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def _create_delegation_token(ctx: RequestContext, request: Message) -> ErrorCode | None:
    # Creating a token for another owner needs CREATE_TOKENS on that user.
    name = request.get("owner_principal_name")
    if not name:
        return None
    owner = f"{request.get('owner_principal_type') or 'User'}:{name}"
    if owner == ctx.principal or allowed(ctx, AclOperation.CREATE_TOKENS, _USER, owner):
        return None
    return ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED


def _log_dirs_refused(_request: Message, code: ErrorCode) -> Message:
    return {"error_code": code, "results": []}


def _replica_dirs_refused(request: Message, code: ErrorCode) -> Message:
    return {
        "results": [
            {
                "topic_name": t.get("name"),
                "partitions": [
                    {"partition_index": p, "error_code": code} for p in t.get("partitions") or []
                ],
            }
            for d in request.get("dirs") or []
            for t in d.get("topics") or []
        ]
    }


def _no_topics(request: Message) -> bool:
    return request.get("topics") is None


_OFFSET_COMMIT_TOPICS = Each("topics", "topics", topic(), _R)

#: API name -> the checks Kafka makes for it, in order.
RULES: dict[str, tuple[Check, ...]] = {
    # -- data path and metadata
    "Produce": (Whole(_T, _W, "transactional_id", versions=(3, 32767)), IN_HANDLER),
    "Fetch": (IN_HANDLER,),
    "Metadata": (IN_HANDLER,),
    "FindCoordinator": (IN_HANDLER,),
    "ListOffsets": (Each("topics", "topics", topic(), _DESC),),
    "OffsetForLeaderEpoch": (
        Each("topics", "topics", topic("topic"), _DESC, unless_cluster=AclOperation.CLUSTER_ACTION),
    ),
    "DescribeTopicPartitions": (
        Each("topics", "topics", topic(), _DESC),
        Hide("topics", "name", _TOPIC, _DESC, when=lambda r: not r.get("topics")),
    ),
    "DescribeProducers": (Each("topics", "topics", topic(), _R),),
    # -- topics
    "CreateTopics": (
        Each("topics", "topics", topic(), AclOperation.CREATE, unless_cluster=AclOperation.CREATE),
    ),
    "DeleteTopics": (
        Each("topic_names", "responses", topic(), _D, versions=(0, 5)),
        Each("topics", "responses", _topic_by_name_or_id, _D, versions=(6, 32767)),
    ),
    "CreatePartitions": (Each("topics", "results", topic(), _ALTER),),
    "DeleteRecords": (Each("topics", "topics", topic(), _D),),
    # -- configs and quotas
    "DescribeConfigs": (
        Each("resources", "results", _config_resource, AclOperation.DESCRIBE_CONFIGS),
    ),
    "AlterConfigs": (Each("resources", "responses", _config_resource, AclOperation.ALTER_CONFIGS),),
    "IncrementalAlterConfigs": (
        Each("resources", "responses", _config_resource, AclOperation.ALTER_CONFIGS),
    ),
    "ListConfigResources": (Whole(_C, AclOperation.DESCRIBE_CONFIGS),),
    "DescribeClientQuotas": (Whole(_C, AclOperation.DESCRIBE_CONFIGS),),
    "AlterClientQuotas": (Whole(_C, AclOperation.ALTER_CONFIGS),),
    # -- consumer groups
    "JoinGroup": (Whole(_G, _R, "group_id"),),
    "SyncGroup": (Whole(_G, _R, "group_id"),),
    "Heartbeat": (Whole(_G, _R, "group_id"),),
    "LeaveGroup": (Whole(_G, _R, "group_id"),),
    "ConsumerGroupHeartbeat": (Whole(_G, _R, "group_id"),),
    "OffsetCommit": (Whole(_G, _R, "group_id"), _OFFSET_COMMIT_TOPICS),
    "OffsetFetch": (
        Whole(_G, _DESC, "group_id", versions=(0, 7)),
        Each("topics", "topics", topic(), _DESC, versions=(0, 7)),
        Hide("topics", "name", _TOPIC, _DESC, when=_no_topics, versions=(0, 7)),
        Each("groups", "groups", group(), _DESC, versions=(8, 32767)),
        Each(
            "topics",
            "topics",
            topic(),
            _DESC,
            within=("groups", "groups", "group_id"),
            versions=(8, 32767),
        ),
        Hide(
            "topics",
            "name",
            _TOPIC,
            _DESC,
            within=("groups", "groups", "group_id"),
            versions=(8, 32767),
            when=lambda g: g.get("topics") is None,
        ),
    ),
    "OffsetDelete": (Whole(_G, _D, "group_id"), _OFFSET_COMMIT_TOPICS),
    "DescribeGroups": (Each("groups", "groups", group(), _DESC, key="group_id"),),
    "ConsumerGroupDescribe": (Each("group_ids", "groups", group(), _DESC, key="group_id"),),
    "ListGroups": (Hide("groups", "group_id", _G, _DESC, unless_cluster=_DESC),),
    "DeleteGroups": (Each("groups_names", "results", group(), _D, key="group_id"),),
    # -- share groups (KIP-932): READ on the group and, per partition, on the topic, checked
    # by handlers/_share.py as the group and partitions are looked up
    "ShareGroupHeartbeat": (IN_HANDLER,),
    "ShareFetch": (IN_HANDLER,),
    "ShareAcknowledge": (IN_HANDLER,),
    "ShareGroupDescribe": (Each("group_ids", "groups", group(), _DESC, key="group_id"),),
    # -- streams groups (KIP-1071)
    "StreamsGroupHeartbeat": (Whole(_G, _R, "group_id"),),
    "StreamsGroupDescribe": (Each("group_ids", "groups", group(), _DESC, key="group_id"),),
    # the share-group offset admin APIs check the group and each topic as they look them up
    "DescribeShareGroupOffsets": (IN_HANDLER,),
    "AlterShareGroupOffsets": (IN_HANDLER,),
    "DeleteShareGroupOffsets": (IN_HANDLER,),
    # -- transactions
    "InitProducerId": (Custom(_init_producer_id),),
    "AddPartitionsToTxn": (
        Whole(_T, _W, "v3_and_below_transactional_id", versions=(0, 3)),
        Each(
            "v3_and_below_topics",
            "results_by_topic_v3_and_below",
            topic(),
            _W,
            versions=(0, 3),
            not_attempted=True,
        ),
        Whole(_C, AclOperation.CLUSTER_ACTION, versions=(4, 32767)),
    ),
    "AddOffsetsToTxn": (Whole(_T, _W, "transactional_id"), Whole(_G, _R, "group_id")),
    "TxnOffsetCommit": (
        Whole(_T, _W, "transactional_id"),
        Whole(_G, _R, "group_id"),
        Each("topics", "topics", _topic_by_name_or_id, _R),  # v6+: topic ids (KIP-1319)
    ),
    "EndTxn": (Whole(_T, _W, "transactional_id"),),
    "WriteTxnMarkers": (Whole(_C, AclOperation.CLUSTER_ACTION),),
    "DescribeTransactions": (
        Each(
            "transactional_ids",
            "transaction_states",
            _transactional_id,
            _DESC,
            key="transactional_id",
        ),
    ),
    "ListTransactions": (Hide("transaction_states", "transactional_id", _T, _DESC),),
    # -- cluster administration
    "DescribeCluster": (OPEN,),
    "DescribeLogDirs": (Whole(_C, _DESC, answer=_log_dirs_refused),),
    "AlterReplicaLogDirs": (Whole(_C, _ALTER, answer=_replica_dirs_refused),),
    "ElectLeaders": (Whole(_C, _ALTER),),
    "AlterPartitionReassignments": (Whole(_C, _ALTER),),
    "ListPartitionReassignments": (Whole(_C, _DESC),),
    "UpdateFeatures": (Whole(_C, _ALTER),),
    "DescribeQuorum": (Whole(_C, _DESC),),
    "CreateAcls": (IN_HANDLER,),
    "DescribeAcls": (IN_HANDLER,),
    "DeleteAcls": (IN_HANDLER,),
    "DescribeUserScramCredentials": (Whole(_C, _DESC),),
    "AlterUserScramCredentials": (Whole(_C, _ALTER),),
    # -- delegation tokens (Renew/Expire: only the owner or a renewer, checked by the token
    # store; Describe lists only the tokens the principal may see)
    "CreateDelegationToken": (Custom(_create_delegation_token),),
    "RenewDelegationToken": (IN_HANDLER,),
    "ExpireDelegationToken": (IN_HANDLER,),
    "DescribeDelegationToken": (IN_HANDLER,),
    # -- nothing to authorize
    "ApiVersions": (OPEN,),
    "SaslHandshake": (OPEN,),
    "SaslAuthenticate": (OPEN,),
    "GetTelemetrySubscriptions": (OPEN,),
    "PushTelemetry": (OPEN,),
}


def _applies(check: Whole | Each | Hide, version: int) -> bool:
    return check.versions[0] <= version <= check.versions[1]


# -- enforcement -----------------------------------------------------------------------------

Finish = Callable[[Result], Result]


def gate(ctx: RequestContext, request: Message) -> tuple[Result | None, Message, Finish | None]:
    """Authorize ``request`` by its :data:`RULES` (the caller checks that the authorizer is
    on): ``(refusal, request, finish)``. A refusal is the whole answer; otherwise run the
    handler on the returned request (the refused items taken out) and pass its result
    through ``finish`` (when not None) to add their answers and hide what must not show."""
    finishers: list[Finish] = []
    for check in RULES.get(ctx.api.name, ()):
        if isinstance(check, Marker):
            continue
        if isinstance(check, Custom):
            code = check.check(ctx, request)
            if code is not None:
                return _refusal(ctx, request, code), request, None
            continue
        if not _applies(check, ctx.version):
            continue
        if isinstance(check, Whole):
            code = _whole(ctx, request, check)
            if code is not None:
                if check.answer is not None:
                    return check.answer(request, code), request, None
                return _refusal(ctx, request, code), request, None
        elif isinstance(check, Each):
            refusal, request, fin = _each(ctx, request, check)
            if refusal is not None:
                return refusal, request, None
            if fin is not None:
                finishers.append(fin)
        else:
            finishers.append(_hide(ctx, request, check))
    if not finishers:
        return None, request, None

    def finish(result: Result) -> Result:
        for fin in finishers:
            result = fin(result)
        return result

    return None, request, finish


def _refusal(ctx: RequestContext, request: Message, code: ErrorCode) -> Message:
    """``request`` answered whole with ``code`` and, where the response has room for it,
    Kafka's message (librdkafka expects one with some errors)."""
    return error_response(ctx, request, code, _MESSAGES.get(code))


def _whole(ctx: RequestContext, request: Message, check: Whole) -> ErrorCode | None:
    if check.rtype == _C:
        name = CLUSTER_NAME
    else:
        value = request.get(check.field)
        if not value:
            return None
        name = str(value)
    return None if allowed(ctx, check.op, check.rtype, name) else _FAILED[check.rtype]


def _each(
    ctx: RequestContext, request: Message, check: Each
) -> tuple[Result | None, Message, Finish | None]:
    if check.unless_cluster is not None and cluster_allowed(ctx, check.unless_cluster):
        return None, request, None
    if check.within is None:
        kept, denied = _split(ctx, request.get(check.array), check)
        if not denied:
            return None, request, None
        answers = _answers(ctx, request, check, denied)
        if check.not_attempted:
            others = error_response(ctx, {check.array: kept}, ErrorCode.OPERATION_NOT_ATTEMPTED)
            out = error_response(ctx, request, 0)
            out[check.answer] = answers + list(others.get(check.answer) or [])
            return out, request, None
        if not kept:
            # Nothing left for the handler (and an empty list may mean "all" to it).
            out = error_response(ctx, {}, ErrorCode.NONE)
            out[check.answer] = answers
            return out, request, None
        return None, {**request, check.array: kept}, _appender(check.answer, answers)
    outer_req, outer_resp, ident = check.within
    outers = request.get(outer_req)
    if not isinstance(outers, list):
        return None, request, None
    new_outers = []
    extra: dict[Any, list[Any]] = {}
    for outer in outers:
        kept, denied = _split(ctx, outer.get(check.array), check)
        if denied:
            wrapped = {outer_req: [{**outer, check.array: denied}]}
            built = error_response(ctx, wrapped, _code_of(ctx, check, denied[0]))
            extra[outer.get(ident)] = list(
                (built.get(outer_resp) or [{}])[0].get(check.answer) or []
            )
            outer = {**outer, check.array: kept}
        new_outers.append(outer)
    if not extra:
        return None, request, None

    def finish(result: Result) -> Result:
        if not isinstance(result, dict):
            return result

        def merged(o: Any) -> Any:
            add = extra.get(o.get(ident))
            return {**o, check.answer: list(o.get(check.answer) or []) + add} if add else o

        return {**result, outer_resp: [merged(o) for o in result.get(outer_resp) or []]}

    return None, {**request, outer_req: new_outers}, finish


def _split(ctx: RequestContext, items: Any, check: Each) -> tuple[list[Any], list[Any]]:
    kept: list[Any] = []
    denied: list[Any] = []
    for item in items if isinstance(items, list) else ():
        where = check.locate(ctx, item)
        if where is None or allowed(ctx, check.op, where[0], where[1]):
            kept.append(item)
        else:
            denied.append(item)
    return kept, denied


def _code_of(ctx: RequestContext, check: Each, item: Any) -> ErrorCode:
    where = check.locate(ctx, item)
    return _FAILED[where[0] if where else _TOPIC]


def _answers(ctx: RequestContext, request: Message, check: Each, denied: list[Any]) -> list[Any]:
    """The response entries answering the refused ``denied`` items."""
    out: list[Any] = []
    for item in denied:
        code = _code_of(ctx, check, item)
        if isinstance(item, str):
            out.append({check.key: item, "error_code": code})
            continue
        built = error_response(ctx, {check.array: [item]}, code, _MESSAGES.get(code))
        entry = (built.get(check.answer) or [{}])[0]
        if check.locate is _topic_by_name_or_id and not item.get("name"):
            entry["name"] = None  # the id was not the client's to resolve
        if check.array == "groups" and "topics" in entry:
            entry["topics"] = []  # a refused group comes without its topics (OffsetFetch v8+)
        out.append(entry)
    return out


def _appender(answer: str, entries: list[Any]) -> Finish:
    def finish(result: Result) -> Result:
        if isinstance(result, dict):
            # A new dict: a handler's answer may be shared (cached), never edit it in place.
            return {**result, answer: list(result.get(answer) or []) + entries}
        return result

    return finish


def _hide(ctx: RequestContext, request: Message, check: Hide) -> Finish:
    everything = check.unless_cluster is not None and cluster_allowed(ctx, check.unless_cluster)

    def visible(entries: list[Any]) -> list[Any]:
        return [e for e in entries if allowed(ctx, check.op, check.rtype, str(e.get(check.key)))]

    def finish(result: Result) -> Result:
        if everything or not isinstance(result, dict):
            return result
        if check.within is None:
            if check.when is None or check.when(request):
                return {**result, check.answer: visible(list(result.get(check.answer) or []))}
            return result
        outer_req, outer_resp, ident = check.within
        asked = {o.get(ident): o for o in request.get(outer_req) or []}

        def hidden(o: Any) -> Any:
            if check.when is None or check.when(asked.get(o.get(ident), {})):
                return {**o, check.answer: visible(list(o.get(check.answer) or []))}
            return o

        return {**result, outer_resp: [hidden(o) for o in result.get(outer_resp) or []]}

    return finish
