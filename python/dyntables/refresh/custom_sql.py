"""Custom incrementalization (seed 003): what a ``REFRESH USING ( MERGE | INSERT INTO SELF
… )`` statement means at a refresh. The user's statement says how changes reach the table;
the refresh (``refresh/custom.py``) binds it to the refresh's boundaries with the functions
here and runs it as one commit together with the watermark. (Its checks at CREATE are
``dyntables.ddl.custom``.)

At a refresh (``CustomRefresh``) every table reference of the statement is replaced:

* ``<source> CHANGES(…)`` by the source's changes since the last refresh (``ChangeReader``):
  its columns, ``METADATA$ACTION`` and ``METADATA$ISUPDATE``;
* ``SELF`` in a FROM by the table at the version the refresh read; the write target by
  the table;
* every other table by itself at the version pinned for this refresh (a dimension table
  is read at the refresh's snapshot, not incrementally).

The first refresh runs the statement against an empty SELF, with each source's rows as
INSERTs (or its changes since ``START AT``), and overwrites the table with the result; a
``BACKFILL FROM`` table replaces that run. Later refreshes append (INSERT) or MERGE, and
the commit carries the watermark: the source versions whose changes it consumed. A failing
statement commits nothing, so the next refresh reads the same changes again.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlglot import exp

from dyntables.catalog import PREFIX, Definition, key_to_table, table_key
from dyntables.engine import Engine
from dyntables.errors import CannotRefreshIncrementallyError, DynamicTableError, first_line
from dyntables.formats import ACTION, IS_UPDATE, Commit
from dyntables.refresh.changes import (
    SIGN,
    ChangeDeriver,
    aliased,
    null_safe_equal,
    quoted_columns,
    union_all,
)
from dyntables.sql.dialect import parse_one

SELF = "SELF"
APPEND_ONLY = "APPEND_ONLY"
DEFAULT = "DEFAULT"
# Where a source's RELY primary key is recorded (``ALTER TABLE … ADD CONSTRAINT … RELY``).
PRIMARY_KEY_PROPERTY = PREFIX + "primary_key"
# The definition's record of where START AT put each CHANGES source (resolved at CREATE).
START_VERSIONS = "start_versions"
NET = "__dt_net"
HAD = "__dt_had"  # the key had rows before the changes
HAS = "__dt_has"  # the key has rows after them


# ---- the statement ----


def is_self(reference: exp.Table) -> bool:
    """Whether a table reference is the keyword SELF (the dynamic table being defined)."""
    return not reference.db and reference.name.upper() == SELF


def target_of(tree: exp.Expr) -> exp.Table:
    """The table an INSERT or MERGE writes."""
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    assert isinstance(target, exp.Table)
    return target


def references(tree: exp.Expr) -> list[exp.Table]:
    """Every table the statement reads (not its write target, not CTE names)."""
    target = target_of(tree)
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    return [
        reference
        for reference in tree.find_all(exp.Table)
        if reference is not target
        and reference.name
        and not (not reference.db and reference.name.lower() in cte_names)
    ]


def information(reference: exp.Table) -> str | None:
    """``DEFAULT`` or ``APPEND_ONLY`` for a ``CHANGES`` reference, None for a plain one."""
    changes = reference.args.get("changes")
    if changes is None:
        return None
    mode = changes.args.get("information")
    return (mode.name if mode is not None else DEFAULT).upper()


def change_sources(statement: str) -> dict[str, set[str]]:
    """Each source the stored statement reads with ``CHANGES``, with its modes."""
    tree = parse_one(statement)
    found: dict[str, set[str]] = {}
    for reference in references(tree):
        mode = information(reference)
        if mode is not None and not is_self(reference):
            found.setdefault(table_key(reference), set()).add(mode)
    return found


def empty_self(columns: tuple[tuple[str, str], ...]) -> exp.Query:
    """No rows, the table's columns: SELF before the first refresh."""
    return exp.select(
        *[
            exp.alias_(exp.cast(exp.null(), exp.DataType.build(t, dialect="spark")), n, quoted=True)
            for n, t in columns
        ]
    ).where(exp.false())


def bind(tree: exp.Expr, relation: Callable[[exp.Table], exp.Expr]) -> exp.Expr:
    """A copy of the statement with every table it reads replaced by ``relation``'s."""
    bound = tree.copy()
    for reference in references(bound):
        reference.replace(relation(reference))
    return bound


