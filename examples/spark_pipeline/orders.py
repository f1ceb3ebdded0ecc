"""Fake order events for the pipeline, as the upstream order service would publish them.

Each order is a JSON object keyed by its customer id::

    {"order_id": "3f2c...", "customer_id": "c-007", "amount": "12.50", "currency": "EUR",
     "placed_at": "2026-01-02T03:04:05Z"}

Amounts are decimal strings with two places (money is never a float on the wire).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from faker import Faker


@dataclass(frozen=True)
class Order:
    order_id: str
    customer_id: str
    amount: Decimal
    currency: str
    placed_at: datetime

    def key(self) -> bytes:
        return self.customer_id.encode()

    def value(self) -> bytes:
        return json.dumps(
            {
                "order_id": self.order_id,
                "customer_id": self.customer_id,
                "amount": str(self.amount),
                "currency": self.currency,
                "placed_at": self.placed_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        ).encode()


def fake_orders(count: int, *, customers: int = 8, seed: int = 7) -> list[Order]:
    """``count`` reproducible orders spread over ``customers`` customers."""
    fake = Faker()
    fake.seed_instance(seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        Order(
            order_id=fake.uuid4(),
            customer_id=f"c-{fake.random_int(0, customers - 1):03d}",
            amount=Decimal(fake.pydecimal(left_digits=3, right_digits=2, positive=True)),
            currency="EUR",
            placed_at=start + timedelta(seconds=i),
        )
        for i in range(count)
    ]


def expected_totals(orders: Iterable[Order]) -> dict[str, tuple[Decimal, int]]:
    """``{customer_id: (total amount, order count)}``: what the pipeline must converge to."""
    totals: dict[str, tuple[Decimal, int]] = defaultdict(lambda: (Decimal(0), 0))
    for o in orders:
        amount, n = totals[o.customer_id]
        totals[o.customer_id] = (amount + o.amount, n + 1)
    return dict(totals)


def batches(orders: list[Order], size: int) -> Iterator[list[Order]]:
    for i in range(0, len(orders), size):
        yield orders[i : i + size]
