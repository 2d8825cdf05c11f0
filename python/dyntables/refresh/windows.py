"""Ranking windows updated in place: a change that keeps every row where it ranks.

A block whose windows all rank rows (``row_number``, ``rank``, ``dense_rank``,
``percent_rank``, ``cume_dist``, ``ntile``; see ``planner.structure.RankingWindows``) gives
a row a value that depends only on the row's PARTITION BY and ORDER BY values (its
*position*) among those of its partition. An update that changes other columns (an
order's amount, in a row number per customer by order id) deletes a row and inserts
another at the same position: no row's window value changes, and the updated row keeps
the value its old version had. Its change is then the old row (read from the table, with
its window values) deleted and the new row inserted with those values: what changed, not
every row of the partition.

Per refresh, over the block's netted input change (one row per distinct changed row):

* a position that lost exactly one row and gained exactly one is *in place*;
* any other position (an insert, a delete, duplicates) makes its partition *moved*: the
  partitions (the PARTITION BY columns all windows share) holding one are recomputed at the
  sources' new and old versions, as a keyed block is (``ChangeDeriver.recomputed``), and
  their in-place positions go with them.

The old rows of the in-place positions are found in the table by their columns other than
the windows'; each must match exactly one row there (else a duplicate leaves it ambiguous
which row was updated, and the refresh recomputes the touched partitions instead:
``WindowChange`` is None). The change this returns is netted and merged by the row rules
(``incremental._apply_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dyntables.planner.structure import KEY, RankingWindows, key_probe
from dyntables.refresh.changes import (
    SIGN,
    ChangeDeriver,
    Recompute,
    aliased,
    null_safe_equal,
    quoted_columns,
    touched_by,
    union_all,
)

NET = "__dt_net"  # a changed input row's net number of copies
MATCHES = "__dt_matches"  # table rows matching an in-place position's old row
# A position's net change and its number of distinct changed rows.
POSITION_NET = "__dt_position_net"
POSITION_ROWS = "__dt_position_rows"


@dataclass(frozen=True)
class Replaced:
    """Table rows replaced one for one: ``removed`` (each a value the table holds exactly
    once) by ``added``, ``rows`` of each."""

    removed: exp.Query
    added: exp.Query
    rows: int


@dataclass(frozen=True)
class WindowChange:
    """The block's change: ``replaced`` where every changed row stayed in place (merged as
    it is, nothing to net), else the signed change of its output (its columns by position
    and ``SIGN``), netted and merged by the row rules; both None: no change."""

    query: exp.Query | None = None
    replaced: Replaced | None = None


class RanksKept:
    """Derives a ranking-window block's change with updates in place (module docstring),
    reading the block's old window values from ``table`` (its columns ``names``)."""

    def __init__(self, deriver: ChangeDeriver, table: exp.Table, names: list[str]) -> None:
        self.deriver = deriver
        self.table = table
        self.names = names

    def change(self, select: exp.Select, windows: RankingWindows) -> WindowChange | None:
        """The block's change; None when some in-place row is ambiguous in the table (or
        a partition moved and the windows share no PARTITION BY column to recompute it
        by): then nothing was written and the caller recomputes the touched keys."""
        window_names = [self.names[i] for i in windows.window_outputs]
        outputs = [n for n in self.names if n not in window_names]
        keys = [KEY.format(i) for i in range(len(windows.positions))]
        delta = self.deriver.change(_input_rows(select, windows, self.names))
        if delta is None:
            return WindowChange()
        paired = exp.and_(
            exp.EQ(this=exp.column(POSITION_ROWS), expression=exp.Literal.number(2)),
            exp.EQ(this=exp.column(POSITION_NET), expression=exp.Literal.number(0)),
            exp.In(
                this=exp.column(NET), expressions=[exp.Literal.number(-1), exp.Literal.number(1)]
            ),
        )
        changed, (rows, moved) = self.deriver.summarized(
            _positioned(delta, [*outputs, *keys], keys),
            [exp.func("count", exp.Star()), exp.func("count_if", exp.not_(paired.copy()))],
        )
        if not rows:
            return WindowChange()
        partition = keys[: windows.partition_count]
        terms: list[exp.Query] = []
        in_place = exp.select("*").from_(aliased(changed, "c")).where(paired.copy())
        if moved:
            if not partition:
                return None
            touched = self.deriver.materialize(
                exp.select(*quoted_columns(partition))
                .from_(aliased(changed, "c"))
                .where(exp.not_(paired.copy()))
                .distinct()
            )
            recompute = Recompute(touched, block_keys=windows.positions[: len(partition)])
            terms += [
                self.deriver.recomputed(select, recompute, "new", sign=1),
                self.deriver.recomputed(select, recompute, "old", sign=-1),
            ]
            in_place = in_place.where(
                exp.Not(this=touched_by(quoted_columns(partition, "c"), touched)), copy=False
            )
        if moved < rows:
            kept = self._kept_values(in_place, outputs, keys)
            if kept is None:
                return None
            if not terms:
                return WindowChange(replaced=kept)
            terms += [_signed(kept.removed, -1), _signed(kept.added, 1)]
        return WindowChange(union_all(terms) if terms else None)

    def _kept_values(
        self, in_place: exp.Query, outputs: list[str], keys: list[str]
    ) -> Replaced | None:
        """The in-place positions' change: each old row as the table holds it (with its
        window values) replaced by the new row with those window values; None if some old
        row does not match exactly one table row."""
        old_rows = (
            exp.select("*")
            .from_(aliased(in_place, "p"))
            .where(exp.LT(this=exp.column(NET), expression=exp.Literal.number(0)))
        )
        present = "__dt_present"
        table_rows = exp.select("*", exp.alias_(exp.true(), present)).from_(self.table.copy())
        match_count = exp.Window(
            this=exp.func("count", exp.column(present, table="t")),
            partition_by=quoted_columns(keys, "o"),
        )
        found, (found_rows, unmatched) = self.deriver.summarized(
            exp.select(
                *quoted_columns(keys, "o"),
                *quoted_columns(self.names, "t"),
                exp.alias_(match_count, MATCHES),
            )
            .from_(aliased(old_rows, "o"))
            .join(
                aliased(table_rows, "t"), on=null_safe_equal(outputs, "o", "t"), join_type="left"
            ),
            [
                exp.func("count", exp.Star()),
                exp.func(
                    "count_if", exp.NEQ(this=exp.column(MATCHES), expression=exp.Literal.number(1))
                ),
            ],
        )
        if unmatched:
            return None
        removed = exp.select(*quoted_columns(self.names)).from_(aliased(found, "f"))
        new_rows = (
            exp.select("*")
            .from_(aliased(in_place, "p"))
            .where(exp.GT(this=exp.column(NET), expression=exp.Literal.number(0)))
        )
        added = (
            exp.select(
                *[
                    exp.column(n, table="n" if n in outputs else "f", quoted=True)
                    for n in self.names
                ]
            )
            .from_(aliased(new_rows, "n"))
            .join(aliased(found, "f"), on=null_safe_equal(keys, "n", "f"))
        )
        return Replaced(removed, added, int(found_rows))