def insert_rows(insert: exp.Insert, columns: tuple[tuple[str, str], ...]) -> exp.Query:
    """The rows an INSERT INTO SELF adds, as the table's columns in order (a column the
    INSERT does not list is NULL)."""
    query = insert.expression
    assert isinstance(query, exp.Query)
    names = [name for name, _ in columns]
    listed = (
        [identifier.name for identifier in insert.this.expressions]
        if isinstance(insert.this, exp.Schema)
        else names
    )
    known = {name.lower(): name for name in names}
    unknown = [name for name in listed if name.lower() not in known]
    if unknown:
        raise DynamicTableError(
            f"INSERT INTO SELF names {unknown[0]}, which is not a column of the table"
        )
    width = len(query.selects) if not any(p.is_star for p in query.selects) else None
    if width is not None and width != len(listed):
        raise DynamicTableError(
            f"INSERT INTO SELF writes {width} columns, the table has {len(listed)}"
            f" ({', '.join(listed)}): select one value per column"
        )
    positions = {known[name.lower()]: index for index, name in enumerate(listed)}
    inner = [f"__dt_c{index}" for index in range(len(listed))]
    renamed = exp.Subquery(
        this=query.copy(),
        alias=exp.TableAlias(
            this=exp.to_identifier("i"), columns=[exp.to_identifier(n) for n in inner]
        ),
    )
    return exp.select(
        *[
            exp.alias_(
                _cast(
                    exp.column(inner[positions[name]], table="i")
                    if name in positions
                    else exp.null(),
                    type_sql,
                ),
                name,
                quoted=True,
            )
            for name, type_sql in columns
        ]
    ).from_(renamed)


def _cast(value: exp.Expr, type_sql: str) -> exp.Expr:
    return exp.cast(value, exp.DataType.build(type_sql, dialect="spark"))


def first_rows(statement: exp.Expr, columns: tuple[tuple[str, str], ...]) -> exp.Query:
    """The rows the statement leaves in an empty SELF: an INSERT's rows; for a MERGE,
    each source row through its first WHEN NOT MATCHED clause whose condition holds (no
    target row can match, so no other clause runs)."""
    if isinstance(statement, exp.Insert):
        return insert_rows(statement, columns)
    assert isinstance(statement, exp.Merge)
    source = statement.args["using"]
    alias = source.alias_or_name
    parts: list[exp.Query] = []
    earlier: list[exp.Expr] = []
    for when in statement.args["whens"].expressions:
        if when.args.get("matched") or when.args.get("source"):
            continue
        condition = when.args.get("condition")
        holds: list[exp.Expr] = [exp.Not(this=_true(c)) for c in earlier]
        if condition is not None:
            holds.append(_true(condition))
        values = _inserted_values(when.args["then"], alias, columns)
        part = exp.select(*values).from_(source.copy())
        parts.append(part.where(exp.and_(*holds)) if holds else part)
        if condition is None:
            break
        earlier.append(condition)
    return union_all(parts) if parts else empty_self(columns)


def _true(condition: exp.Expr) -> exp.Expr:
    """Whether a condition holds (NULL does not)."""
    return exp.func("coalesce", exp.paren(condition.copy()), exp.false())


def _inserted_values(
    insert: exp.Expr, alias: str, columns: tuple[tuple[str, str], ...]
) -> list[exp.Expr]:
    """A WHEN NOT MATCHED clause's INSERT as the table's columns in order."""
    assert isinstance(insert, exp.Insert)
    names = {name.lower(): name for name, _ in columns}
    if isinstance(insert.this, exp.Star):  # INSERT *: the source's columns of those names
        given = {name.lower(): exp.column(name, table=alias, quoted=True) for name, _ in columns}
    else:
        targets = [column.name for column in insert.this.expressions]
        unknown = [name for name in targets if name.lower() not in names]
        if unknown:
            raise DynamicTableError(
                f"the MERGE inserts into {unknown[0]}, which is not a column of the table"
            )
        given = {
            name.lower(): value.copy()
            for name, value in zip(targets, insert.expression.expressions, strict=True)
        }
    return [
        exp.alias_(_cast(given.get(name.lower(), exp.null()), type_sql), name, quoted=True)
        for name, type_sql in columns
    ]


