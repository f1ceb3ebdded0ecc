"""Tests for mockkafka.protocol.compression: round trips, client interop, wire quirks, bombs."""

from __future__ import annotations

import contextlib
import gzip
import os
import struct
from typing import Any

import aiokafka.codec as aio_codec
import kafka.codec as kp_codec
import lz4.frame
import pytest
import snappy
import xxhash
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockkafka.protocol.compression import (
    DEFAULT_MAX_OUTPUT_SIZE,
    CompressionType,
    UnsupportedCodecError,
    compress,
    decompress,
)
from mockkafka.protocol.errors import ProtocolError

CODECS = [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]

PAYLOADS = {
    "empty": b"",
    "one": b"x",
    "text": b"hello kafka " * 500,
    "random": os.urandom(70_000),  # > 64 KiB: several lz4 blocks, several xerial blocks
    "zeros": bytes(200_000),
}


def _lz4_hc_pos(frame: bytes) -> int:
    flg = frame[4]
    return 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.name)
@pytest.mark.parametrize("magic", [0, 1, 2])
def test_round_trip(codec: CompressionType, magic: int, payload: bytes) -> None:
    if codec is CompressionType.ZSTD and magic < 2:
        with pytest.raises(UnsupportedCodecError):
            compress(codec, payload, magic=magic)
        return
    assert decompress(codec, compress(codec, payload, magic=magic), magic=magic) == payload


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_snappy_xerial_round_trip(payload: bytes) -> None:
    out = compress(CompressionType.SNAPPY, payload, xerial=True)
    assert out.startswith(b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01")
    assert decompress(CompressionType.SNAPPY, out) == payload


def test_inputs_may_be_bytearray_or_memoryview() -> None:
    data = PAYLOADS["text"]
    for codec in CODECS:
        packed = compress(codec, bytearray(data))
        assert decompress(codec, memoryview(packed)) == data
        assert decompress(codec, bytearray(packed)) == data


def test_none_codec_is_identity() -> None:
    assert compress(CompressionType.NONE, b"abc") == b"abc"
    assert decompress(0, memoryview(b"abc")) == b"abc"


@given(st.binary(max_size=3000), st.sampled_from(CODECS), st.booleans())
@settings(max_examples=60, deadline=None)
def test_round_trip_property(data: bytes, codec: CompressionType, xerial: bool) -> None:
    assert decompress(codec, compress(codec, data, xerial=xerial)) == data


# ----------------------------------------------------------------------------- client interop


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_reads_kafka_python_codecs(payload: bytes) -> None:
    assert decompress(1, kp_codec.gzip_encode(payload)) == payload
    assert decompress(2, kp_codec.snappy_encode(payload)) == payload  # xerial
    assert decompress(2, kp_codec.snappy_encode(payload, xerial_compatible=False)) == payload
    assert decompress(3, kp_codec.lz4_encode(payload)) == payload
    assert decompress(3, kp_codec.lz4_encode_old_kafka(payload), magic=0) == payload
    assert decompress(4, kp_codec.zstd_encode(payload)) == payload


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_kafka_python_reads_ours(payload: bytes) -> None:
    assert kp_codec.gzip_decode(compress(1, payload)) == payload
    assert kp_codec.snappy_decode(compress(2, payload)) == payload
    assert kp_codec.snappy_decode(compress(2, payload, xerial=True)) == payload
    assert kp_codec.lz4_decode(compress(3, payload)) == payload
    assert kp_codec.lz4_decode_old_kafka(compress(3, payload, magic=0)) == payload
    assert kp_codec.zstd_decode(compress(4, payload)) == payload


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=list(PAYLOADS))
def test_aiokafka_codecs_both_ways(payload: bytes) -> None:
    assert decompress(1, aio_codec.gzip_encode(payload)) == payload
    assert decompress(2, aio_codec.snappy_encode(payload)) == payload
    assert decompress(2, bytes(aio_codec.snappy_encode(payload, xerial_compatible=False))) == (
        payload
    )
    assert decompress(3, aio_codec.lz4_encode(payload)) == payload
    assert decompress(4, aio_codec.zstd_encode(payload)) == payload
    assert aio_codec.gzip_decode(compress(1, payload)) == payload
    assert aio_codec.snappy_decode(compress(2, payload)) == payload
    assert aio_codec.snappy_decode(compress(2, payload, xerial=True)) == payload
    assert aio_codec.lz4_decode(compress(3, payload)) == payload
    assert aio_codec.zstd_decode(compress(4, payload)) == payload


# ----------------------------------------------------------------------------- snappy framing


