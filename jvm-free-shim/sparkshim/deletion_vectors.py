"""Delta deletion vectors: the rows of a data file that a snapshot no longer holds.

Since Delta 2.3 (and by default on Databricks), DELETE, UPDATE and MERGE may leave a data
file in place and mark its removed rows in a *deletion vector* (DV): the file's ``add``
action carries a descriptor of the vector, and a reader must skip the rows it lists. A
row is named by its position in its file (row 0 first). This module follows Delta's
PROTOCOL.md, sections "Deletion Vectors" and "Deletion Vector Format":

* the descriptor (``Descriptor``): ``storageType`` ``u`` (a file beside the data, named
  by a UUID: ``<random prefix>/deletion_vector_<uuid>.bin``, the UUID Z85-encoded in the
  last 20 characters of ``pathOrInlineDv``), ``i`` (the vector itself, Z85-encoded, in the
  log) or ``p`` (a file at an absolute path); ``offset`` (where the vector starts in its
  file), ``sizeInBytes`` and ``cardinality`` (how many rows it removes);
* a vector file: a format version byte (1), then per vector at its ``offset``: its size
  (4 bytes, big-endian), the vector, and the CRC-32 of the vector (4 bytes, big-endian);
* a vector: the magic number 1681511377 (4 bytes, little-endian), then a 64-bit roaring
  bitmap in the "portable" serialization of the RoaringFormatSpec, read with pyroaring
  (CRoaring), not by hand.

A vector whose size, magic number, checksum or cardinality is not what its descriptor
says raises ``DeletionVectorError``: reading on would return rows the table deleted.

Which vector each data file of a snapshot has comes from the log (``live_files.py``).

>>> bitmap = read_inline(Descriptor.from_json(
...     {"storageType": "i", "pathOrInlineDv": "^Bg9^0rr910000000000iXQKl0rr91000625c8Xg0rri41POJ5",
...      "sizeInBytes": 38, "cardinality": 3}))
>>> list(bitmap)
[1, 3, 5]
"""

from __future__ import annotations

import struct
import threading
import uuid
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np
from pyroaring import BitMap64

from sparkshim.errors import AnalysisException, UnsupportedSqlError

MAGIC_NUMBER = 1681511377
FILE_FORMAT_VERSION = 1
# The characters of Z85 (ZeroMQ RFC 32), each worth its index.
_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_VALUES = {character: value for value, character in enumerate(_Z85)}
_UUID_LENGTH = 20  # a UUID's 16 bytes, Z85-encoded


class DeletionVectorError(AnalysisException):
    """A deletion vector that is not what its descriptor says (or cannot be found)."""


@dataclass(frozen=True)
class Descriptor:
    """A deletion vector's descriptor, as an ``add`` or ``remove`` action carries it."""

    storage_type: str
    path_or_inline_dv: str
    offset: int | None
    size_in_bytes: int
    cardinality: int
    max_row_index: int | None = None

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Descriptor:
        """The descriptor of an action's ``deletionVector`` (JSON, or a checkpoint row)."""
        offset, max_row_index = value.get("offset"), value.get("maxRowIndex")
        return cls(
            storage_type=str(value["storageType"]),
            path_or_inline_dv=str(value["pathOrInlineDv"]),
            offset=None if offset is None else int(offset),
            size_in_bytes=int(value["sizeInBytes"]),
            cardinality=int(value["cardinality"]),
            max_row_index=None if max_row_index is None else int(max_row_index),
        )

    def to_json(self) -> dict[str, Any]:
        """The descriptor as an action carries it (a ``remove`` of the file repeats it)."""
        value: dict[str, Any] = {
            "storageType": self.storage_type,
            "pathOrInlineDv": self.path_or_inline_dv,
        }
        if self.offset is not None:
            value["offset"] = self.offset
        value["sizeInBytes"] = self.size_in_bytes
        value["cardinality"] = self.cardinality
        if self.max_row_index is not None:
            value["maxRowIndex"] = self.max_row_index
        return value

    @property
    def unique_id(self) -> str:
        """What tells this vector from another of the same file (PROTOCOL.md's
        ``uniqueId``).

        >>> Descriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6).unique_id
        'uab^-aqEH.-t@S}K{vb[*k^@4'
        """
        text = self.storage_type + self.path_or_inline_dv
        return text if self.offset is None else f"{text}@{self.offset}"

    def file_path(self, location: Path) -> Path:
        """Where an on-disk vector is stored (``u``: relative to the table).

        >>> Descriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6).file_path(Path("/t"))
        PosixPath('/t/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin')
        """
        if self.storage_type == "u":
            text = self.path_or_inline_dv
            prefix, encoded = text[:-_UUID_LENGTH], text[-_UUID_LENGTH:]
            name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(encoded))}.bin"
            return location / prefix / name if prefix else location / name
        if self.storage_type == "p":
            return Path(local_path(location, self.path_or_inline_dv))
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_INVALID_STORAGE_TYPE] a deletion vector of storage"
            f" type '{self.storage_type}' has no file"
        )


