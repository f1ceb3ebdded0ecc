"""Root conftest: plugins the test suite needs (pytest only allows them here)."""

pytest_plugins = ["pytester"]
