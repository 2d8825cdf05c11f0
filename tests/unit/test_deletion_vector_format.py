"""The deletion vector decoder (sparkshim/deletion_vectors.py) on the vectors Delta on
Spark wrote (tests/fixtures/delta-golden), against delta-rs's reading of the same
vectors, and on damaged vectors, which must fail with Delta's error and no Python
internals in the message."""

from __future__ import annotations

import json
import shutil
import struct
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyroaring import BitMap64

from sparkshim import deletion_vectors as dv
from sparkshim import delta, live_files

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "delta-golden"
TABLES = ("dv-partitioned-with-checkpoint", "dv-with-columnmapping")


def logged_vectors(location: Path) -> list[dv.Descriptor]:
    """Every vector an ``add`` or ``remove`` action of the JSON commits names."""
    found = []
    for commit in sorted((location / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            for kind in ("add", "remove"):
                vector = action.get(kind, {}).get("deletionVector")
                if vector:
                    found.append(dv.Descriptor.from_json(vector))
    return found


@pytest.mark.parametrize("name", TABLES)
def test_every_logged_vector_passes_its_checks(name: str) -> None:
    location = GOLDEN / name
    vectors = logged_vectors(location)
    assert vectors
    assert {v.file_path(location) for v in vectors} <= set(location.glob("deletion_vector_*"))
    for vector in vectors:
        assert vector.storage_type == "u"
        bitmap = dv.read_stored(location, vector)  # size, magic, checksum, cardinality
        assert len(bitmap) == vector.cardinality


@pytest.mark.parametrize("name", TABLES)
def test_the_latest_vectors_are_the_ones_delta_rs_reads(name: str) -> None:
    """The log replay (from the checkpoint at version 10) finds each file's vector, and
    it removes the rows delta-rs's own reader removes."""
    location = GOLDEN / name
    table = DeltaTable(str(location))
    theirs = pa.table(table.deletion_vectors()).to_pylist()
    ours = live_files.vectors(location, table.version())
    assert {dv.local_path(location, p) for p in ours} == {
        row["filepath"].removeprefix("file://") for row in theirs
    }
    for row in theirs:
        path = next(p for p in ours if row["filepath"].endswith(p))
        keep = dv.keep_mask(dv.read(location, ours[path]), len(row["selection_vector"]))
        assert keep.tolist() == row["selection_vector"]


@pytest.mark.parametrize("name", TABLES)
def test_every_version_replays_to_its_own_vectors(name: str) -> None:
    """Versions replayed out of order (from the checkpoint, from the JSON commits alone,
    carried forward) agree with delta-rs at each version."""
    location = GOLDEN / name
    for version in (15, 3, 10, 11, 0, 14, 9):
        table = DeltaTable(str(location), version=version)
        theirs = {
            row["filepath"].removeprefix("file://"): row["selection_vector"].count(False)
            for row in pa.table(table.deletion_vectors()).to_pylist()
        }
        ours = {
            dv.local_path(location, path): vector.cardinality
            for path, vector in live_files.vectors(location, version).items()
        }
        assert ours == theirs


@pytest.mark.parametrize("name", TABLES)
def test_every_version_replays_to_the_files_delta_rs_lists(name: str) -> None:
    """The live files the log replay finds at each version (from the checkpoint at
    version 10, or the JSON commits alone) are delta-rs's, with the same size, partition
    values and row count: a commit that marks rows carries them forward."""
    location = GOLDEN / name
    for version in (15, 3, 10, 11, 0, 14):
        table = DeltaTable(str(location), version=version)
        theirs = {
            row["path"]: (row["size_bytes"], row["num_records"], row.get("partition"))
            for row in pa.table(table.get_add_actions(flatten=False)).to_pylist()
        }
        ours = live_files.at(location, version)
        assert set(ours) == set(theirs)
        # The log names partition columns by their physical names under column mapping
        # (kept as written, to be carried forward); delta-rs by their logical names.
        logical = {
            field["metadata"].get("delta.columnMapping.physicalName", field["name"]): field["name"]
            for field in json.loads(table.schema().to_json())["fields"]
        }
        for path, file in ours.items():
            size, records, partition_values = theirs[path]
            assert file.size == size
            assert json.loads(file.stats or "{}").get("numRecords") == records
            assert {logical[k]: v for k, v in file.partition_values.items()} == {
                k: None if v is None else str(v) for k, v in (partition_values or {}).items()
            }


def test_vectors_round_trip_through_files_and_inline(tmp_path: Path) -> None:
    """Written here, read back: a file vector and an inline one, with positions past
    2**32 (a second bucket of the 64-bit bitmap)."""
    positions = BitMap64([0, 3, 4, 7, 65_536, 2**32 + 5])
    stored = dv.write_file(tmp_path, positions)
    assert stored.cardinality == 6
    assert dv.read_stored(tmp_path, stored) == positions
    inline = dv.inline(positions)
    assert inline.offset is None
    assert dv.read_inline(inline) == positions
    assert dv.Descriptor.from_json(json.loads(json.dumps(stored.to_json()))) == stored


def test_the_protocol_examples_paths() -> None:
    """PROTOCOL.md's examples 1 and 2: a relative vector with a random prefix, and an
    absolute one, name the same file."""
    relative = dv.Descriptor("u", "ab^-aqEH.-t@S}K{vb[*k^", 4, 40, 6)
    absolute = dv.Descriptor(
        "p", "file:///mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", 4, 40, 6
    )
    assert relative.file_path(Path("/mytable")) == Path(
        "/mytable/ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
    )
    assert absolute.file_path(Path("/elsewhere")) == Path(
        "/mytable/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
    )


def test_the_protocols_inline_example_is_refused() -> None:
    """PROTOCOL.md's example 3 holds another magic number (a layout Delta on Spark also
    refuses to read): an error, not a guess."""
    example = dv.Descriptor("i", "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", None, 40, 6)
    with pytest.raises(dv.DeletionVectorError, match=r"INVALID_FORMAT.*magic number"):
        dv.read_inline(example)


def damaged_copy(tmp_path: Path) -> tuple[Path, dv.Descriptor, bytearray]:
    source = GOLDEN / "dv-partitioned-with-checkpoint"
    vector = logged_vectors(source)[0]
    location = tmp_path / "t"
    location.mkdir()
    target = vector.file_path(location)
    shutil.copy(vector.file_path(source), target)
    return target, vector, bytearray(target.read_bytes())


def assert_clear(error: pytest.ExceptionInfo[dv.DeletionVectorError], *words: str) -> None:
    message = str(error.value)
    for word in words:
        assert word in message
    for internal in ("Traceback", "struct.error", "ValueError", "KeyError", "pyroaring"):
        assert internal not in message


def test_a_damaged_vector_fails_its_checksum(tmp_path: Path) -> None:
    path, vector, data = damaged_copy(tmp_path)
    data[-5] ^= 0x01  # the vector's last byte, before its checksum
    path.write_bytes(bytes(data))
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.read_stored(path.parent, vector)
    assert_clear(error, "DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH", str(path), "damaged")


def test_a_vector_of_another_size_fails(tmp_path: Path) -> None:
    path, vector, data = damaged_copy(tmp_path)
    start = vector.offset or 0
    data[start : start + 4] = struct.pack(">I", vector.size_in_bytes + 1)
    path.write_bytes(bytes(data))
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.read_stored(path.parent, vector)
    assert_clear(error, "DELTA_DELETION_VECTOR_SIZE_MISMATCH")
    path.write_bytes(bytes(data[:10]))  # cut short
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.read_stored(path.parent, vector)
    assert_clear(error, "DELTA_DELETION_VECTOR_SIZE_MISMATCH")


def test_a_vector_of_another_cardinality_fails(tmp_path: Path) -> None:
    path, vector, _ = damaged_copy(tmp_path)
    claimed = dv.Descriptor(
        vector.storage_type,
        vector.path_or_inline_dv,
        vector.offset,
        vector.size_in_bytes,
        vector.cardinality + 1,
    )
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.read_stored(path.parent, claimed)
    assert_clear(error, "DELTA_DELETION_VECTOR_CARDINALITY_MISMATCH", str(vector.cardinality))


def test_a_vector_in_another_format_fails(tmp_path: Path) -> None:
    """A wrong magic number with a checksum that matches, and a bitmap that is no
    portable roaring bitmap: each named, neither read as positions."""
    location = tmp_path / "t"
    location.mkdir()
    for data in (
        struct.pack("<I", dv.MAGIC_NUMBER - 1) + BitMap64([1]).serialize(),
        struct.pack("<I", dv.MAGIC_NUMBER) + b"\x01\x02\x03",
    ):
        descriptor = dv.inline(BitMap64([1]))
        padded = data + bytes(-len(data) % 4)
        bad = dv.Descriptor("i", dv.z85_encode(padded), None, len(data), 1)
        with pytest.raises(dv.DeletionVectorError) as error:
            dv.read_inline(bad)
        assert_clear(error, "DELTA_DELETION_VECTOR_INVALID_FORMAT")
        assert descriptor.cardinality == 1


def test_a_missing_vector_file_and_bad_text_fail(tmp_path: Path) -> None:
    _, vector, _ = damaged_copy(tmp_path)
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.read_stored(tmp_path, vector)
    assert_clear(error, "DELTA_DELETION_VECTOR_MISSING_FILE")
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.read_inline(dv.Descriptor("i", "abc~~", None, 4, 1))
    assert_clear(error, "DELTA_DELETION_VECTOR_INVALID_ENCODING", "'~'")


def test_a_vector_past_the_files_rows_is_refused() -> None:
    with pytest.raises(dv.DeletionVectorError) as error:
        dv.keep_mask(BitMap64([1, 5]), 3)
    assert_clear(error, "DELTA_DELETION_VECTOR_INVALID_ROW_INDEX")


@pytest.mark.parametrize("form", ["json", "parquet"])
def test_a_v2_checkpoint_with_a_sidecar_gives_the_files(tmp_path: Path, form: str) -> None:
    """The golden table's checkpoint turned into a V2 one (its files in a sidecar), and
    the commits before it gone: the replay finds the same vectors from it."""
    location = Path(shutil.copytree(GOLDEN / "dv-partitioned-with-checkpoint", tmp_path / "t"))
    expected = live_files.vectors(GOLDEN / "dv-partitioned-with-checkpoint", 15)
    folder = location / "_delta_log"
    classic = folder / "00000000000000000010.checkpoint.parquet"
    (folder / "_sidecars").mkdir()
    sidecar = "0a1b2c3d-0000-4000-8000-000000000000.parquet"
    adds = pq.read_table(classic, columns=["add"])
    pq.write_table(adds.filter(adds.column("add").is_valid()), folder / "_sidecars" / sidecar)
    name = f"00000000000000000010.checkpoint.{uuid.uuid4()}.{form}"
    actions = [
        {"checkpointMetadata": {"version": 10}},
        {"sidecar": {"path": sidecar, "sizeInBytes": 1, "modificationTime": 1}},
    ]
    if form == "json":
        (folder / name).write_text("".join(json.dumps(a) + "\n" for a in actions))
    else:
        sidecars = pa.array([None, actions[1]["sidecar"]])
        pq.write_table(pa.table({"sidecar": sidecars}), folder / name)
    classic.unlink()
    for version in range(10):
        (folder / f"{version:020d}.json").unlink()
    assert live_files.vectors(location, 15) == expected


@pytest.mark.parametrize("name", TABLES)
def test_the_latest_scan_from_the_log_is_the_one_from_delta_rs(name: str) -> None:
    """A statement reads a table's latest snapshot through sparkshim's own log replay
    (``latest_file_scan``): the same files, removed positions, physical column names and
    typed partition values as the scan built from delta-rs's table."""
    location = GOLDEN / name
    ours = delta.latest_file_scan(location)
    theirs = delta.file_scan(delta.open_table(location))
    assert ours is not None
    assert theirs is not None
    assert ours.schema == theirs.schema
    assert sorted(ours.files) == sorted(theirs.files)
    assert ours.deleted.keys() == theirs.deleted.keys()
    for path, positions in ours.deleted.items():
        assert positions.tolist() == theirs.deleted[path].tolist()
    assert ours.physical == theirs.physical
    if theirs.partitions is None:
        assert ours.partitions is None
    else:
        assert ours.partitions is not None
        by_path = delta.PATH_COLUMN
        assert ours.partitions.sort_by(by_path).equals(theirs.partitions.sort_by(by_path))


def test_no_latest_scan_from_the_log_where_files_hold_their_rows(tmp_path: Path) -> None:
    """A table without deletion vectors or column mapping is read from its files as
    stored: no scan of its own."""
    location = tmp_path / "plain"
    write_deltalake(str(location), pa.table({"id": [1, 2, 3]}))
    assert delta.latest_file_scan(location) is None
