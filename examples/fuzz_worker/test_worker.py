"""The property test of the billing worker: whatever faults a plan injects, every order is
invoiced (at least once). Run it with ``python -m pytest examples/fuzz_worker``.

Against the buggy worker (``commit_before_processing=True``) hypothesis finds a plan that
breaks the property and shrinks it to one step, e.g.
``FaultPlan(steps=(Step(action=Fault(match=Match(api=('Produce',)),
actions=(Error(code='UNKNOWN_SERVER_ERROR'),))),), topics=(('orders', 1), ('invoices', 1)))``:
the broker fails to write the invoice, the worker crashes after committing, and the restarted worker
skips the orders of that batch. The fixed worker passes every plan.
"""

from __future__ import annotations

from hypothesis import given, settings
from worker import INVOICES, ORDERS, run_until_idle

import mockkafka
from mockkafka.strategies import FaultPlan, fault_plans

ORDER_COUNT = 3

#: Faults on what the worker sends, in any order and number (up to 3 steps).
PLANS = fault_plans(
    topics=[ORDERS, INVOICES],
    apis=["Produce", "Fetch", "OffsetCommit"],
    verbs=["error", "drop_connection", "delay"],
    # the errors a broker could answer these requests (all "as Kafka"): a leader moving,
    # an ISR shrinking, a write timing out after the append, a broker failing, a moving
    # or loading group coordinator
    errors=[
        "NOT_LEADER_OR_FOLLOWER",
        "NOT_ENOUGH_REPLICAS",
        "REQUEST_TIMED_OUT",
        "UNKNOWN_SERVER_ERROR",
        "NOT_COORDINATOR",
        "COORDINATOR_LOAD_IN_PROGRESS",
    ],
    max_steps=3,
    max_ms=100,
    timed=False,
)


def check_every_order_invoiced(plan: FaultPlan, *, commit_before_processing: bool = False) -> None:
    """Run the worker under ``plan`` on a fresh cluster; fail if an order has no invoice."""
    with mockkafka.Cluster() as cluster:
        cluster.create_topic(ORDERS)
        cluster.create_topic(INVOICES)
        orders = [f"order-{i}".encode() for i in range(ORDER_COUNT)]
        for order in orders:
            cluster.produce(ORDERS, order)
        plan.apply(cluster)
        run_until_idle(cluster.bootstrap_servers, commit_before_processing=commit_before_processing)
        invoiced = {r.value for r in cluster.topic(INVOICES).records()}
        missing = [o for o in orders if b"invoice:" + o not in invoiced]
        assert not missing, f"orders never invoiced: {missing}"
        cluster.faults.clear()  # a drawn fault may never meet its request: not a failure here


@settings(max_examples=10, deadline=None)
@given(plan=PLANS)
def test_every_order_is_invoiced(plan: FaultPlan) -> None:
    check_every_order_invoiced(plan)
