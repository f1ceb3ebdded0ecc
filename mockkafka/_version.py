"""The package version, in one place: ``mockkafka.__version__`` and ``mockkafka --version``."""

__version__ = "0.1.0"
