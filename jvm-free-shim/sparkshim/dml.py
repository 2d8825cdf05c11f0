"""UPDATE, DELETE and MERGE INTO with Spark's semantics, as one Delta commit each.

delta-rs evaluates merge predicates and SET expressions in its own SQL dialect, which
differs from Spark's in many small ways. So every Spark expression is evaluated in DuckDB
(through the shim's translation), and delta-rs only receives an *action table* and
predicates it cannot get wrong: null-safe equality of columns and string comparisons.

The action table has one row per distinct target row value that changes (its old column
values, ``__action`` = 'update' or 'delete', the new values in ``__new_<column>``) and one
row per inserted row (``__kind`` = 'insert'). A target row matches a change row when all
its columns are null-safe equal to the old values; identical target rows (a multiset)
receive identical changes, because the statement's expressions are deterministic
functions of the row. The single delta-rs MERGE that applies it records Delta's change
data feed (delete, insert, update pre/post images) like Spark's Delta would.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from sparkshim import append, column_names, delta, merge_on_read, rewrite
from sparkshim.action_table import ACTION, KIND, NEW
from sparkshim.conditions import conjuncts, on_one_side
from sparkshim.errors import AnalysisException, ParseException, UnsupportedSqlError
from sparkshim.parquet_stats import delta_rs_rewrite_properties
from sparkshim.query import run_query
from sparkshim.types import align_to_schema, is_text, to_spark_type

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from sparkshim.session_protocol import SessionProtocol

_TARGET_ID, _SOURCE_ID = "__target_id", "__source_id"
_NEW_ROWS_VIEW = "__sparkshim_replace_where_rows"


def update(session: SessionProtocol, tree: exp.Update, location: Path) -> None:
    delta.check_rows_removable(location, tree.this.sql("spark"))
    read_version = delta.open_table(location).version()  # what the query below reads
    schema = _schema(location)
    target = tree.this.copy()
    alias = target.alias_or_name
    assignments = _assignments(tree.expressions, schema)
    new_values = [
        exp.alias_(assignments.get(name, exp.column(name, table=alias)).copy(), f"{NEW}{name}")
        for name in schema.names
    ]
    query = exp.select(*_target_columns(schema, alias), *new_values).from_(target)
    where = tree.args.get("where")
    if where is not None:
        query = query.where(where.this.copy())
    changes = run_query(session, query.distinct())
    changes = changes.append_column(ACTION, pa.array(["update"] * changes.num_rows, pa.string()))
    statement = _Statement(session, location, tree.this, read_version, "UPDATE")
    apply_actions(statement, schema, changes, inserts=None)


def delete(
    session: SessionProtocol, tree: exp.Delete, location: Path, operation: str = "DELETE"
) -> None:
    """``DELETE FROM t [WHERE …]`` (and ``TRUNCATE TABLE t``, its ``operation`` in the
    table's history)."""
    delta.check_rows_removable(location, tree.this.sql("spark"))
    read_version = delta.open_table(location).version()  # what the query below reads
    schema = _schema(location)
    target = tree.this.copy()
    where = tree.args.get("where")
    query = exp.select(*_target_columns(schema, target.alias_or_name)).from_(target)
    if where is not None:
        query = query.where(where.this.copy())
    changes = run_query(session, query.distinct())
    changes = changes.append_column(ACTION, pa.array(["delete"] * changes.num_rows, pa.string()))
    statement = _Statement(session, location, tree.this, read_version, operation)
    apply_actions(statement, schema, changes, inserts=None)


def replace_where(
    session: SessionProtocol, target: exp.Table, condition: exp.Expr, rows: pa.Table, location: Path
) -> None:
    """``INSERT INTO t REPLACE WHERE cond SELECT ...``: in one commit, delete the rows that
    satisfy ``cond`` and insert ``rows``, each of which must satisfy it (as Delta checks)."""
    delta.check_rows_removable(location, target.sql("spark"))
    read_version = delta.open_table(location).version()  # what the queries below read
    schema = _schema(location)
    session.register_temp_view(_NEW_ROWS_VIEW, rows)
    try:
        outside = run_query(
            session,
            exp.select(exp.func("count", exp.Star()).as_("n"))
            .from_(exp.to_table(_NEW_ROWS_VIEW).as_(target.alias_or_name))
            .where(exp.func("coalesce", condition.copy(), exp.false()).not_()),
        )
    finally:
        session.drop_temp_view(_NEW_ROWS_VIEW)
    if outside.column(0)[0].as_py():
        raise AnalysisException(
            message="[DELTA_REPLACE_WHERE_MISMATCH] Written data does not conform to partial"
            f" table overwrite condition or constraint '{condition.sql('spark')}'."
        )
    old_rows = (
        exp.select(*_target_columns(schema, target.alias_or_name))
        .from_(target.copy())
        .where(condition.copy())
        .distinct()
    )
    changes = run_query(session, old_rows)
    changes = changes.append_column(ACTION, pa.array(["delete"] * changes.num_rows, pa.string()))
    inserts = rows.rename_columns([f"{NEW}{name}" for name in rows.column_names])
    # Recorded as the MERGE it is (as delta-rs's commit of it is), with its rows counted.
    statement = _Statement(session, location, target, read_version, "MERGE")
    apply_actions(statement, schema, changes, inserts)


def merge(session: SessionProtocol, tree: exp.Merge, location: Path) -> None:
    """``MERGE INTO target USING source ON ... WHEN ...`` with every clause kind.

    The source is computed once, before anything else: the statement reads it several
    times (matches, updates, inserts), and a source query that reads the target must see
    it as it was before the MERGE, with the same rows each time.
    """
    clauses = _merge_clauses(tree)
    _check_clause_order(clauses)
    if any(_clause_kind(clause) != "NOT MATCHED [BY TARGET]" for clause in clauses):
        delta.check_rows_removable(location, tree.this.sql("spark"))
    source = tree.args["using"]
    view = f"__sparkshim_merge_source_{uuid.uuid4().hex}"
    rows = run_query(session, exp.select("*").from_(source.copy()))
    _check_no_schema_evolution(session, tree, clauses, rows.schema, location)
    session.register_temp_view(view, rows)
    try:
        materialized = tree.copy()
        materialized.set("using", exp.to_table(view).as_(source.alias_or_name))
        _merge(session, materialized, location, rows)
    finally:
        session.drop_temp_view(view)


# Delta's setting under which a MERGE's UPDATE SET * / INSERT * adds the source's columns
# that the target lacks.
AUTO_MERGE_CONF = "spark.databricks.delta.schema.autoMerge.enabled"


def _check_no_schema_evolution(
    session: SessionProtocol,
    tree: exp.Merge,
    clauses: Sequence[exp.When],
    source: pa.Schema,
    location: Path,
) -> None:
    """Refuse, before anything is written, a MERGE that Delta would run with schema
    evolution: with ``AUTO_MERGE_CONF`` true, an ``UPDATE SET *`` or ``INSERT *`` clause
    adds the source columns the target lacks to the table. The shim does not change a
    schema in a MERGE's commit, and writing the rows without those columns would lose
    their values."""
    if str(session.conf.get(AUTO_MERGE_CONF, "false") or "false").lower() != "true":
        return
    if not any(_is_star_clause(clause) for clause in clauses):
        return
    target_columns = _schema(location).names
    new = [field for field in source if column_names.resolve(field.name, target_columns) is None]
    if not new:
        return
    table = tree.this.copy()
    table.set("alias", None)
    name = table.sql("spark")
    listed = ", ".join(f"`{field.name}`" for field in new)
    definitions = ", ".join(
        f"{exp.to_identifier(field.name).sql('spark')} {to_spark_type(field.type).simpleString()}"
        for field in new
    )
    raise UnsupportedSqlError(
        f"MERGE with {AUTO_MERGE_CONF}=true adding the source columns {listed} to {name}",
        "the embedded engine does not change a table's schema in a MERGE. Add the columns"
        f" first (ALTER TABLE {name} ADD COLUMNS ({definitions})), then run the MERGE, or"
        " leave them out of the source",
    )


def _is_star_clause(clause: exp.When) -> bool:
    """``UPDATE SET *`` or ``INSERT *``: the clauses Delta's schema evolution applies to."""
    then = clause.args.get("then")
    if isinstance(then, exp.Update):
        return not then.expressions or any(isinstance(e, exp.Star) for e in then.expressions)
    return isinstance(then, exp.Insert) and (then.this is None or isinstance(then.this, exp.Star))


def _merge(session: SessionProtocol, tree: exp.Merge, location: Path, source: pa.Table) -> None:
    """The MERGE ``tree``, whose source is the materialized ``source``."""
    read_version = delta.open_table(location).version()  # what the queries below read
    schema = _schema(location)
    pairs = _MergePairs(session, tree, schema, source.column_names)
    statement = _Statement(session, location, tree.this, read_version, "MERGE")
    clauses = _merge_clauses(tree)
    for clause in clauses:  # a column set twice is an analysis error, before any match
        then = clause.args.get("then")
        if isinstance(then, exp.Update) and not any(
            isinstance(e, exp.Star) for e in then.expressions
        ):
            _assignments(then.expressions, schema)
    matched = [c for c in clauses if c.args.get("matched")]
    by_source = [c for c in clauses if not c.args.get("matched") and c.args.get("source")]
    not_matched = [c for c in clauses if not c.args.get("matched") and not c.args.get("source")]
    if not by_source and len(matched) == 1 and _is_plain_delete(matched[0]):
        # Delete every matched target row, insert unmatched source rows: a semi join and
        # an anti join, without numbering every row of both sides (Delta allows several
        # source rows to match one target row when the only matched clause is this one).
        unmatched = pairs.unmatched_sources(not_matched) if not_matched else None
        inserts = pairs.inserts(not_matched, unmatched) if not_matched else None
        if _rewrite_plain_table(session, location, read_version, tree, source, inserts):
            return
        deleted = run_query(session, pairs.matched_targets())
        deleted = deleted.append_column(ACTION, pa.array(["delete"] * deleted.num_rows))
        apply_actions(statement, schema, deleted, inserts)
        return
    changes = []
    if matched:
        if not (len(matched) == 1 and _is_plain_delete(matched[0])):
            # Delta allows several source rows to match one target row only when the one
            # matched clause is an unconditional DELETE (its change rows are distinct).
            # Delta counts the pairs a matched clause's condition holds for when every
            # clause is a MATCHED one, else every pair the ON condition matches.
            matched_only = not by_source and not not_matched
            pairs.check_one_source_row_per_target_row(matched if matched_only else None)
        changes.append(pairs.changes(matched, pairs.matched()))
    if by_source:
        changes.append(pairs.changes(by_source, pairs.target_only()))
    inserts = pairs.inserts(not_matched) if not_matched else None
    merged = pa.concat_tables([_new_values_typed(c, schema) for c in changes]) if changes else None
    apply_actions(statement, schema, merged, inserts)


def _new_values_typed(changes: pa.Table, schema: pa.Schema) -> pa.Table:
    """Change rows with their new values in the table's column types (Spark's store
    assignment), so that the rows of the matched and the not-matched-by-source clauses
    concatenate: each clause's SET types its values its own way (``-1`` an INT, a column
    no clause sets NULL)."""
    for field in schema:
        name = f"{NEW}{field.name}"
        index = changes.schema.get_field_index(name)
        if index < 0 or changes.schema.field(index).type == field.type:
            continue
        typed = align_to_schema(changes.select([name]), [name], pa.schema([(name, field.type)]))
        changes = changes.set_column(index, typed.schema.field(0), typed.column(0))
    return changes


def _rewrite_plain_table(
    session: SessionProtocol,
    location: Path,
    read_version: int,
    tree: exp.Merge,
    source: pa.Table,
    inserts: pa.Table | None,
) -> bool:
    """Commit the delete-and-insert MERGE here (rewrite.py) when the table allows it;
    whether it did. Inserted rows arrive as ``__new_<column>`` columns."""
    if delta.already_committed(location, session.commit_options()):
        return True
    return rewrite.delete_and_insert(
        session, location, read_version, tree, source.num_rows, _without_prefix(inserts)
    )


def _is_plain_delete(clause: exp.When) -> bool:
    """``WHEN MATCHED THEN DELETE`` without a condition."""
    then = clause.args["then"]
    return (
        clause.args.get("condition") is None
        and isinstance(then, exp.Var)
        and then.name.upper() == "DELETE"
    )


def _any_condition(clauses: Sequence[exp.When]) -> exp.Expr | None:
    """A condition some clause's holds for (None when a clause has none: any row)."""
    conditions: list[exp.Expr] = []
    for clause in clauses:
        condition = clause.args.get("condition")
        if condition is None:
            return None
        conditions.append(exp.paren(condition.copy()))
    return exp.or_(*conditions)


def _or_null(case: exp.Case) -> exp.Expr:
    """``case``, or NULL when no clause gave it a branch (only DELETE clauses)."""
    return case if case.args.get("ifs") else exp.Null()


def _merge_clauses(tree: exp.Merge) -> list[exp.When]:
    whens = tree.args.get("whens")
    return list(whens.expressions if isinstance(whens, exp.Whens) else tree.expressions)


# Spark's parse error, by clause kind, for a clause without condition before another of
# its kind (the later one could never apply).
_OMITTED_CONDITION = {
    "MATCHED": "NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION",
    "NOT MATCHED [BY TARGET]": "NON_LAST_NOT_MATCHED_BY_TARGET_CLAUSE_OMIT_CONDITION",
    "NOT MATCHED BY SOURCE": "NON_LAST_NOT_MATCHED_BY_SOURCE_CLAUSE_OMIT_CONDITION",
}


def _check_clause_order(clauses: Sequence[exp.When]) -> None:
    """Spark's ParseException where a MERGE clause without a condition is followed by
    another clause of its kind."""
    for kind in _OMITTED_CONDITION:
        of_kind = [c for c in clauses if _clause_kind(c) == kind]
        if any(c.args.get("condition") is None for c in of_kind[:-1]):
            raise ParseException(
                message=f"[{_OMITTED_CONDITION[kind]}] When there are more than one {kind}"
                f" clauses in a MERGE statement, only the last {kind} clause can omit the"
                " condition."
            )


def _clause_kind(clause: exp.When) -> str:
    if clause.args.get("matched"):
        return "MATCHED"
    return "NOT MATCHED BY SOURCE" if clause.args.get("source") else "NOT MATCHED [BY TARGET]"


def _assignments(equalities: Sequence[exp.Expr], schema: pa.Schema) -> dict[str, exp.Expr]:
    """An UPDATE's or a MERGE update's SET: each target column's new value; Delta's
    DELTA_CONFLICT_SET_COLUMN where a column is set twice."""
    assignments: dict[str, exp.Expr] = {}
    twice: list[str] = []
    for equality in equalities:
        name = _assigned_column(equality, schema)
        if name in assignments and name not in twice:
            twice.append(name)
        assignments[name] = equality.expression
    if twice:
        columns = ", ".join(f"`{name}`" for name in twice)
        raise AnalysisException(
            message=f"[DELTA_CONFLICT_SET_COLUMN] There is a conflict from these SET columns:"
            f" [{columns}]."
        )
    return _stored_as_text(assignments, schema)


def _stored_as_text(values: dict[str, exp.Expr], schema: pa.Schema) -> dict[str, exp.Expr]:
    """``values`` with each one going into a STRING column cast to STRING, as Spark's
    store assignment casts it (a TIMESTAMP is written ``2024-05-06 01:02:03``, a DOUBLE
    ``1.0E20``): Arrow's conversion, which storing the value would apply, writes other
    text."""
    typed = dict(values)
    for name, value in values.items():
        text_column = name in schema.names and is_text(schema.field(name).type)
        if text_column and not isinstance(value, exp.Null) and not value.is_string:
            typed[name] = exp.cast(value.copy(), exp.DataType.build("STRING"))
    return typed


class _MergePairs:
    """Target rows FULL OUTER JOIN source rows on the merge condition, each side numbered
    so that one target row matched by several source rows can be told apart from
    identical target rows. Clause conditions and values are evaluated on this join, where
    both sides keep the aliases the statement uses."""

    def __init__(
        self,
        session: SessionProtocol,
        tree: exp.Merge,
        schema: pa.Schema,
        source_columns: list[str],
    ) -> None:
        self.session = session
        self.schema = schema
        target, source = tree.this.copy(), tree.args["using"].copy()
        self.target, self.source, self.on = target, source, tree.args["on"].copy()
        self.target_alias, self.source_alias = target.alias_or_name, source.alias_or_name
        self.source_columns = source_columns
        self.join = (
            exp.select()
            .from_(_numbered(target, _TARGET_ID, self.target_alias))
            .join(
                _numbered(source, _SOURCE_ID, self.source_alias),
                on=tree.args["on"].copy(),
                join_type="full outer",
            )
        )
        self.target_id = exp.column(_TARGET_ID, table=self.target_alias)
        self.source_id = exp.column(_SOURCE_ID, table=self.source_alias)

    def matched(self) -> exp.Expr:
        return exp.and_(
            self.target_id.is_(exp.null()).not_(), self.source_id.is_(exp.null()).not_()
        )

    def target_only(self) -> exp.Expr:
        return exp.and_(self.target_id.is_(exp.null()).not_(), self.source_id.is_(exp.null()))

    def source_only(self) -> exp.Expr:
        return self.target_id.is_(exp.null())

    def chosen_clause(self, clauses: Sequence[exp.When]) -> exp.Case:
        """The index of the first clause whose condition holds (NULL when none does)."""
        chosen = exp.Case()
        for index, clause in enumerate(clauses):
            condition = clause.args.get("condition")
            when = condition.copy() if condition is not None else exp.true()
            chosen = chosen.when(when, exp.Literal.number(index))
        return chosen

    def check_one_source_row_per_target_row(self, clauses: Sequence[exp.When] | None) -> None:
        """Delta's error when several source rows match one target row: among the pairs
        some of ``clauses`` applies to, or among all matched pairs (``clauses`` None)."""
        query = self.join.copy().select(self.target_id.copy()).where(self.matched())
        if clauses is not None:
            query = query.where(self.chosen_clause(clauses).is_(exp.null()).not_())
        query = (
            query.group_by(self.target_id.copy()).having(exp.func("count", exp.Star()) > 1).limit(1)
        )
        if run_query(self.session, query).num_rows:
            raise AnalysisException(
                message="[DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] Cannot"
                " perform Merge as multiple source rows matched and attempted to modify the"
                " same target row in the Delta table in possibly conflicting ways."
                " Preprocess the source table to eliminate the possibility of multiple matches."
            )

    def changes(self, clauses: Sequence[exp.When], pairs: exp.Expr) -> pa.Table:
        """Change rows for the ``pairs``, each from the first clause that applies."""
        chosen = self.chosen_clause(clauses)
        action = exp.Case()
        new_values = {name: exp.Case() for name in self.schema.names}
        for index, clause in enumerate(clauses):
            is_this_clause = chosen.copy().eq(index)
            then = clause.args["then"]
            if isinstance(then, exp.Var) and then.name.upper() == "DELETE":
                action = action.when(is_this_clause, exp.Literal.string("delete"))
                continue
            action = action.when(is_this_clause.copy(), exp.Literal.string("update"))
            assignments = _update_assignments(
                then, self.schema, self.source_alias, self.source_columns
            )
            for name in self.schema.names:
                value = assignments.get(name, exp.column(name, table=self.target_alias))
                new_values[name] = new_values[name].when(is_this_clause.copy(), value.copy())
        query = (
            self.join.copy()
            .select(
                *_target_columns(self.schema, self.target_alias),
                exp.alias_(action, ACTION),
                *[exp.alias_(_or_null(new_values[n]), f"{NEW}{n}") for n in self.schema.names],
            )
            .where(pairs)
            .where(chosen.is_(exp.null()).not_())
            .distinct()
        )
        return run_query(self.session, query)

    def matched_targets(self) -> exp.Select:
        """The distinct target rows some source row matches."""
        return (
            exp.select(*_target_columns(self.schema, self.target_alias))
            .from_(self.target.copy())
            .join(self.source.copy(), on=self.on.copy(), join_type="semi")
            .distinct()
        )

    def unmatched_sources(self, clauses: Sequence[exp.When]) -> exp.Select:
        """The source rows no target row matches (keeping the source's alias), among those
        some of the ``clauses`` (NOT MATCHED) may insert.

        The target is read only for the rows that could match it: where the ON condition
        is ``P AND J`` with ``P`` on source columns alone, a row for which ``P`` does not
        hold matches nothing. (A refresh's MERGE marks the rows it inserts so: they are
        never matched, and then the target is not read here at all.)"""
        source_only, joined = self._split_on()
        may_insert = _any_condition(clauses)
        if source_only is None or joined is None:
            return self._anti_join(self.on.copy(), may_insert)
        cannot_match = exp.func("coalesce", source_only.copy(), exp.false()).not_()
        unmatched = exp.select().from_(self.source.copy()).where(cannot_match)
        if may_insert is not None:
            unmatched = unmatched.where(may_insert.copy())
        could_match = source_only if may_insert is None else exp.and_(source_only, may_insert)
        if not self._has_rows(could_match):
            return unmatched
        both = exp.union(
            unmatched.select(exp.Star()),
            self._anti_join(joined, could_match).select(exp.Star()),
            distinct=False,
        )
        return exp.select().from_(both.subquery(self.source_alias))

    def _anti_join(self, on: exp.Expr, where: exp.Expr | None) -> exp.Select:
        """The source rows (those ``where`` keeps) no target row matches on ``on``."""
        query = exp.select().from_(self.source.copy())
        if where is not None:
            query = query.where(where.copy())
        return query.join(self.target.copy(), on=on.copy(), join_type="anti")

    def _split_on(self) -> tuple[exp.Expr | None, exp.Expr | None]:
        """The ON condition's conjuncts on source columns alone (qualified by the source's
        alias, deterministic), and the others; None for an empty part."""
        source_only: list[exp.Expr] = []
        joined: list[exp.Expr] = []
        for conjunct in conjuncts(self.on):
            on_source = on_one_side(conjunct, self.source_alias)
            (source_only if on_source else joined).append(conjunct)
        return (
            exp.and_(*source_only) if source_only else None,
            exp.and_(*joined) if joined else None,
        )

    def _has_rows(self, condition: exp.Expr) -> bool:
        """Whether some source row satisfies ``condition`` (the source is materialized:
        this reads no table)."""
        query = exp.select(exp.Literal.number(1)).from_(self.source.copy()).where(condition.copy())
        return bool(run_query(self.session, query.limit(1)).num_rows)

    def inserts(self, clauses: Sequence[exp.When], unmatched: exp.Select | None = None) -> pa.Table:
        """Rows to insert for source rows that matched no target row (a multiset), from
        the full join or from ``unmatched`` (``unmatched_sources``)."""
        chosen = self.chosen_clause(clauses)
        new_values = {name: exp.Case() for name in self.schema.names}
        for index, clause in enumerate(clauses):
            values = _insert_values(
                clause.args["then"], self.schema, self.source_alias, self.source_columns
            )
            for name in self.schema.names:
                new_values[name] = new_values[name].when(
                    chosen.copy().eq(index), values[name].copy()
                )
        base = self.join.copy().where(self.source_only()) if unmatched is None else unmatched
        query = base.select(
            *[exp.alias_(new_values[n], f"{NEW}{n}") for n in self.schema.names]
        ).where(chosen.is_(exp.null()).not_())
        return run_query(self.session, query)


def _numbered(relation: exp.Expr, id_column: str, alias: str) -> exp.Expr:
    """``(SELECT *, row_number() OVER () AS id_column FROM relation) AS alias``."""
    row_number = exp.alias_(exp.Window(this=exp.func("row_number")), id_column)
    return exp.select("*", row_number).from_(relation).subquery(alias)


def _update_assignments(
    then: exp.Expr, schema: pa.Schema, source_alias: str, source_columns: list[str]
) -> dict[str, exp.Expr]:
    if isinstance(then, exp.Update):
        if any(isinstance(e, exp.Star) for e in then.expressions) or not then.expressions:
            return _star_assignments(schema, source_alias, source_columns)
        return _assignments(then.expressions, schema)
    raise UnsupportedSqlError(f"the MERGE action {then.sql('spark')}")


def _insert_values(
    then: exp.Expr, schema: pa.Schema, source_alias: str, source_columns: list[str]
) -> dict[str, exp.Expr]:
    if not isinstance(then, exp.Insert):
        raise UnsupportedSqlError(f"the MERGE action {then.sql('spark')}")
    columns_node, values_node = then.this, then.expression
    if isinstance(columns_node, exp.Star) or columns_node is None:
        return _star_assignments(schema, source_alias, source_columns)
    columns = [
        column_names.require(column.name, schema.names) for column in columns_node.expressions
    ]
    column_names.check_unique(columns)
    values = values_node.expressions if isinstance(values_node, exp.Tuple) else [values_node]
    if len(columns) != len(values):
        raise AnalysisException(message="MERGE INSERT has a different number of columns and values")
    given = dict(zip(columns, values, strict=True))
    return _stored_as_text({name: given.get(name, exp.null()) for name in schema.names}, schema)


def _star_assignments(
    schema: pa.Schema, source_alias: str, source_columns: list[str]
) -> dict[str, exp.Expr]:
    """``UPDATE SET *`` / ``INSERT *``: every target column from the source column of the
    same name (in any case), which must exist."""
    sources = {name: column_names.resolve(name, source_columns) for name in schema.names}
    missing = [name for name, source in sources.items() if source is None]
    if missing:
        raise AnalysisException(
            message=f"UPDATE SET * / INSERT * needs source column(s) {', '.join(missing)}"
        )
    return _stored_as_text(
        {name: exp.column(str(source), table=source_alias) for name, source in sources.items()},
        schema,
    )


def _assigned_column(assignment: exp.Expr, schema: pa.Schema) -> str:
    if not isinstance(assignment, exp.EQ) or not isinstance(assignment.this, exp.Column):
        raise UnsupportedSqlError(f"the assignment {assignment.sql('spark')}")
    target = assignment.this
    struct = column_names.resolve(target.table, schema.names) if target.table else None
    if struct is not None and column_names.resolve(target.name, schema.names) is None:
        # `SET s.f = v` of a STRUCT column s (where s is no table alias naming a column f)
        raise UnsupportedSqlError(
            f"setting the field {target.sql('spark')} of the STRUCT column `{struct}`",
            f"set the whole column: SET {struct} = named_struct(...) with every field,"
            f" the others copied from {struct}",
        )
    return column_names.require(target.name, schema.names)


def _target_columns(schema: pa.Schema, alias: str) -> list[exp.Expr]:
    return [exp.alias_(exp.column(name, table=alias), name) for name in schema.names]


def _schema(location: Path) -> pa.Schema:
    schema = pa.schema(delta.open_table(location).schema().to_arrow())
    for field in schema:
        if pa.types.is_map(field.type):
            raise UnsupportedSqlError(
                f"UPDATE/DELETE/MERGE on a table with the MAP column {field.name}",
                "MAP values cannot be compared for equality",
            )
    return schema


@dataclass(frozen=True)
class _Statement:
    """The row-level statement being applied: its table and the version it read."""

    session: SessionProtocol
    location: Path
    target: exp.Table  # the table as the statement names it
    read_version: int  # what its queries read
    operation: str  # as the table's history records it: DELETE, UPDATE or MERGE


def apply_actions(
    statement: _Statement,
    schema: pa.Schema,
    changes: pa.Table | None,
    inserts: pa.Table | None,
) -> None:
    """Apply change rows and insert rows to the table in one commit, on top of the
    version the statement read (the one they were computed from) or not at all: applied
    to a version the statement never read, they could undo or repeat another commit's
    rows (Delta raises a concurrent-modification error there too). On a table with
    deletion vectors enabled, the changed rows are marked in them (merge_on_read.py);
    otherwise one delta-rs MERGE of the action table rewrites their files."""
    session, location, read_version = statement.session, statement.location, statement.read_version
    state = delta.table_state(location)
    if state is not None and append.marks_removed_rows(state):
        row_changes = merge_on_read.RowChanges(changes, _without_prefix(inserts))
        merge_on_read.apply(
            session,
            location,
            statement.target,
            read_version,
            schema,
            row_changes,
            statement.operation,
        )
        return
    parts = []
    new_schema = pa.schema([pa.field(f"{NEW}{f.name}", f.type) for f in schema])
    if changes is not None and changes.num_rows:
        old = align_to_schema(changes.select(schema.names), schema.names, schema)
        if new_schema.names[0] in changes.column_names:
            new_columns = changes.select(new_schema.names)
            new = align_to_schema(new_columns, new_schema.names, new_schema)
        else:  # deletions carry no new values
            new = _nulls(new_schema, changes.num_rows)
        parts.append(_action_rows(old, "change", changes.column(ACTION), new))
    if inserts is not None and inserts.num_rows:
        new = align_to_schema(inserts, new_schema.names, new_schema)
        old = _nulls(schema, new.num_rows)
        parts.append(_action_rows(old, "insert", pa.nulls(new.num_rows, pa.string()), new))
    if not parts:
        return
    action_table = pa.concat_tables(parts)
    match = " AND ".join(
        [f"(source.{KIND} = 'change')"]
        + [f"(target.{_quote(n)} IS NOT DISTINCT FROM source.{_quote(n)})" for n in schema.names]
    )
    new_values = {_quote(n): f"source.{_quote(NEW + n)}" for n in schema.names}
    options = session.commit_options()
    if delta.already_committed(location, options):
        return
    table = delta.table_for_commit(location, options, read_version)
    with delta.committing(location):
        _merge_actions(table, action_table, match, new_values, options)


def _without_prefix(inserts: pa.Table | None) -> pa.Table | None:
    """Insert rows under the table's column names (not ``__new_<column>``)."""
    if inserts is None:
        return None
    return inserts.rename_columns([name.removeprefix(NEW) for name in inserts.column_names])


def _merge_actions(
    table: DeltaTable,
    action_table: pa.Table,
    match: str,
    new_values: dict[str, str],
    options: delta.CommitOptions,
) -> None:
    """delta-rs's MERGE of the action rows into ``table``."""
    delta.refuse_misspelled_partitions(table, action_table, prefix=NEW)
    (
        table.merge(
            action_table,
            predicate=match,
            source_alias="source",
            target_alias="target",
            writer_properties=delta_rs_rewrite_properties(delta.arrow_schema(table)),
            commit_properties=options.properties(),
        )
        .when_matched_delete(predicate=f"source.{ACTION} = 'delete'")
        .when_matched_update(updates=new_values, predicate=f"source.{ACTION} = 'update'")
        .when_not_matched_insert(updates=new_values, predicate=f"source.{KIND} = 'insert'")
        .execute()
    )


def _action_rows(
    old: pa.Table, kind: str, actions: pa.ChunkedArray | pa.Array, new: pa.Table
) -> pa.Table:
    columns = [*old.columns, pa.array([kind] * old.num_rows, pa.string()), actions, *new.columns]
    names = [*old.column_names, KIND, ACTION, *new.column_names]
    return pa.Table.from_arrays([pc.cast(c, c.type) for c in columns], names=names)


def _nulls(schema: pa.Schema, num_rows: int) -> pa.Table:
    return pa.Table.from_arrays([pa.nulls(num_rows, f.type) for f in schema], schema=schema)


def _quote(name: str) -> str:
    """A column name for delta-rs' SQL: double-quoted, as DataFusion lower-cases bare ones."""
    return '"' + name.replace('"', '""') + '"'
