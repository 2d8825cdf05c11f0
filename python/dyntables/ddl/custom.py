"""The CREATE half of custom incrementalization (seed 003): ``REFRESH USING ( MERGE |
INSERT INTO SELF … )`` checked and prepared at CREATE (``analyze``); what the statement
means at a refresh is ``dyntables.refresh.custom_sql``.

The statement is checked: one INSERT INTO SELF or MERGE INTO SELF, no ``CHANGES`` on SELF,
no time bounds inside ``CHANGES``, the table itself named SELF and never by its name;
sources are qualified, ``* EXCLUDE (…)`` is expanded to the columns it keeps (Spark 3.5 has
no ``* EXCEPT``), and the statement is resolved against empty inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from dyntables.catalog import key_to_table, table_key
from dyntables.ddl.backfill import resolve_version
from dyntables.engine import Engine
from dyntables.errors import DynamicTableError, first_line
from dyntables.formats import ACTION, IS_UPDATE
from dyntables.planner.structure import select_inputs
from dyntables.refresh.changes import aliased
from dyntables.refresh.custom_sql import (
    APPEND_ONLY,
    DEFAULT,
    bind,
    empty_self,
    first_rows,
    information,
    is_self,
    merge_probe,
    references,
)
from dyntables.sql.dialect import parse_one, to_spark_sql
from dyntables.statements import TimePoint, TimePointBy

# Checks a source of the dynamic table, qualifies its reference in place, returns its key.
QualifySource = Callable[[exp.Table, exp.Table], str]


# ``refresh_mode_reason`` by the mode the CREATE asked for.
MODE_REASON = {
    "AUTO": "AUTO resolves to CUSTOM_INCREMENTAL: REFRESH USING says how changes are applied",
    "CUSTOM_INCREMENTAL": "REFRESH_MODE = CUSTOM_INCREMENTAL was requested",
}


def _check_statement(tree: exp.Expr, own: str, engine: Engine) -> None:
    """One INSERT INTO SELF or MERGE INTO SELF."""
    if not isinstance(tree, (exp.Insert, exp.Merge)):
        raise DynamicTableError(
            "REFRESH USING takes one MERGE INTO SELF or INSERT INTO SELF statement, not"
            f" {type(tree).__name__.upper()}"
        )
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    if not isinstance(target, exp.Table) or not is_self(target):
        written = to_spark_sql(target) if isinstance(target, exp.Expr) else "?"
        if isinstance(target, exp.Table) and table_key(engine.qualify(target)) == own:
            raise DynamicTableError(
                f"REFRESH USING names the dynamic table {own} itself: write it as SELF"
                " (MERGE INTO SELF / INSERT INTO SELF)"
            )
        raise DynamicTableError(
            f"REFRESH USING must write SELF (MERGE INTO SELF or INSERT INTO SELF), not {written}"
        )
    if isinstance(tree, exp.Insert) and tree.args.get("overwrite"):
        raise DynamicTableError(
            "INSERT OVERWRITE SELF is not allowed: INSERT INTO SELF appends; use MERGE INTO"
            " SELF to change or delete rows"
        )


@dataclass(frozen=True)
class AnalyzedBody:
    """A REFRESH USING statement checked against the catalog."""

    statement: str  # Spark SQL: sources qualified, SELF and CHANGES kept, EXCLUDE expanded
    sources: tuple[str, ...]
    columns: tuple[tuple[str, str], ...]  # the declared columns, with Spark's type names


def analyze(
    engine: Engine,
    table: exp.Table,
    body: str,
    declared: list[tuple[str, str]],
    qualify_source: QualifySource,
) -> AnalyzedBody:
    """Check a REFRESH USING statement and normalize it for storage (see the module doc)."""
    own = table_key(table)
    tree = parse_one(body)
    _check_statement(tree, own, engine)
    columns = _declared_columns(engine, declared)
    sources: list[str] = []
    for reference in references(tree):
        mode = information(reference)
        if is_self(reference):
            if mode is not None:
                raise DynamicTableError(
                    "CHANGES on SELF is not allowed: read SELF as it is (FROM SELF AS cur) and"
                    " the sources' changes with <source> CHANGES(…)"
                )
            continue
        _check_reference(engine, reference, own, mode)
        key = qualify_source(table, reference)
        if key not in sources:
            sources.append(key)
    session = engine.refresh_session

    def columns_of(key: str) -> list[str]:
        return list(engine.schema_of(session, key).names)

    _expand_excluded_stars(tree, columns, columns_of)
    _quote_dollar_names(tree)
    _probe(session, tree, columns)
    return AnalyzedBody(to_spark_sql(tree), tuple(sources), columns)


def _check_reference(engine: Engine, reference: exp.Table, own: str, mode: str | None) -> None:
    if table_key(engine.qualify(reference)) == own:
        raise DynamicTableError(
            f"REFRESH USING reads the dynamic table {own} by its name: refer to it as SELF"
            " (FROM SELF AS cur)"
        )
    changes = reference.args.get("changes")
    if changes is not None and (changes.args.get("at_before") or changes.args.get("end")):
        raise DynamicTableError(
            f"CHANGES on {reference.name} takes no time bounds (AT, BEFORE, END): each refresh"
            " reads the changes since the last one; use START AT at CREATE to choose where"
            " the first refresh starts"
        )
    if mode not in (None, DEFAULT, APPEND_ONLY):
        raise DynamicTableError(
            f"CHANGES(INFORMATION => {mode}) is not known: use DEFAULT or APPEND_ONLY"
        )


def _declared_columns(
    engine: Engine, declared: list[tuple[str, str]]
) -> tuple[tuple[str, str], ...]:
    """The column list with Spark's names for the types (resolved by the engine)."""
    probe = exp.select(
        *[
            exp.alias_(
                exp.cast(exp.null(), exp.DataType.build(type_sql, dialect="spark")),
                name,
                quoted=True,
            )
            for name, type_sql in declared
        ]
    )
    schema = engine.refresh_session.sql(to_spark_sql(probe)).schema
    found = tuple(
        (name, field.dataType.simpleString())
        for (name, _), field in zip(declared, schema.fields, strict=True)
    )
    seen: set[str] = set()
    for name, _ in found:
        if name.lower() in seen:
            raise DynamicTableError(f"the column list names {name} twice")
        seen.add(name.lower())
    return found