def merge_probe(merge: exp.Merge, columns: tuple[tuple[str, str], ...]) -> exp.Query:
    """A query that resolves the MERGE's ON, conditions and UPDATE values against an
    empty SELF (and checks that UPDATE SET names the table's columns)."""
    names = {name.lower() for name, _ in columns}
    target_alias = merge.this.alias_or_name
    checked: list[exp.Expr] = [merge.args["on"].copy()]
    for when in merge.args["whens"].expressions:
        if when.args.get("condition") is not None:
            checked.append(when.args["condition"].copy())
        then = when.args.get("then")
        if isinstance(then, exp.Update):
            for assignment in then.expressions:
                if assignment.this.name.lower() not in names:
                    raise DynamicTableError(
                        f"the MERGE updates {assignment.this.name}, which is not a column of"
                        " the table"
                    )
                checked.append(assignment.expression.copy())
    target = aliased(empty_self(columns), target_alias)
    return (
        exp.select(*[exp.alias_(e, f"__dt_p{i}") for i, e in enumerate(checked)])
        .from_(target)
        .join(merge.args["using"].copy(), join_type="cross")
        .limit(0)
    )


# ---- the changes of a source ----


def source_key(engine: Engine, key: str, columns: list[str]) -> list[str]:
    """A source's key: its RELY primary key (``dynamic_table.primary_key``), else the key
    its format declares (Iceberg identifier fields); empty when it has none."""
    fmt = engine.table_format
    table = key_to_table(key)
    recorded = fmt.properties(engine.refresh_session, table).get(PRIMARY_KEY_PROPERTY) or "[]"
    key_columns = [str(c) for c in json.loads(recorded)]
    if not key_columns:
        declared = fmt.keys(engine.refresh_session, table)
        key_columns = declared[0] if declared else []
    known = {name.lower(): name for name in columns}
    return [known.get(c.lower(), c) for c in key_columns]


