"""Root conftest: plugins the test suite needs (pytest only allows them here), and the
hypothesis profiles: ``ci`` (bounded, the default) and ``long`` (``--hypothesis-profile=long``,
for nightly fuzzing campaigns)."""

from mockkafka.stateful import register_profiles

pytest_plugins = ["pytester"]

register_profiles()