def test_snappy_raw_is_the_default() -> None:
    data = PAYLOADS["text"]
    out = compress(CompressionType.SNAPPY, data)
    assert not out.startswith(b"\x82SNAPPY")
    assert snappy.uncompress(out) == data


def test_snappy_xerial_blocks_are_32k() -> None:
    data = PAYLOADS["random"]
    out = compress(CompressionType.SNAPPY, data, xerial=True)
    pos, blocks = 16, []
    while pos < len(out):
        (size,) = struct.unpack_from(">i", out, pos)
        blocks.append(snappy.uncompress(out[pos + 4 : pos + 4 + size]))
        pos += 4 + size
    assert [len(b) for b in blocks] == [32768, 32768, len(data) - 65536]
    assert b"".join(blocks) == data


def test_snappy_xerial_header_only_is_empty() -> None:
    # snappy-java writes no block at all for an empty stream.
    assert decompress(2, b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)) == b""


@pytest.mark.parametrize(
    "tail",
    [
        struct.pack(">i", 100) + b"abc",
        b"\x00\x00",
        struct.pack(">i", -5),
        struct.pack(">i", 3) + b"zzz",
    ],
    ids=["block-overruns", "short-length", "negative-length", "corrupt-block"],
)
def test_snappy_xerial_corrupt(tail: bytes) -> None:
    with pytest.raises(ProtocolError, match="snappy"):
        decompress(2, b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + tail)


def test_snappy_forged_length_rejected_before_allocating() -> None:
    # A 6-byte "raw block" claiming 200 MB: below the limit, far above snappy's density.
    forged = bytes([0x80, 0xA8, 0xAD, 0x5F]) + b"\x00\x00"
    with pytest.raises(ProtocolError, match="more than snappy can encode"):
        decompress(2, forged)


# ----------------------------------------------------------------------------- lz4 quirks


def test_lz4_frame_flags_match_what_java_accepts() -> None:
    frame = compress(CompressionType.LZ4, PAYLOADS["random"])
    assert frame[:4] == b"\x04\x22\x4d\x18"
    flg, bd = frame[4], frame[5]
    assert flg >> 6 == 1  # version 01
    assert flg & 0x20  # independent blocks
    assert not flg & 0x10  # no block checksum
    assert not flg & 0x08  # no content size
    assert not flg & 0x04  # no content checksum
    assert (bd >> 4) & 7 == 4  # 64 KiB max block size
    assert frame[6] == (xxhash.xxh32_intdigest(frame[4:6]) >> 8) & 0xFF


def test_lz4_magic0_writes_the_broken_header_checksum() -> None:
    frame = compress(CompressionType.LZ4, b"payload" * 100, magic=0)
    hc = _lz4_hc_pos(frame)
    assert frame[hc] == (xxhash.xxh32_intdigest(frame[:hc]) >> 8) & 0xFF
    assert frame[hc] != (xxhash.xxh32_intdigest(frame[4:hc]) >> 8) & 0xFF
    with pytest.raises(RuntimeError):  # a strict LZ4 reader rejects it...
        lz4.frame.decompress(frame)
    assert kp_codec.lz4_decode_old_kafka(frame) == b"payload" * 100  # ...old Kafka reads it


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("store_size", [False, True])
def test_lz4_both_checksums_accepted(magic: int, store_size: bool) -> None:
    data = b"abc" * 1000
    good = lz4.frame.compress(data, store_size=store_size, block_linked=False)
    hc = _lz4_hc_pos(good)
    broken = bytearray(good)
    broken[hc] = (xxhash.xxh32_intdigest(good[:hc]) >> 8) & 0xFF
    assert broken != good
    assert decompress(3, good, magic=magic) == data
    assert decompress(3, bytes(broken), magic=magic) == data


def test_lz4_wrong_checksum_rejected() -> None:
    frame = bytearray(compress(CompressionType.LZ4, b"abc" * 1000))
    frame[6] ^= 0x5A
    with pytest.raises(ProtocolError, match="lz4"):
        decompress(3, bytes(frame))


def test_lz4_linked_blocks_and_content_checksum_are_read() -> None:
    data = PAYLOADS["text"] * 40
    frame = lz4.frame.compress(data, block_linked=True, content_checksum=True, store_size=True)
    assert decompress(3, frame) == data


def test_lz4_concatenated_frames_and_skippable_frame() -> None:
    skippable = struct.pack("<II", 0x184D2A50, 3) + b"xyz"
    data = compress(3, b"one") + skippable + compress(3, b"two")
    assert decompress(3, data) == b"onetwo"