class ChangeReader:
    """``<source> CHANGES(…)`` of one refresh: each source's changes from ``versions.old``
    (None: the source's rows at ``versions.new`` as INSERTs) to ``versions.new``, read once
    per source and information mode.

    Without a key a change is what the change feed recorded (``TableFormat.typed_changes``):
    a row deleted and inserted again is two rows. With a key (``source_key``) the changes
    are netted per key: a key's rows before and after are compared, and a key whose rows
    did not change shows nothing; a key with rows before and after is an update
    (``METADATA$ISUPDATE``). APPEND_ONLY keeps the INSERTs that are not updates.
    """

    def __init__(
        self,
        engine: Engine,
        deriver: ChangeDeriver,
        columns: dict[str, list[str]],
        keys: dict[str, list[str]],
    ) -> None:
        self.engine = engine
        self.deriver = deriver
        self.columns = columns
        self.keys = keys
        self._read: dict[tuple[str, str], exp.Query] = {}

    def changes(self, key: str, mode: str) -> exp.Query:
        if (key, mode) not in self._read:
            self._read[(key, mode)] = self._changes(key, mode)
        return self._read[(key, mode)].copy()

    def _changes(self, key: str, mode: str) -> exp.Query:
        versions = self.deriver.versions
        old, new = versions.old.get(key), versions.new.get(key)
        source = key_to_table(key)
        columns = self.columns[key]
        if new is None:  # no version yet: no rows
            return self._typed(exp.select("*").from_(source).where(exp.false()), columns, "INSERT")
        pinned = self.engine.table_format.pinned(source, new)
        if old is None:  # the first refresh: the rows as they are, as INSERTs
            return self._typed(exp.select("*").from_(pinned), columns, "INSERT")
        if old == new:
            return self._typed(exp.select("*").from_(pinned).where(exp.false()), columns, "INSERT")
        try:
            if self.keys.get(key):
                return self._netted(key, mode == APPEND_ONLY)
            feed = self.engine.table_format.typed_changes(
                self.deriver.session, source, columns, old, new, mode == APPEND_ONLY
            )
            return self.deriver.materialize(feed)
        except CannotRefreshIncrementallyError as failure:
            raise expired(key, old, str(failure)) from failure
        except DynamicTableError:
            raise
        except Exception as failure:
            raise expired(key, old, first_line(failure)) from failure

    @staticmethod
    def _typed(rows: exp.Query, columns: list[str], action: str) -> exp.Query:
        return exp.select(
            *[exp.column(name, table="r", quoted=True) for name in columns],
            exp.alias_(exp.Literal.string(action), ACTION, quoted=True),
            exp.alias_(exp.false(), IS_UPDATE, quoted=True),
        ).from_(aliased(rows, "r"))

    def _netted(self, key: str, append_only: bool) -> exp.Query:
        """The key's rows before and after, compared value by value; every copy of a value
        that changed in number, with whether its key is updated (rows before and after)."""
        columns = self.columns[key]
        key_columns = self.keys[key]
        feed = self.deriver.table_change(key_to_table(key))
        assert feed is not None  # the versions differ
        touched = self.deriver.materialize(
            exp.select(*quoted_columns(key_columns)).from_(aliased(feed, "f")).distinct()
        )

        def rows(side: str, sign: int) -> exp.Query:
            pinned = self.deriver.at(key_to_table(key), side)
            assert isinstance(pinned, exp.Table)
            pinned.set("alias", exp.TableAlias(this=exp.to_identifier("s")))
            return (
                exp.select(
                    *quoted_columns(columns, "s"), exp.alias_(exp.Literal.number(sign), SIGN)
                )
                .from_(pinned)
                .join(
                    aliased(touched, "k"),
                    on=null_safe_equal(key_columns, "s", "k"),
                    join_type="semi",
                )
            )

        both = union_all([rows("old", -1), rows("new", 1)])
        total = exp.func("sum", exp.column(SIGN))
        netted = (
            exp.select(*quoted_columns(columns), exp.alias_(total, NET))
            .from_(aliased(both, "b"))
            .group_by(*quoted_columns(columns))
            .having(exp.NEQ(this=total.copy(), expression=exp.Literal.number(0)))
        )
        net = exp.column(NET, table="n")
        per_key = (
            exp.select(
                *quoted_columns(key_columns),
                exp.alias_(
                    exp.func("max", exp.LT(this=exp.column(NET), expression=exp.Literal.number(0))),
                    HAD,
                ),
                exp.alias_(
                    exp.func("max", exp.GT(this=exp.column(NET), expression=exp.Literal.number(0))),
                    HAS,
                ),
            )
            .from_(aliased(netted, "n"))
            .group_by(*quoted_columns(key_columns))
        )
        inserted = exp.GT(this=net.copy(), expression=exp.Literal.number(0))
        labelled = (
            exp.select(
                *quoted_columns(columns, "n"),
                exp.alias_(exp.func("abs", net.copy()), NET),
                exp.alias_(
                    exp.Case(
                        ifs=[exp.If(this=inserted, true=exp.Literal.string("INSERT"))],
                        default=exp.Literal.string("DELETE"),
                    ),
                    ACTION,
                    quoted=True,
                ),
                exp.alias_(
                    exp.and_(exp.column(HAD, table="p"), exp.column(HAS, table="p")),
                    IS_UPDATE,
                    quoted=True,
                ),
            )
            .from_(aliased(netted, "n"))
            .join(aliased(per_key, "p"), on=null_safe_equal(key_columns, "n", "p"))
        )
        copies = exp.select(*quoted_columns([*columns, ACTION, IS_UPDATE], "l")).from_(
            aliased(labelled, "l")
        )
        copies.set(
            "laterals",
            [
                exp.Lateral(
                    this=exp.Explode(
                        this=exp.func("sequence", exp.Literal.number(1), exp.column(NET, table="l"))
                    ),
                    view=True,
                    alias=exp.TableAlias(
                        this=exp.to_identifier("e"), columns=[exp.to_identifier("copy")]
                    ),
                )
            ],
        )
        if append_only:
            copies = copies.where(
                exp.and_(
                    exp.column(ACTION, table="l", quoted=True).eq(exp.Literal.string("INSERT")),
                    exp.Not(this=exp.column(IS_UPDATE, table="l", quoted=True)),
                )
            )
        return self.deriver.materialize(copies)


def expired(key: str, old: int, why: str) -> DynamicTableError:
    return DynamicTableError(
        f"the changes of {key} since version {old} (the last refresh) can no longer be read:"
        f" they were vacuumed or expired ({why}). Keep the source's history longer than the"
        " longest gap between refreshes; to go on, recreate the dynamic table with CREATE OR"
        " REPLACE (BACKFILL FROM a copy of its rows keeps them)"
    )


def start_versions(definition: Definition) -> dict[str, int]:
    """Where START AT put each CHANGES source (empty without START AT)."""
    recorded = json.loads(definition.extra.get(START_VERSIONS) or "{}")
    return {str(key): int(version) for key, version in recorded.items()}


def commits_gone(moved: dict[str, list[Commit] | None], keys: set[str]) -> str | None:
    """A CHANGES source whose history no longer holds the last refresh's version."""
    return next((key for key in sorted(keys) if key in moved and moved[key] is None), None)
