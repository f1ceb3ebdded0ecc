"""The exceptions the sans-IO protocol layer raises, re-exported from :mod:`mockkafka.errors`.

They are defined in ``mockkafka/errors.py``, the bottom layer, beside
:class:`~mockkafka.errors.MockKafkaError` (their base class) and the ErrorCode table; the codec
modules import them from here. The public names are ``mockkafka.ProtocolError`` and
``mockkafka.MockKafkaError``.
"""

from mockkafka.errors import FrameTooLarge, MockKafkaError, ProtocolError, UnsupportedVersion

__all__ = ["FrameTooLarge", "MockKafkaError", "ProtocolError", "UnsupportedVersion"]
