"""Checks Kafka makes while it parses a request, beyond the schema.

Kafka builds a request object from the decoded message, and some constructors validate it
(``DescribeAclsRequest.validate`` and friends): a request that fails is an unparseable
request, so the broker closes the connection without answering, exactly as for a truncated
frame. :func:`check_request` raises :class:`ProtocolError` for those; the framing layer calls
it after decoding a request body. Each rule was confirmed against a real Kafka 4.4 broker by
the oracle tier (``tests/oracle``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockkafka.protocol.errors import ProtocolError

#: Resource type, pattern type, operation and permission type code 0 is UNKNOWN: Kafka's ACL
#: requests refuse it while parsing (any other unknown code parses, and is answered).
_ACL_ENUMS = {
    "DescribeAcls": ("resource_type_filter", "pattern_type_filter", "operation", "permission_type"),
    "DeleteAcls": ("resource_type_filter", "pattern_type_filter", "operation", "permission_type"),
    "CreateAcls": ("resource_type", "resource_pattern_type", "operation", "permission_type"),
}
_ACL_ITEMS = {"DescribeAcls": None, "DeleteAcls": "filters", "CreateAcls": "creations"}


def _acl_unknowns(api: str) -> Callable[[int, dict[str, Any]], None]:
    fields = _ACL_ENUMS[api]
    items_key = _ACL_ITEMS[api]

    def check(version: int, body: dict[str, Any]) -> None:
        items = [body] if items_key is None else body.get(items_key) or []
        for item in items:
            for f in fields:
                if f in item and item[f] == 0:
                    raise ProtocolError(f"{api} v{version}: {f} is UNKNOWN (0)")

    return check


_CHECKS: dict[str, Callable[[int, dict[str, Any]], None]] = {
    api: _acl_unknowns(api) for api in _ACL_ENUMS
}


def check_request(api: str, version: int, body: dict[str, Any]) -> None:
    """Raise ProtocolError when Kafka would refuse this decoded request while parsing it."""
    check = _CHECKS.get(api)
    if check is not None:
        check(version, body)