# ----------------------------------------------------------------------------- zstd


def test_zstd_frame_without_content_size() -> None:
    data = PAYLOADS["text"]
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    with pytest.raises(zstandard.ZstdError):  # the one-shot API cannot do this...
        zstandard.ZstdDecompressor().decompress(frame)
    assert decompress(CompressionType.ZSTD, frame) == data  # ...streaming can


def test_zstd_streamed_frame_and_multiple_frames() -> None:
    cctx = zstandard.ZstdCompressor()
    chunker: Any = cctx.chunker(chunk_size=1024)
    parts = [*chunker.compress(PAYLOADS["random"]), *chunker.finish()]
    streamed = b"".join(parts)
    assert decompress(4, streamed) == PAYLOADS["random"]
    assert decompress(4, compress(4, b"ab") + compress(4, b"cd")) == b"abcd"


# ----------------------------------------------------------------------------- gzip


def test_gzip_members_and_padding() -> None:
    assert decompress(1, gzip.compress(b"ab") + gzip.compress(b"cd")) == b"abcd"
    assert decompress(1, gzip.compress(b"ab") + bytes(8)) == b"ab"
    with pytest.raises(ProtocolError, match="gzip"):
        decompress(1, gzip.compress(b"ab") + b"trailing junk")


# ----------------------------------------------------------------------------- corruption


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("xerial", [False, True])
def test_truncation_is_protocol_error(codec: CompressionType, xerial: bool) -> None:
    full = compress(codec, PAYLOADS["random"], xerial=xerial)
    for cut in (0, 1, 3, 7, 11, 17, 21, len(full) // 2, len(full) - 1):
        with pytest.raises(ProtocolError):
            decompress(codec, full[:cut])


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
def test_garbage_is_protocol_error(codec: CompressionType) -> None:
    for garbage in (b"\xff" * 40, b"not compressed at all, really", os.urandom(300)):
        with pytest.raises(ProtocolError):
            decompress(codec, garbage)


@given(st.binary(max_size=400), st.sampled_from(CODECS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_only_protocol_error(data: bytes, codec: CompressionType) -> None:
    with contextlib.suppress(ProtocolError):
        decompress(codec, data, max_output_size=1 << 20)


@given(st.data(), st.sampled_from(CODECS), st.booleans())
@settings(max_examples=200, deadline=None)
def test_fuzz_mutated_payload_only_protocol_error(
    data: st.DataObject, codec: CompressionType, xerial: bool
) -> None:
    packed = bytearray(compress(codec, PAYLOADS["text"][:2000], xerial=xerial))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(packed) - 1))
        packed[pos] = data.draw(st.integers(0, 255))
    with contextlib.suppress(ProtocolError):
        decompress(codec, bytes(packed), max_output_size=1 << 20)


@pytest.mark.parametrize("codec", [5, 6, 7, 99, -1])
def test_unknown_codec(codec: int) -> None:
    with pytest.raises(UnsupportedCodecError, match="unknown compression codec"):
        decompress(codec, b"abc")
    with pytest.raises(UnsupportedCodecError):
        compress(codec, b"abc")


def test_unsupported_codec_error_is_protocol_error() -> None:
    assert issubclass(UnsupportedCodecError, ProtocolError)


# ----------------------------------------------------------------------------- bombs


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name)
@pytest.mark.parametrize("xerial", [False, True])
def test_output_limit(codec: CompressionType, xerial: bool) -> None:
    data = bytes(100_000)
    packed = compress(codec, data, xerial=xerial)
    assert decompress(codec, packed, max_output_size=100_000) == data
    with pytest.raises(ProtocolError, match="limit"):
        decompress(codec, packed, max_output_size=99_999)


def test_none_codec_respects_limit() -> None:
    with pytest.raises(ProtocolError, match="limit"):
        decompress(0, b"abcd", max_output_size=3)


@pytest.mark.parametrize("codec", [CompressionType.GZIP, CompressionType.ZSTD, CompressionType.LZ4])
def test_bomb_stops_early(codec: CompressionType) -> None:
    # 64 MiB of zeros compresses to a few KB; a 1 MiB cap must stop long before inflating it.
    bomb = compress(codec, bytes(64 * 1024 * 1024))
    assert len(bomb) < 400_000
    with pytest.raises(ProtocolError, match="limit"):
        decompress(codec, bomb, max_output_size=1 << 20)


def test_default_limit_is_generous() -> None:
    assert DEFAULT_MAX_OUTPUT_SIZE == 256 * 1024 * 1024
