"""Public cluster verbs for the faults subsystem (mixed into mockkafka.Cluster).

``cluster.faults`` makes fault rules (see ``mockkafka/faults/`` and ``docs/faults.md``);
the verbs below change the cluster the way operations and failures do, keeping it coherent
(the replication verbs ``move_leader``, ``shrink_isr``, ``stop_broker``, ``truncate_log``,
``delete_records_before``, ``cap_api_versions`` live in ``_cluster.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from mockkafka.cluster.configs import check_broker_configs
from mockkafka.cluster.configs import config_text as _config_text
from mockkafka.faults.engine import Faults, engine_of

if TYPE_CHECKING:
    from mockkafka.cluster.state import ClusterState

T = TypeVar("T")


class FaultsVerbs:
    """Verbs of the faults subsystem; they run on the cluster's loop via ``self._call``."""

    _state: ClusterState

    def _call(self, fn: Callable[[], T]) -> T:  # pragma: no cover - provided by the cluster
        raise NotImplementedError

    @property
    def faults(self) -> Faults:
        """Fault rules: ``cluster.faults.on("Produce").times(2).error("NOT_LEADER_OR_FOLLOWER")``.

        Also ``rules()``, ``remove(rule)``, ``clear()`` and ``events``.
        """
        f: Faults | None = self.__dict__.get("_faults")
        if f is None:
            f = Faults(engine_of(self._state), self._call)
            self.__dict__["_faults"] = f
        return f

    def set_isr(self, topic: str, partition: int, *, to: Sequence[int]) -> None:
        """Set the ISR of a partition (grow or shrink; the leader moves if it leaves)."""
        self._call(lambda: self._state.set_isr(topic, partition, list(to)))

    expand_isr = set_isr

    def add_partitions(self, topic: str, *, total: int) -> None:
        """Grow ``topic`` to ``total`` partitions (as CreatePartitions would)."""
        self._call(lambda: self._state.create_partitions(topic, total))

    def recreate_topic(self, topic: str) -> None:
        """Delete ``topic`` and create it again, empty, with a new topic id."""
        self._call(lambda: self._state.recreate_topic(topic))

    def set_topic_config(self, topic: str, configs: dict[str, Any]) -> None:
        """Set topic configs (a value of None resets one to its default)."""
        cfg = {k: (None if v is None else str(v)) for k, v in configs.items()}
        self._call(lambda: self._state.set_topic_config(topic, cfg))

    def set_broker_config(self, configs: dict[str, Any], *, broker: int | None = None) -> None:
        """Change broker configs at run time, as an operator's IncrementalAlterConfigs would.

        ``broker=None`` sets the cluster-wide default (DescribeConfigs source
        DYNAMIC_DEFAULT_BROKER_CONFIG), a broker id sets that broker's own value
        (DYNAMIC_BROKER_CONFIG); a value of None deletes the dynamic value. A config Kafka
        cannot change at run time (``num.partitions``, ...) raises KafkaApiError
        INVALID_REQUEST: give it when the cluster is built, ``Cluster(config={...})``.
        """
        check_broker_configs(
            {k: v for k, v in configs.items() if v is not None}, where="set_broker_config"
        )
        cfg = {k: (None if v is None else _config_text(v)) for k, v in configs.items()}
        self._call(lambda: self._state.set_broker_config(cfg, broker))

    def set_client_quotas(
        self,
        quotas: dict[str, float | None],
        *,
        user: str | None = None,
        client_id: str | None = None,
        ip: str | None = None,
    ) -> None:
        """Set client quotas as AlterClientQuotas would (None removes a key).

        The entity is the ``user`` and/or ``client_id`` (or an ``ip``) given; the name
        ``"<default>"`` is the default entity of that type. Quotas are enforced:
        ``cluster.set_client_quotas({"producer_byte_rate": 1024}, client_id="app")`` makes
        the broker answer that client with ``throttle_time_ms`` and stop reading from it
        for that long, as Kafka does. Bad keys or values raise KafkaApiError.
        """
        from mockkafka.cluster.quotas import client_quotas, make_entity

        given = {"user": user, "client-id": client_id, "ip": ip}
        pairs = {t: (None if n == "<default>" else n) for t, n in given.items() if n is not None}
        ops = [(k, None if v is None else float(v)) for k, v in quotas.items()]
        self._call(lambda: client_quotas(self._state).alter(make_entity(pairs), ops, apply=True))

    def alter_config(self, topic: str, key: str, value: Any) -> None:
        """Set one topic config (None resets it to its default)."""
        self.set_topic_config(topic, {key: value})

    def uncap_api_versions(self) -> None:
        """Undo :meth:`cap_api_versions`: advertise every version served again."""
        self._call(self._state.api_version_caps.clear)
