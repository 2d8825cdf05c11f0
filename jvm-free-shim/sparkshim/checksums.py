"""Spark's ``crc32(binary)`` as a DuckDB function of the session (DuckDB has no CRC-32).

Spark computes ``java.util.zip.CRC32`` of the bytes (a STRING's UTF-8 bytes, by the
implicit cast to BINARY), an unsigned 32-bit value as a BIGINT; ``zlib.crc32`` is the
same checksum (ISO-HDLC, the one zip and PNG use).

>>> crc32(b"abc"), crc32(b"")
(891568578, 0)
"""

from __future__ import annotations

import zlib

import duckdb
import pyarrow as pa
from duckdb.func import FunctionNullHandling, PythonUDFType

__all__ = ["CRC32_FUNCTION", "crc32", "register"]

CRC32_FUNCTION = "sparkshim_crc32"


def crc32(data: bytes) -> int:
    return zlib.crc32(data)


def _crc32_batch(values: pa.Array) -> pa.Array:
    return pa.array(
        [None if data is None else crc32(data) for data in values.to_pylist()], type=pa.int64()
    )


def register(connection: duckdb.DuckDBPyConnection) -> None:
    """Make :data:`CRC32_FUNCTION` callable on ``connection``."""
    connection.create_function(
        CRC32_FUNCTION,
        _crc32_batch,
        ["BLOB"],
        "BIGINT",
        type=PythonUDFType.ARROW,
        null_handling=FunctionNullHandling.SPECIAL,
        side_effects=False,
    )