def z85_decode(text: str) -> bytes:
    """The bytes Z85 ``text`` encodes (its length a multiple of 5: every 5 characters
    are 4 bytes, big-endian).

    >>> z85_decode("HelloWorld").hex()
    '864fd26fb559f75b'
    """
    if len(text) % 5:
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_INVALID_ENCODING] {len(text)} characters are no"
            " Z85 text (a multiple of 5 is)"
        )
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for character in text[start : start + 5]:
            digit = _Z85_VALUES.get(character)
            if digit is None:
                raise DeletionVectorError(
                    message="[DELTA_DELETION_VECTOR_INVALID_ENCODING] the character"
                    f" {character!r} is not Z85"
                )
            value = value * 85 + digit
        if value >= 1 << 32:
            raise DeletionVectorError(
                message="[DELTA_DELETION_VECTOR_INVALID_ENCODING] a Z85 group exceeds 4 bytes"
            )
        out += value.to_bytes(4, "big")
    return bytes(out)


def local_path(location: Path, path: str) -> str:
    """The file system path of a file the log names by ``path`` (URL-encoded, relative
    to the table or an absolute URI)."""
    if "://" in path or path.startswith("file:"):
        parsed = urlparse(path)
        if parsed.scheme != "file":
            raise UnsupportedSqlError(f"reading the file {path}", "sparkshim reads local tables")
        return unquote(parsed.path)
    if path.startswith("/"):
        return unquote(path)
    return str(location / unquote(path))


def z85_encode(data: bytes) -> str:
    """Z85 text of ``data`` (its length a multiple of 4).

    >>> z85_encode(bytes.fromhex("864fd26fb559f75b"))
    'HelloWorld'
    """
    characters: list[str] = []
    for start in range(0, len(data), 4):
        value = int.from_bytes(data[start : start + 4], "big")
        group: list[str] = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            group.append(_Z85[digit])
        characters.extend(reversed(group))
    return "".join(characters)


# --- encoding -----------------------------------------------------------------------


def serialize(bitmap: BitMap64) -> bytes:
    """A vector as Delta stores it: the magic number, then the portable bitmap."""
    return struct.pack("<I", MAGIC_NUMBER) + bitmap.serialize()


def write_file(location: Path, bitmap: BitMap64) -> Descriptor:
    """Store ``bitmap`` in a new vector file of the table; its descriptor."""
    return write_vectors(location, [bitmap])[0]


def write_vectors(location: Path, bitmaps: list[BitMap64]) -> list[Descriptor]:
    """Store ``bitmaps`` in one new vector file of the table (``u``: a random UUID named in
    the descriptors, the file in the table's folder), one after another as PROTOCOL.md
    frames them (the format version, then each vector's size, data and CRC-32); a
    descriptor of each, at its offset, in order. As Delta on Spark does, one file holds
    every vector a commit writes."""
    name = uuid.uuid4()
    framed = bytearray([FILE_FORMAT_VERSION])
    descriptors = []
    for bitmap in bitmaps:
        data = serialize(bitmap)
        offset = len(framed)
        framed += struct.pack(">I", len(data)) + data + struct.pack(">I", zlib.crc32(data))
        descriptor = Descriptor(
            "u", z85_encode(name.bytes), offset, len(data), len(bitmap), _max_row_index(bitmap)
        )
        descriptors.append(descriptor)
    (location / f"deletion_vector_{name}.bin").write_bytes(bytes(framed))
    return descriptors


def _max_row_index(bitmap: BitMap64) -> int | None:
    return int(bitmap.max()) if len(bitmap) else None


def inline(bitmap: BitMap64) -> Descriptor:
    """``bitmap`` as an inline (``i``) descriptor (zero bytes pad it to a multiple of 4)."""
    data = serialize(bitmap)
    padded = data + bytes(-len(data) % 4)
    return Descriptor("i", z85_encode(padded), None, len(data), len(bitmap))


# --- decoding -----------------------------------------------------------------------


def read(location: Path, descriptor: Descriptor) -> BitMap64:
    """The row positions the vector removes, checked against its descriptor. Vectors
    never change once written, so each is read once (kept per table and vector)."""
    key = (str(location), descriptor.unique_id)
    with _lock:
        kept = _bitmaps.get(key)
        if kept is not None:
            _bitmaps.move_to_end(key)
            return kept
    if descriptor.storage_type == "i":
        bitmap = read_inline(descriptor)
    else:
        bitmap = read_stored(location, descriptor)
    with _lock:
        _bitmaps[key] = bitmap
        while len(_bitmaps) > _KEPT_BITMAPS:
            _bitmaps.popitem(last=False)
    return bitmap


_KEPT_BITMAPS = 4096
_bitmaps: OrderedDict[tuple[str, str], BitMap64] = OrderedDict()
_lock = threading.Lock()