def _signed(rows: exp.Query, sign: int) -> exp.Query:
    """``rows`` with ``SIGN`` ``sign``."""
    return exp.select("*", exp.alias_(exp.Literal.number(sign), SIGN)).from_(aliased(rows, "s"))


def _input_rows(select: exp.Select, windows: RankingWindows, names: list[str]) -> exp.Select:
    """The block's input rows with its output columns other than the windows (by name)
    and every window position (``__dt_key…``): a linear block (no window left)."""
    rows = key_probe(select, windows.positions)
    plain = [
        exp.alias_(
            (projection.this if isinstance(projection, exp.Alias) else projection).copy(),
            names[index],
            quoted=True,
        )
        for index, projection in enumerate(select.expressions)
        if index not in windows.window_outputs
    ]
    rows.set("expressions", [*plain, *rows.expressions])
    return rows


def _positioned(delta: exp.Query, columns: list[str], keys: list[str]) -> exp.Query:
    """Each distinct changed input row (``columns``: the outputs and positions, named by
    position) with its net copies (``NET``, nonzero), and its position's net change and
    number of distinct changed rows."""
    renamed = exp.Subquery(
        this=delta,
        alias=exp.TableAlias(
            this=exp.to_identifier("d"),
            columns=[exp.to_identifier(n, quoted=True) for n in [*columns, SIGN]],
        ),
    )
    net_sum = exp.func("sum", exp.column(SIGN))
    net = (
        exp.select(*quoted_columns(columns), exp.alias_(net_sum, NET))
        .from_(renamed)
        .group_by(*quoted_columns(columns))
        .having(exp.NEQ(this=net_sum.copy(), expression=exp.Literal.number(0)))
    )
    by_position = quoted_columns(keys)
    return exp.select(
        "*",
        exp.alias_(
            exp.Window(this=exp.func("sum", exp.column(NET)), partition_by=by_position),
            POSITION_NET,
        ),
        exp.alias_(
            exp.Window(
                this=exp.func("count", exp.Star()), partition_by=[k.copy() for k in by_position]
            ),
            POSITION_ROWS,
        ),
    ).from_(aliased(net, "n"))