def _expand_excluded_stars(
    tree: exp.Expr, columns: tuple[tuple[str, str], ...], columns_of: Callable[[str], list[str]]
) -> None:
    """Replace each ``* EXCLUDE (…)`` (``t.* EXCLUDE (…)``) by the columns it keeps."""

    def names_of(item: exp.Expr) -> list[str]:
        if isinstance(item, exp.Table) and is_self(item):
            return [name for name, _ in columns]
        if isinstance(item, exp.Table) and not isinstance(item.this, exp.Anonymous):
            names = columns_of(table_key(item))
            return names + ([ACTION, IS_UPDATE] if information(item) else [])
        inner = item.this if isinstance(item, exp.Subquery) else None
        if isinstance(inner, exp.Query) and not any(p.is_star for p in inner.selects):
            return list(inner.named_selects)
        raise DynamicTableError(
            f"cannot tell the columns of {to_spark_sql(item)} for SELECT * EXCLUDE: name the"
            " columns instead"
        )

    for select in reversed(list(tree.find_all(exp.Select))):
        projections: list[exp.Expr] = []
        changed = False
        for projection in select.expressions:
            star = projection if isinstance(projection, exp.Star) else None
            qualifier = None
            if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
                star, qualifier = projection.this, projection.table
            if star is None or not star.args.get("except_"):
                projections.append(projection)
                continue
            changed = True
            excluded = {column.name.lower() for column in star.args["except_"]}
            items = select_inputs(select)
            qualify = len(items) > 1
            if qualifier:
                items = [i for i in items if i.alias_or_name.lower() == qualifier.lower()]
            for item in items:
                for name in names_of(item):
                    if name.lower() not in excluded:
                        table = item.alias_or_name if qualify else None
                        projections.append(exp.column(name, table=table, quoted=True))
        if changed:
            select.set("expressions", projections)


def _quote_dollar_names(tree: exp.Expr) -> None:
    """Quote ``METADATA$…`` names, so that every Spark SQL rendering reads them."""
    for identifier in tree.find_all(exp.Identifier):
        if "$" in identifier.name:
            identifier.set("quoted", True)


def _relation(reference: exp.Table, query: exp.Query) -> exp.Subquery:
    """``query`` under the name the statement uses for ``reference``."""
    return aliased(query, reference.alias_or_name)


def _probe(session: Any, tree: exp.Expr, columns: tuple[tuple[str, str], ...]) -> None:
    """Resolve the statement against empty inputs (the sources' real schemas)."""

    def empty(reference: exp.Table) -> exp.Expr:
        if is_self(reference):
            return _relation(reference, empty_self(columns))
        if information(reference) is not None:
            plain = reference.copy()
            plain.set("changes", None)
            plain.set("alias", None)
            rows = (
                exp.select(
                    exp.Star(),
                    exp.alias_(exp.cast(exp.null(), "STRING"), ACTION, quoted=True),
                    exp.alias_(exp.cast(exp.null(), "BOOLEAN"), IS_UPDATE, quoted=True),
                )
                .from_(plain)
                .where(exp.false())
            )
            return _relation(reference, rows)
        return reference.copy()

    bound = bind(tree, empty)
    try:
        session.sql(to_spark_sql(first_rows(bound, columns).limit(0))).collect()
        if isinstance(bound, exp.Merge):
            session.sql(to_spark_sql(merge_probe(bound, columns))).collect()
    except DynamicTableError:
        raise
    except Exception as failure:
        raise DynamicTableError(
            f"the REFRESH USING statement does not resolve: {first_line(failure)}"
        ) from failure


def resolve_start(engine: Engine, keys: list[str], point: TimePoint) -> dict[str, int]:
    """START AT: for each CHANGES source, the version after which refreshes read changes
    (the version current at the point)."""
    if point.by is TimePointBy.STREAM:
        raise DynamicTableError(
            "START AT (STREAM => …): this engine has no streams; start where the stream's"
            " offset was with START AT (TIMESTAMP => …) or (STATEMENT => …)"
        )
    if point.by is TimePointBy.VERSION:
        raise DynamicTableError(
            "START AT takes TIMESTAMP, STATEMENT, OFFSET or STREAM, not VERSION"
        )
    if not keys:
        raise DynamicTableError(
            "START AT says where refreshes start reading changes, but the statement reads no"
            " CHANGES(): remove START AT"
        )
    return {key: resolve_version(engine, key_to_table(key), point) for key in keys}
