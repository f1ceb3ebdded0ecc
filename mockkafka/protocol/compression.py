"""Compression codecs for Kafka record batches, exactly as real clients write them.

Theory of operation
-------------------
Kafka compresses the *records section* of a v2 batch, or the *inner message set* of a legacy
(magic 0/1) wrapper message, with one of four codecs named by the low three attribute bits
(:class:`CompressionType`). :func:`compress` and :func:`decompress` are pure functions over
bytes; the record layer (``records.py``) decides what to feed them.

Each codec has wire quirks that real clients depend on:

* **gzip** -- plain RFC 1952 members; several concatenated members are accepted on input.
* **snappy** -- two framings are in use. The Java producer, kafka-python and aiokafka send
  *xerial* framing (``\\x82SNAPPY\\x00``, two int32 version fields, then repeated
  ``[int32 length][raw snappy block]``); librdkafka and kafkajs send a bare raw snappy block.
  :func:`decompress` detects the xerial magic and otherwise treats the input as raw.
  :func:`compress` writes raw snappy unless ``xerial=True``; every client reads both.
* **lz4** -- the LZ4 *frame* format with independent blocks (Java rejects linked blocks),
  64 KiB blocks, no content size and no content checksum. Kafka 0.8-0.9 (message format v0)
  computed the frame header checksum over the 4 magic bytes too, which is wrong; with
  ``magic=0`` :func:`compress` reproduces that broken checksum, and :func:`decompress` accepts
  both the correct and the broken checksum whatever the magic.
* **zstd** -- only allowed with message format v2 (Kafka 2.1+, KIP-110). Frames written by
  streaming encoders carry no content size, so decompression always streams.

Every malformed, truncated or over-long input raises
:class:`~mockkafka.protocol.errors.ProtocolError` (never ``zlib.error``, ``RuntimeError`` and
friends). A server answers it with ``CORRUPT_MESSAGE``. Output is capped by
``max_output_size`` (default :data:`DEFAULT_MAX_OUTPUT_SIZE`) so that a decompression bomb
costs a bounded amount of memory and time.

:class:`UnsupportedCodecError` (a ``ProtocolError`` subclass) is raised when a codec is not
allowed with the requested message format (zstd with magic 0/1, or codec ids 5-7); a server
answers it with ``UNSUPPORTED_COMPRESSION_TYPE``.

The codec libraries (python-snappy, lz4, xxhash, zstandard) are imported by the functions
that use them: a ``mockkafka serve`` whose clients do not compress pays for none of them
(issue 33).
"""

from __future__ import annotations

import struct
import zlib
from enum import IntEnum
from typing import Final

from mockkafka.protocol.errors import ProtocolError

__all__ = [
    "DEFAULT_MAX_OUTPUT_SIZE",
    "CompressionType",
    "UnsupportedCodecError",
    "compress",
    "decompress",
]

BytesLike = bytes | bytearray | memoryview

#: Default cap on the decompressed size of one compressed payload (256 MiB).
DEFAULT_MAX_OUTPUT_SIZE: Final = 256 * 1024 * 1024