def read_inline(descriptor: Descriptor) -> BitMap64:
    """An inline (``i``) vector: Z85 text of the magic number and the bitmap, padded to a
    multiple of 4 bytes."""
    data = z85_decode(descriptor.path_or_inline_dv)
    if len(data) < descriptor.size_in_bytes:
        raise _size_mismatch("inline", descriptor.size_in_bytes, len(data))
    return _checked(decode(data[: descriptor.size_in_bytes], "inline"), descriptor, "inline")


def read_stored(location: Path, descriptor: Descriptor) -> BitMap64:
    """A vector stored in a file (``u`` or ``p``): its size, data and CRC-32 at its
    offset, each checked."""
    path = descriptor.file_path(location)
    offset = descriptor.offset or 0
    try:
        with open(path, "rb") as stored:
            version = stored.read(1)
            if version != bytes([FILE_FORMAT_VERSION]):
                raise DeletionVectorError(
                    message=f"[DELTA_DELETION_VECTOR_INVALID_FORMAT] the deletion vector file"
                    f" {path} is of format version {version.hex() or 'none'}, not"
                    f" {FILE_FORMAT_VERSION}"
                )
            stored.seek(offset)
            header = stored.read(4)
            data = stored.read(descriptor.size_in_bytes)
            trailer = stored.read(4)
    except FileNotFoundError as missing:
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_MISSING_FILE] the deletion vector file {path}"
            " that the transaction log names cannot be found"
        ) from missing
    where = f"{path} at offset {offset}"
    if len(header) < 4 or len(data) < descriptor.size_in_bytes or len(trailer) < 4:
        raise _size_mismatch(where, descriptor.size_in_bytes, max(len(data), 0))
    (size,) = struct.unpack(">I", header)
    if size != descriptor.size_in_bytes:
        raise _size_mismatch(where, descriptor.size_in_bytes, size)
    (checksum,) = struct.unpack(">I", trailer)
    if zlib.crc32(data) != checksum:
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH] the deletion vector in {where}"
            f" fails its CRC-32 check (stored {checksum:08x}, computed"
            f" {zlib.crc32(data):08x}): the file is damaged"
        )
    return _checked(decode(data, where), descriptor, where)


def decode(data: bytes, where: str) -> BitMap64:
    """A serialized vector: the magic number, then the portable 64-bit roaring bitmap."""
    if len(data) < 4 or struct.unpack("<I", data[:4])[0] != MAGIC_NUMBER:
        found = struct.unpack("<I", data[:4])[0] if len(data) >= 4 else None
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_INVALID_FORMAT] the deletion vector in {where}"
            f" starts with {found}, not Delta's magic number {MAGIC_NUMBER}"
        )
    try:
        return BitMap64.deserialize(data[4:])
    except ValueError as failure:
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_INVALID_FORMAT] the deletion vector in {where}"
            " is not a portable 64-bit roaring bitmap"
        ) from failure


def _checked(bitmap: BitMap64, descriptor: Descriptor, where: str) -> BitMap64:
    if len(bitmap) != descriptor.cardinality:
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_CARDINALITY_MISMATCH] the deletion vector in"
            f" {where} removes {len(bitmap)} rows, where the log says {descriptor.cardinality}"
        )
    return bitmap


def _size_mismatch(where: str, expected: int, found: int) -> DeletionVectorError:
    return DeletionVectorError(
        message=f"[DELTA_DELETION_VECTOR_SIZE_MISMATCH] the deletion vector in {where} holds"
        f" {found} bytes, where the log says {expected}"
    )


def positions(bitmap: BitMap64) -> np.ndarray[Any, Any]:
    """The removed positions, ascending, as 64-bit integers."""
    return np.asarray(bitmap.to_array(), dtype=np.int64)


def kept(bitmap: BitMap64, rows: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """For each of the positions ``rows`` (a few of a file's), whether the vector keeps
    it: a binary search of each in the vector's sorted positions, where a set operation
    would sort all of them (the vector of a table refreshed many times holds thousands).

    >>> kept(BitMap64([0, 2]), np.array([3, 2, 0, 1])).tolist()
    [True, False, False, True]
    """
    removed = positions(bitmap)
    if not removed.size:
        return np.ones(len(rows), dtype=bool)
    at = np.minimum(np.searchsorted(removed, rows), removed.size - 1)
    return np.asarray(removed[at] != rows)


def keep_mask(bitmap: BitMap64, num_rows: int) -> np.ndarray[Any, Any]:
    """For each of a file's ``num_rows`` rows, whether the vector keeps it.

    >>> keep_mask(BitMap64([0, 2]), 4).tolist()
    [False, True, False, True]
    """
    mask = np.ones(num_rows, dtype=bool)
    removed = positions(bitmap)
    if removed.size and int(removed[-1]) >= num_rows:
        raise DeletionVectorError(
            message=f"[DELTA_DELETION_VECTOR_INVALID_ROW_INDEX] a deletion vector removes row"
            f" {int(removed[-1])} of a file of {num_rows} rows"
        )
    mask[removed] = False
    return mask
