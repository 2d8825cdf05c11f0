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
``WindowChange`` is None). One statement computes all of this (the netted rows, which are
in place, the table rows they match), counted by the same job. When every changed row is
in place, the table's old rows are replaced one for one by a MERGE; otherwise the in-place
rows' change and the moved partitions' recompute are netted and merged by the row rules
(``incremental._apply_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from dyntables.planner.structure import KEY, RankingWindows, key_probe
from dyntables.refresh.changes import (
    NET,
    SIGN,
    ChangeDeriver,
    Recompute,
    aliased,
    netted,
    null_safe_equal,
    quoted_columns,
    rows_of_keys,
    union_all,
    with_columns,
)

PAIRED = "__dt_paired"  # its position lost one row and gained one
IN_PLACE = "__dt_in_place"  # paired, in a partition where every position is
MATCHES = "__dt_matches"  # table rows matching an in-place old row
WAS = "__dt_was{}"  # the table's columns (by position) of the row an old row matches


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
    reading the block's old window values from ``table`` (its columns ``names``): only the
    rows the old rows name (a semi join) where the engine finds rows ``by_index``, else by
    joining the whole table (one statement less: where a semi join reads the table
    anyway, computing the change once for it costs a statement)."""

    def __init__(
        self, deriver: ChangeDeriver, table: exp.Table, names: list[str], by_index: bool
    ) -> None:
        self.deriver = deriver
        self.table = table
        self.names = names
        self.by_index = by_index

    def change(self, select: exp.Select, windows: RankingWindows) -> WindowChange | None:
        """The block's change; None when some in-place row is ambiguous in the table (or
        a partition moved and the windows share no PARTITION BY column to recompute it
        by): then nothing was written and the caller recomputes the touched keys."""
        window_names = [self.names[i] for i in windows.window_outputs]
        outputs = [n for n in self.names if n not in window_names]
        keys = [KEY.format(i) for i in range(len(windows.positions))]
        partition = keys[: windows.partition_count]
        delta = self.deriver.change(_input_rows(select, windows, self.names))
        if delta is None:
            return WindowChange()
        # One statement: the netted input rows, which of them are in place, and the table
        # row each in-place old row matches (with how many it matches).
        positioned = _positioned(delta, [*outputs, *keys], keys, partition)
        ambiguous = exp.NEQ(this=exp.column(MATCHES), expression=_number(1))
        changed, (rows, moved, old_rows, unmatched) = self.deriver.summarized(
            self._with_table_rows(positioned, outputs, keys),
            [
                exp.func("count", exp.Star()),
                exp.func("count_if", exp.Not(this=exp.column(IN_PLACE))),
                exp.func("count_if", _in_place(old=True)),
                exp.func("count_if", exp.and_(_in_place(old=True), ambiguous)),
            ],
        )
        if not rows:
            return WindowChange()
        if unmatched or (moved and not partition):
            return None
        kept = self._kept_values(changed, outputs, keys, int(old_rows))
        if not moved:
            return WindowChange(replaced=kept)
        touched = self.deriver.materialize(
            exp.select(*quoted_columns(partition))
            .from_(aliased(changed, "c"))
            .where(exp.Not(this=exp.column(IN_PLACE)))
            .distinct()
        )
        recompute = Recompute(touched, block_keys=windows.positions[: len(partition)])
        terms: list[exp.Query] = [
            self.deriver.recomputed(select, recompute, "new", sign=1),
            self.deriver.recomputed(select, recompute, "old", sign=-1),
        ]
        if old_rows:
            terms += [_signed(kept.removed, -1), _signed(kept.added, 1)]
        return WindowChange(union_all(terms))

    def _with_table_rows(
        self, positioned: exp.Query, outputs: list[str], keys: list[str]
    ) -> exp.Query:
        """``positioned`` with, on each in-place old row, the table's columns of the row it
        matches by its columns other than the windows' (``WAS…``, by position among the
        table's columns; a second match doubles the row) and how many it matches."""
        present = "__dt_present"
        held: exp.Expr = self.table.copy()
        if self.by_index and outputs:  # (no outputs: every table row matches)
            # Computed once, as it is read twice: for the rows to look up, and below.
            positioned = self.deriver.materialize(positioned)
            old_rows = (
                exp.select(*quoted_columns(outputs))
                .from_(aliased(positioned, "c"))
                .where(_in_place(old=True))
            )
            held = aliased(rows_of_keys(self.table, self.names, old_rows, outputs), "h")
        table_rows = exp.select(
            *[
                exp.alias_(exp.column(n, quoted=True), WAS.format(i), quoted=True)
                for i, n in enumerate(self.names)
            ],
            exp.alias_(exp.true(), present),
        ).from_(held)
        matches_old_row = exp.and_(
            _in_place(old=True, table="c"),
            *[
                exp.NullSafeEQ(
                    this=exp.column(n, table="c", quoted=True),
                    expression=exp.column(WAS.format(self.names.index(n)), table="t", quoted=True),
                )
                for n in outputs
            ],
        )
        match_count = exp.Window(
            this=exp.func("count", exp.column(present, table="t")),
            partition_by=[*quoted_columns(keys, "c"), exp.column(NET, table="c")],
        )
        return (
            exp.select(
                "c.*",
                *[
                    exp.column(WAS.format(i), table="t", quoted=True)
                    for i in range(len(self.names))
                ],
                exp.alias_(match_count, MATCHES),
            )
            .from_(aliased(positioned, "c"))
            .join(aliased(table_rows, "t"), on=matches_old_row, join_type="left")
        )

    def _kept_values(
        self, changed: exp.Query, outputs: list[str], keys: list[str], rows: int
    ) -> Replaced:
        """The in-place positions' change: each old row as the table holds it (with its
        window values) replaced by the new row with those window values."""
        removed = (
            exp.select(
                *[
                    exp.alias_(exp.column(WAS.format(i), quoted=True), n, quoted=True)
                    for i, n in enumerate(self.names)
                ]
            )
            .from_(aliased(changed, "c"))
            .where(_in_place(old=True))
        )
        added = (
            exp.select(
                *[
                    exp.alias_(
                        exp.column(n, table="n", quoted=True)
                        if n in outputs
                        else exp.column(WAS.format(i), table="o", quoted=True),
                        n,
                        quoted=True,
                    )
                    for i, n in enumerate(self.names)
                ]
            )
            .from_(aliased(changed, "n"))
            .join(
                aliased(changed, "o"),
                on=exp.and_(null_safe_equal(keys, "n", "o"), _in_place(old=True, table="o")),
            )
            .where(_in_place(old=False, table="n"))
        )
        return Replaced(removed, added, rows)