class CompressionType(IntEnum):
    """Codec id carried in bits 0-2 of a batch's (or legacy message's) attributes."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


class UnsupportedCodecError(ProtocolError):
    """The codec id is unknown, or not allowed with this message format (zstd before v2).

    A broker answers ``UNSUPPORTED_COMPRESSION_TYPE`` (error code 76).
    """


# --------------------------------------------------------------------------- snappy

_XERIAL_MAGIC: Final = b"\x82SNAPPY\x00"
_XERIAL_HEADER: Final = struct.Struct(">8sii")  # magic, version, compatible version
_XERIAL_VERSION: Final = 1
_XERIAL_BLOCK_SIZE: Final = 32 * 1024  # snappy-java's default block size
_INT32: Final = struct.Struct(">i")
# The densest snappy element is a 3-byte copy of 64 bytes: no block expands more than ~21x.
_SNAPPY_MAX_RATIO: Final = 22


def _snappy_raw_length(block: BytesLike) -> int:
    """Read the uncompressed length (a little-endian base-128 varint) preceding a raw block."""
    result = 0
    shift = 0
    for i in range(min(len(block), 5)):
        byte = block[i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result
        shift += 7
    raise ProtocolError("snappy: invalid uncompressed-length preamble")


def _snappy_raw_decompress(block: BytesLike, limit: int) -> bytes:
    import snappy

    size = _snappy_raw_length(block)
    if size > limit:
        raise ProtocolError(
            f"snappy: block declares {size} uncompressed bytes, above the {limit}-byte limit"
        )
    if size > _SNAPPY_MAX_RATIO * len(block):
        # Checked before decompressing, so a forged length cannot make us allocate it.
        raise ProtocolError(
            f"snappy: block of {len(block)} bytes declares {size} uncompressed bytes, more "
            "than snappy can encode in it"
        )
    try:
        out: bytes = snappy.uncompress(bytes(block))
    except Exception as exc:  # python-snappy/cramjam raise several types
        detail = str(exc) or str(exc.__cause__ or "") or type(exc).__name__
        raise ProtocolError(f"snappy: corrupt raw block ({detail})") from exc
    return out


def _snappy_decompress(data: BytesLike, limit: int) -> bytes:
    view = memoryview(data)
    if len(view) < _XERIAL_HEADER.size or bytes(view[:8]) != _XERIAL_MAGIC:
        return _snappy_raw_decompress(view, limit)
    pos = _XERIAL_HEADER.size
    end = len(view)
    out = bytearray()
    while pos < end:
        if end - pos < 4:
            raise ProtocolError("snappy: truncated xerial block length")
        (size,) = _INT32.unpack_from(view, pos)
        pos += 4
        if size < 0 or size > end - pos:
            raise ProtocolError(
                f"snappy: xerial block length {size} exceeds the {end - pos} remaining bytes"
            )
        out += _snappy_raw_decompress(view[pos : pos + size], limit - len(out))
        pos += size
    return bytes(out)


def _snappy_compress(data: BytesLike, xerial: bool) -> bytes:
    import snappy

    if not xerial:
        out: bytes = snappy.compress(bytes(data))
        return out
    view = memoryview(data)
    parts = [_XERIAL_HEADER.pack(_XERIAL_MAGIC, _XERIAL_VERSION, _XERIAL_VERSION)]
    # An empty payload still gets one (empty) block: kafka-python cannot read a bare header.
    for start in range(0, max(len(view), 1), _XERIAL_BLOCK_SIZE):
        block: bytes = snappy.compress(bytes(view[start : start + _XERIAL_BLOCK_SIZE]))
        parts.append(_INT32.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


# --------------------------------------------------------------------------- lz4

_LZ4_MAGIC: Final = b"\x04\x22\x4d\x18"
_LZ4_SKIPPABLE_MASK: Final = 0xFFFFFFF0
_LZ4_SKIPPABLE_MAGIC: Final = 0x184D2A50
_UINT32_LE: Final = struct.Struct("<I")


def _lz4_descriptor_end(frame: memoryview) -> int:
    """Index of the header-checksum byte of the frame starting at ``frame[0]``."""
    if len(frame) < 7:
        raise ProtocolError("lz4: truncated frame header")
    flg = frame[4]
    end = 6  # magic (4) + FLG + BD
    if flg & 0x08:
        end += 8  # content size
    if flg & 0x01:
        end += 4  # dictionary id
    if len(frame) <= end:
        raise ProtocolError("lz4: truncated frame header")
    return end


def _lz4_repair_header(frame: memoryview) -> BytesLike:
    """Return ``frame`` with a correct header checksum if it carries Kafka 0.8's broken one.

    Kafka's old LZ4 output stream hashed the magic bytes together with the frame descriptor.
    Anything that matches neither form is passed through for lz4 to reject.
    """
    import xxhash

    if bytes(frame[:4]) != _LZ4_MAGIC:
        return frame
    hc_pos = _lz4_descriptor_end(frame)
    correct = (xxhash.xxh32_intdigest(frame[4:hc_pos]) >> 8) & 0xFF
    actual = frame[hc_pos]
    if actual == correct:
        return frame
    broken = (xxhash.xxh32_intdigest(frame[0:hc_pos]) >> 8) & 0xFF
    if actual != broken:
        return frame
    fixed = bytearray(frame)
    fixed[hc_pos] = correct
    return fixed


def _lz4_decompress(data: BytesLike, limit: int) -> bytes:
    import lz4.frame

    view = memoryview(data)
    if not view:
        raise ProtocolError("lz4: empty payload")
    out = bytearray()
    remaining: BytesLike = view
    while remaining:
        rview = memoryview(remaining)
        if len(rview) >= 4:
            (frame_magic,) = _UINT32_LE.unpack_from(rview, 0)
            if frame_magic & _LZ4_SKIPPABLE_MASK == _LZ4_SKIPPABLE_MAGIC:
                if len(rview) < 8:
                    raise ProtocolError("lz4: truncated skippable frame")
                (skip,) = _UINT32_LE.unpack_from(rview, 4)
                if skip > len(rview) - 8:
                    raise ProtocolError("lz4: truncated skippable frame")
                remaining = rview[8 + skip :]
                continue
        decoder = lz4.frame.LZ4FrameDecompressor()
        try:
            chunk = decoder.decompress(_lz4_repair_header(rview), max_length=limit - len(out) + 1)
            while True:
                out += chunk
                if len(out) > limit:
                    raise ProtocolError(f"lz4: output exceeds the {limit}-byte limit")
                if decoder.eof:
                    break
                if decoder.needs_input:
                    raise ProtocolError("lz4: truncated frame (no end mark)")
                chunk = decoder.decompress(b"", max_length=limit - len(out) + 1)
        except ProtocolError:
            raise
        except Exception as exc:  # lz4 raises RuntimeError for corrupt input
            raise ProtocolError(f"lz4: corrupt frame ({exc})") from exc
        remaining = decoder.unused_data
    return bytes(out)


def _lz4_compress(data: BytesLike, magic: int) -> bytes:
    import lz4.frame
    import xxhash

    frame: bytes = lz4.frame.compress(
        bytes(data),
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        content_checksum=False,
        block_checksum=False,
        store_size=False,
    )
    if magic != 0:
        return frame
    hc_pos = _lz4_descriptor_end(memoryview(frame))
    broken = (xxhash.xxh32_intdigest(frame[0:hc_pos]) >> 8) & 0xFF
    return frame[:hc_pos] + bytes((broken,)) + frame[hc_pos + 1 :]


# --------------------------------------------------------------------------- zstd

# A zstd RLE block turns 4 input bytes into up to 128 KiB; feeding input in slices of
# (room left / _ZSTD_MAX_RATIO) bounds how far one call can overshoot the output limit.
_ZSTD_MAX_RATIO: Final = 32 * 1024
_ZSTD_MIN_SLICE: Final = 64
_ZSTD_MAX_SLICE: Final = 1024 * 1024


def _zstd_decompress(data: BytesLike, limit: int) -> bytes:
    import zstandard

    view = memoryview(data)
    if not view:
        raise ProtocolError("zstd: empty payload")
    dctx = zstandard.ZstdDecompressor()
    out = bytearray()
    try:
        pos = 0
        while pos < len(view):
            dobj = dctx.decompressobj()
            while not dobj.eof:
                if pos >= len(view):
                    raise ProtocolError("zstd: truncated frame")
                room = max(limit - len(out), 0)
                step = min(max(room // _ZSTD_MAX_RATIO, _ZSTD_MIN_SLICE), _ZSTD_MAX_SLICE)
                piece = view[pos : pos + step]
                pos += len(piece)
                out += dobj.decompress(piece)
                if len(out) > limit:
                    raise ProtocolError(f"zstd: output exceeds the {limit}-byte limit")
            # Bytes fed past the end of this frame start the next one.
            pos -= len(dobj.unused_data)
    except ProtocolError:
        raise
    except Exception as exc:  # zstandard.ZstdError and friends
        raise ProtocolError(f"zstd: corrupt frame ({exc})") from exc
    return bytes(out)


# --------------------------------------------------------------------------- gzip


def _gzip_decompress(data: BytesLike, limit: int) -> bytes:
    view = memoryview(data)
    if not view:
        raise ProtocolError("gzip: empty payload")
    out = bytearray()
    pending: BytesLike = view
    try:
        while True:
            dobj = zlib.decompressobj(16 + zlib.MAX_WBITS)
            # Ask for one byte more than allowed: getting it means the limit is exceeded;
            # getting less than asked means the input ran out.
            out += dobj.decompress(pending, limit - len(out) + 1)
            while True:
                if len(out) > limit:
                    raise ProtocolError(f"gzip: output exceeds the {limit}-byte limit")
                if dobj.eof:
                    break
                if not dobj.unconsumed_tail:
                    raise ProtocolError("gzip: truncated stream")
                out += dobj.decompress(dobj.unconsumed_tail, limit - len(out) + 1)
            rest = dobj.unused_data
            if not rest.strip(b"\x00"):
                break  # zero padding after the last member is tolerated, as by gzip(1)
            pending = rest
    except ProtocolError:
        raise
    except Exception as exc:  # zlib.error
        raise ProtocolError(f"gzip: corrupt stream ({exc})") from exc
    return bytes(out)


# --------------------------------------------------------------------------- public API


def _codec(codec: int) -> CompressionType:
    try:
        return CompressionType(codec)
    except ValueError:
        raise UnsupportedCodecError(f"unknown compression codec id {codec}") from None


def compress(
    codec: int,
    data: BytesLike,
    *,
    magic: int = 2,
    xerial: bool = False,
    level: int | None = None,
) -> bytes:
    """Compress ``data`` as a Kafka client using message format ``magic`` would.

    ``codec`` is a :class:`CompressionType` (or its int id). ``xerial=True`` selects xerial
    framing for snappy (what the Java client sends); the default is raw snappy. ``magic=0``
    makes lz4 write Kafka 0.8's broken header checksum, which v0 readers require. ``level`` is
    passed to gzip/zstd (ignored by snappy and lz4).

    Returns the compressed payload: store it as the records section of a v2 batch or as the
    value of a legacy wrapper message. Raises :class:`UnsupportedCodecError` for an unknown
    codec or zstd with ``magic`` < 2; a downconverting server turns that into
    ``UNSUPPORTED_COMPRESSION_TYPE``.
    """
    kind = _codec(codec)
    if kind is CompressionType.NONE:
        return bytes(data)
    if kind is CompressionType.GZIP:
        import gzip

        return gzip.compress(bytes(data), compresslevel=6 if level is None else level, mtime=0)
    if kind is CompressionType.SNAPPY:
        return _snappy_compress(data, xerial)
    if kind is CompressionType.LZ4:
        return _lz4_compress(data, magic)
    if magic < 2:
        raise UnsupportedCodecError(f"zstd compression needs message format v2, not v{magic}")
    import zstandard

    cctx = zstandard.ZstdCompressor(level=3 if level is None else level)
    out: bytes = cctx.compress(bytes(data))
    return out


def decompress(
    codec: int,
    data: BytesLike,
    *,
    magic: int = 2,
    max_output_size: int = DEFAULT_MAX_OUTPUT_SIZE,
) -> bytes:
    """Decompress a payload written by any Kafka client, in every framing clients use.

    Accepts raw and xerial snappy, lz4 frames with either header checksum (``magic`` does not
    matter for reading; it is accepted for symmetry with :func:`compress`), zstd frames with
    or without a content size, and concatenated gzip members / lz4 or zstd frames.

    Returns the decompressed bytes: a v2 records section or a legacy inner message set, ready
    for the record decoder. Raises :class:`~mockkafka.protocol.errors.ProtocolError` if the
    payload is corrupt or truncated, or would decompress to more than ``max_output_size``
    bytes; :class:`UnsupportedCodecError` for codec ids 5-7.
    """
    del magic  # every framing is recognised from the bytes themselves
    kind = _codec(codec)
    if kind is CompressionType.NONE:
        if len(data) > max_output_size:
            raise ProtocolError(f"payload exceeds the {max_output_size}-byte limit")
        return bytes(data)
    if kind is CompressionType.GZIP:
        return _gzip_decompress(data, max_output_size)
    if kind is CompressionType.SNAPPY:
        return _snappy_decompress(data, max_output_size)
    if kind is CompressionType.LZ4:
        return _lz4_decompress(data, max_output_size)
    return _zstd_decompress(data, max_output_size)
