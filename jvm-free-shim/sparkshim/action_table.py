"""The columns of a row-level statement's action table (see dml.py): one row per distinct
target row value that changes, or per row to insert."""

from __future__ import annotations

KIND = "__kind"  # 'change' (a target row value) or 'insert'
ACTION = "__action"  # of a change: 'delete' or 'update'
NEW = "__new_"  # the prefix of each column's new value (an update's, an insert's)