def _number(value: int) -> exp.Expr:
    return exp.Literal.number(value)


def _in_place(*, old: bool, table: str | None = None) -> exp.Expr:
    """True on an in-place position's old row (``old``) or new row, of ``table``."""
    side = exp.LT if old else exp.GT
    return exp.and_(
        exp.column(IN_PLACE, table=table),
        side(this=exp.column(NET, table=table), expression=_number(0)),
    )


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


def _positioned(
    delta: exp.Query, columns: list[str], keys: list[str], partition: list[str]
) -> exp.Query:
    """Each distinct changed input row (``columns``: the outputs and positions, named by
    position) with its net copies (``NET``, nonzero) and whether it is in place
    (``IN_PLACE``): its position lost one row and gained one, and no position of its
    partition (``partition``: the shared PARTITION BY keys; none: the whole block) moved."""
    net = netted(with_columns(delta, columns), columns)
    by_position = quoted_columns(keys)
    position_net = exp.Window(this=exp.func("sum", exp.column(NET)), partition_by=by_position)
    position_rows = exp.Window(
        this=exp.func("count", exp.Star()), partition_by=[k.copy() for k in by_position]
    )
    paired = exp.select(
        "*",
        exp.alias_(
            exp.and_(
                exp.EQ(this=position_rows, expression=_number(2)),
                exp.EQ(this=position_net, expression=_number(0)),
                exp.In(this=exp.column(NET), expressions=[_number(-1), _number(1)]),
            ),
            PAIRED,
        ),
    ).from_(aliased(net, "n"))
    moved_here = exp.Window(
        this=exp.func(
            "max",
            exp.Case(ifs=[exp.If(this=exp.column(PAIRED), true=_number(0))], default=_number(1)),
        ),
        partition_by=quoted_columns(partition),
    )
    return exp.select(
        *quoted_columns(columns),
        exp.column(NET),
        exp.alias_(exp.EQ(this=moved_here, expression=_number(0)), IN_PLACE),
    ).from_(aliased(paired, "p"))
