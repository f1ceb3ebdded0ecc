"""Security options through the plugin: the marker and ini options reach the cluster."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_marker_with_an_authorizer_and_ini_users(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_security_protocol = SASL_PLAINTEXT
        kafka_users =
            admin:admin-secret
            alice:secret
        kafka_super_users =
            User:admin
        """
    )
    pytester.makepyfile(
        """
        import pytest
        from confluent_kafka import KafkaError, Producer

        @pytest.mark.kafka_cluster(authorizer=True, topics={"orders": 1})
        def test_alice_is_denied(kafka_cluster):
            assert dict(kafka_cluster.state.config.users)["alice"] == "secret"
            errors = []
            p = Producer({**kafka_cluster.client_config("confluent", user="alice"),
                          "message.timeout.ms": 3000})
            p.produce("orders", b"v", on_delivery=lambda e, m: errors.append(e))
            p.flush(10)
            assert errors[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
            p = Producer(kafka_cluster.client_config("confluent", user="admin"))
            p.produce("orders", b"v")
            assert p.flush(10) == 0
        """
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_bad_users_line_is_named(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        """
        [pytest]
        kafka_users =
            alice
        """
    )
    pytester.makepyfile("def test_x(kafka_cluster):\n    pass\n")
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*ini option kafka_users: expected NAME:PASSWORD lines*"])
