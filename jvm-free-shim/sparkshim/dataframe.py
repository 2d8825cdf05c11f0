"""The shim's DataFrame, with PySpark's everyday surface.

A DataFrame is either a materialized result (what ``session.sql`` returns: an Arrow table)
or a Spark SQL query built by DataFrame operations (``select``, ``where``, ``groupBy``,
``join`` ...; plan.py), which each action runs through the session's ``sql``. An operation
is checked when it is called (its query is analyzed at once, as PySpark analyzes it), so an
unknown column fails there with Spark's error. What a DataFrame shows the user
(``show()``, ``printSchema()``, ``collect()``, ``repr``) matches PySpark 3.5 byte for byte.

>>> import pyarrow as pa
>>> class Session:
...     time_zone = "UTC"
...     def register_temp_view(self, name, table): pass
>>> df = DataFrame(Session(), pa.table({"id": [1, 2], "name": ["a", None]}))
>>> df
DataFrame[id: bigint, name: string]
>>> df.show()
+---+----+
| id|name|
+---+----+
|  1|   a|
|  2|NULL|
+---+----+
<BLANKLINE>
>>> df.first()
Row(id=1, name='a')
"""

from __future__ import annotations

import datetime
import decimal
import importlib
from collections.abc import Callable
from typing import Any, Protocol, overload, runtime_checkable

import pyarrow as pa
import sqlglot
from pyspark.errors import (
    AnalysisException,
    IllegalArgumentException,
    ParseException,
    PySparkTypeError,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    MapType,
    Row,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)
from sqlglot import exp

from sparkshim import plan as plan_module
from sparkshim.column import Column, ColumnOrName, col, column_expressions, lit, to_column
from sparkshim.config import EAGER_EVAL_MAX_ROWS_CONF, EAGER_EVAL_TRUNCATE_CONF
from sparkshim.grouped import GroupedData
from sparkshim.plan import Plan
from sparkshim.spark_parser import parse_statements
from sparkshim.translate import ShimSpark
from sparkshim.types import (
    format_double,
    format_float,
    normalize_table,
    to_python_converter,
    to_rows,
    to_spark_schema,
)
from sparkshim.writer import DataFrameWriter

__all__ = ["DataFrame", "SessionLike"]


class SessionLike(Protocol):
    """What a DataFrame needs from its session (to run its query: ``sql`` and hidden
    temporary views, which a materialized DataFrame does not need)."""

    @property
    def time_zone(self) -> str:
        """The session time zone (``spark.sql.session.timeZone``)."""
        ...

    def register_temp_view(self, name: str, table: pa.Table | str, /) -> None:
        """Make ``table`` (rows, or the Spark SQL text of a query) queryable as the
        temporary view ``name``."""
        ...


@runtime_checkable
class QuerySession(SessionLike, Protocol):
    """A session that runs a DataFrame's query."""

    def sql(self, sqlQuery: str) -> DataFrame:  # noqa: N803 - PySpark's name
        """Run one Spark SQL statement."""
        ...

    def drop_temp_view(self, name: str, /) -> bool:
        """Remove the temporary view ``name``."""
        ...


class DataFrame:
    """A result (an Arrow table) or a query, with the everyday PySpark DataFrame methods."""

    def __init__(self, session: SessionLike, table: pa.Table) -> None:
        self._session = session
        self._held: pa.Table | None = normalize_table(table)
        self._schema = to_spark_schema(self._held.schema)
        self._built: Plan | None = None

    @classmethod
    def of_plan(cls, session: SessionLike, plan: Plan) -> DataFrame:
        """The DataFrame of ``plan``'s query, analyzed now (an error in it raises here)."""
        frame = cls.__new__(cls)
        frame._session = session
        frame._built = plan
        frame._held = None
        empty = frame.run_statement(plan.query.copy().limit(0))
        frame._schema = to_spark_schema(empty.schema)
        return frame

    @property
    def plan(self) -> Plan:
        """The Spark SQL query of this DataFrame (over a hidden view of its rows, for a
        materialized result)."""
        if self._built is None:
            assert self._held is not None
            self._built = Plan.over_rows(self._held)
        return self._built

    def run_statement(self, statement: exp.Expr) -> pa.Table:
        """``statement`` (reading this DataFrame's hidden views) run by the session's sql."""
        session = self._session
        if not isinstance(session, QuerySession):
            raise AnalysisException(message="this DataFrame's session cannot run queries")
        inputs = self.plan.inputs
        for name, rows in inputs.items():
            session.register_temp_view(name, rows)
        try:
            return normalize_table(session.sql(statement.sql(dialect=ShimSpark)).toArrow())
        finally:
            for name in inputs:
                session.drop_temp_view(name)

    def _rows(self) -> pa.Table:
        """All rows: held, or computed by running the query now (as each PySpark action
        runs its plan again)."""
        if self._held is not None:
            return self._held
        return self.run_statement(self.plan.query.copy())

    def _first_rows(self, count: int) -> pa.Table:
        if self._held is not None:
            return _head(self._held, count)
        return self.run_statement(self.plan.query.copy().limit(count))

    # ---- schema ----

    @property
    def sparkSession(self) -> SessionLike:  # noqa: N802 - PySpark's name
        return self._session

    @property
    def schema(self) -> StructType:
        """The schema as a pyspark ``StructType``."""
        return self._schema

    @property
    def columns(self) -> list[str]:
        return list(self._schema.names)

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        """Column names with their Spark SQL type names, as PySpark lists them.

        >>> DataFrame(_NoSession(), pa.table({"x": pa.array([1], pa.int32())})).dtypes
        [('x', 'int')]
        """
        return [(f.name, f.dataType.simpleString()) for f in self._schema.fields]

    def printSchema(self, level: int | None = None) -> None:  # noqa: N802 - PySpark's name
        """Print the schema as a tree, as Spark's ``StructType.treeString`` does.

        >>> DataFrame(_NoSession(), pa.table({"a": [[1]]})).printSchema()
        root
         |-- a: array (nullable = true)
         |    |-- element: long (containsNull = true)
        <BLANKLINE>
        """
        print(tree_string(self._schema, level or 0))

    def __repr__(self) -> str:
        return "DataFrame[{}]".format(", ".join(f"{name}: {t}" for name, t in self.dtypes))

    # ---- rows ----

    def collect(self) -> list[Row]:
        """All rows, with the Python values PySpark's ``collect()`` returns (timestamps as
        naive datetimes in this process's local time zone, as PySpark does)."""
        return to_rows(self._rows())

    def count(self) -> int:
        if self._held is not None:
            return int(self._held.num_rows)
        counted = exp.select(exp.func("count", exp.Star())).from_(
            self.plan.query.copy().subquery("__count")
        )
        return int(self.run_statement(counted).column(0)[0].as_py())

    def isEmpty(self) -> bool:  # noqa: N802 - PySpark's name
        return bool(self._first_rows(1).num_rows == 0)

    def limit(self, num: int) -> DataFrame:
        if num < 0:
            raise AnalysisException(
                message=f'The limit like expression "{num}" must be equal to or greater than 0,'
                f" but got {num}."
            )
        if self._held is not None:
            return DataFrame(self._session, _head(self._held, num))
        return self._derive(lambda query: query.limit(num))

    def take(self, num: int) -> list[Row]:
        return self.limit(num).collect()

    @overload
    def head(self) -> Row | None: ...

    @overload
    def head(self, n: int) -> list[Row]: ...

    def head(self, n: int | None = None) -> Row | list[Row] | None:
        if n is None:
            return self.first()
        return self.take(n)

    def first(self) -> Row | None:
        rows = self.take(1)
        return rows[0] if rows else None

    def toArrow(self) -> pa.Table:  # noqa: N802 - PySpark's name
        """The data as an Arrow table (in the shim's Arrow types for the Spark schema)."""
        return self._rows()

    def toPandas(self) -> Any:  # noqa: N802 - PySpark's name
        """The data as a pandas DataFrame, built as PySpark 3.5 builds it without Arrow
        (its default): from the collected rows, each column then given PySpark's dtype."""
        from pyspark.sql.pandas.types import _create_converter_to_pandas

        pd = importlib.import_module("pandas")
        rows = self.collect()
        if rows:
            pdf = pd.DataFrame.from_records(rows, index=range(len(rows)), columns=self.columns)
        else:
            pdf = pd.DataFrame(columns=self.columns)
        if len(pdf.columns) == 0:
            return pdf
        converters = [
            _create_converter_to_pandas(
                field.dataType,
                field.nullable,
                timezone=self._session.time_zone,
                struct_in_pandas="row",
                error_on_duplicated_field_names=False,
                timestamp_utc_localized=False,
            )
            for field in self._schema.fields
        ]
        columns = [
            convert(series) for (_, series), convert in zip(pdf.items(), converters, strict=True)
        ]
        return pd.concat(columns, axis="columns")

    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802 - PySpark's name
        """``name`` for this DataFrame: a view of its query where that reads only tables
        (so it sees their later changes, as in PySpark), else a copy of its rows."""
        if self._held is None and not self.plan.inputs:
            self._session.register_temp_view(name, self.plan.query.sql(dialect=ShimSpark))
        else:
            self._session.register_temp_view(name, self._rows())

    # ---- transformations (each builds a Spark SQL query; plan.py) ----

    def _derive(self, build: Callable[[exp.Select], exp.Query]) -> DataFrame:
        return DataFrame.of_plan(self._session, self.plan.derive(build))

    def _of(self, plan: Plan) -> DataFrame:
        return DataFrame.of_plan(self._session, plan)

    def __getitem__(self, item: str | int | Column) -> Column:
        """``df["a"]``: this DataFrame's column (still found after a join or filter);
        ``df[0]``: the first column; ``df[condition]``: ``filter``."""
        if isinstance(item, Column):
            return self.filter(item)  # type: ignore[return-value]
        if isinstance(item, int):
            item = self.columns[item]
        if item == "*":
            return Column(exp.Column(this=exp.Star(), table=_identifier(self.plan.alias)))
        self._require_column(item)
        return Column(exp.column(_identifier(item), table=_identifier(self.plan.alias)))

    def __getattr__(self, name: str) -> Column:
        if name.startswith("_") or name not in self.columns:
            raise AttributeError(f"'DataFrame' object has no attribute '{name}'")
        return self[name]

    def select(self, *cols: ColumnOrName | list[ColumnOrName]) -> DataFrame:
        projections = column_expressions(_flat(cols))
        return self._derive(lambda query: query.select(*projections, append=False))

    def selectExpr(self, *expr: str | list[str]) -> DataFrame:  # noqa: N802 - PySpark's name
        projections = [parse_expression(text) for text in _flat(expr)]
        return self._derive(lambda query: query.select(*projections, append=False))

    def filter(self, condition: Column | str) -> DataFrame:
        predicate = parse_expression(condition) if isinstance(condition, str) else None
        if predicate is None:
            if not isinstance(condition, Column):
                raise PySparkTypeError(
                    error_class="NOT_COLUMN_OR_STR",
                    message_parameters={
                        "arg_name": "condition",
                        "arg_type": type(condition).__name__,
                    },
                )
            predicate = condition.expression
        return self._derive(lambda query: query.where(predicate, copy=False))

    where = filter

    def withColumn(self, colName: str, col: Column) -> DataFrame:  # noqa: N802, N803
        return self.withColumns({colName: col})

    def withColumns(self, colsMap: dict[str, Column]) -> DataFrame:  # noqa: N802, N803
        """Each column of ``colsMap`` replaced where it exists (same place), else added."""
        projections: list[exp.Expr] = []
        pending = {name.lower(): (name, column) for name, column in colsMap.items()}
        for name in self.columns:
            if name.lower() in pending:
                new_name, column = pending.pop(name.lower())
                projections.append(_named(column.expression, new_name))
            else:
                projections.append(exp.column(_identifier(name)))
        projections += [_named(column.expression, name) for name, column in pending.values()]
        return self._derive(lambda query: query.select(*projections, append=False))

    def withColumnRenamed(self, existing: str, new: str) -> DataFrame:  # noqa: N802
        """``existing`` named ``new``; a name that is not a column changes nothing."""
        if existing.lower() not in (name.lower() for name in self.columns):
            return self
        projections = [
            _named(exp.column(_identifier(name)), new)
            if name.lower() == existing.lower()
            else exp.column(_identifier(name))
            for name in self.columns
        ]
        return self._derive(lambda query: query.select(*projections, append=False))

    def drop(self, *cols: ColumnOrName) -> DataFrame:
        """The DataFrame without the named columns; names that are not columns are ignored."""
        dropped = {_dropped_name(self, c).lower() for c in cols}
        kept = [name for name in self.columns if name.lower() not in dropped]
        if len(kept) == len(self.columns):
            return self
        projections = [exp.column(_identifier(name)) for name in kept]
        return self._derive(lambda query: query.select(*projections, append=False))

    def groupBy(self, *cols: ColumnOrName | list[ColumnOrName]) -> GroupedData:  # noqa: N802
        return GroupedData(self, column_expressions(_flat(cols)))

    groupby = groupBy

    def agg(self, *exprs: Column | dict[str, str]) -> DataFrame:
        """Aggregates over all rows (``groupBy().agg(...)``)."""
        return self.groupBy().agg(*exprs)

    def aggregate(self, keys: list[exp.Expr], aggregates: list[exp.Expr]) -> DataFrame:
        """``SELECT keys..., aggregates... GROUP BY keys`` over this DataFrame (what
        ``GroupedData`` runs); a key Column's alias names its output column only."""
        projections = [key.copy() for key in keys] + aggregates
        grouping = [key.this if isinstance(key, exp.Alias) else key for key in keys]

        def build(query: exp.Select) -> exp.Select:
            query = query.select(*projections, append=False)
            return query.group_by(*grouping) if grouping else query

        return self._derive(build)

    def join(
        self,
        other: DataFrame,
        on: ColumnOrName | list[ColumnOrName] | None = None,
        how: str | None = None,
    ) -> DataFrame:
        """Join with ``other``: ``on`` names the shared key columns (joined USING them, each
        key once in the result) or is a condition Column; no ``on`` is a cross join."""
        kind = join_kind(how or "inner")
        condition: exp.Expr | None = None
        using: list[str] = []
        keys = on if isinstance(on, list) else [] if on is None else [on]
        if all(isinstance(key, str) for key in keys):
            using = [key for key in keys if isinstance(key, str)]
        else:
            conditions = [to_column(key).expression for key in keys]
            condition = conditions[0]
            for more in conditions[1:]:
                condition = exp.and_(condition, more)
        if kind == "CROSS" and (using or condition is not None):
            kind = "INNER"
        if not using and condition is None and kind != "CROSS":
            condition = exp.true()

        def build(query: exp.Select, item: exp.Expr) -> exp.Select:
            side, join_kind_word = _JOIN_WORDS[kind]
            node = exp.Join(this=item, side=side, kind=join_kind_word)
            if using:
                node.set("using", [_identifier(key) for key in using])
            elif condition is not None:
                node.set("on", condition.copy())
            return query.join(node, copy=False)

        return self._of(plan_module.join(self.plan, other.plan, build))

    def crossJoin(self, other: DataFrame) -> DataFrame:  # noqa: N802 - PySpark's name
        return self.join(other, how="cross")

    def union(self, other: DataFrame) -> DataFrame:
        """The rows of both, matched by position (``UNION ALL``)."""
        return self._of(
            plan_module.combine(self.plan, other.plan, lambda a, b: exp.union(a, b, distinct=False))
        )

    unionAll = union  # noqa: N815 - PySpark's name

    def unionByName(  # noqa: N802 - PySpark's name
        self,
        other: DataFrame,
        allowMissingColumns: bool = False,  # noqa: N803
    ) -> DataFrame:
        """The rows of both, matched by column name (case-insensitively, as Spark does);
        with ``allowMissingColumns`` a column one side lacks is NULL there."""
        mine = {name.lower() for name in self.columns}
        theirs = {name.lower(): name for name in other.columns}
        missing = [name for name in self.columns if name.lower() not in theirs]
        extra = [name for name in other.columns if name.lower() not in mine]
        if (missing or extra) and not allowMissingColumns:
            absent = (missing or extra)[0]
            raise AnalysisException(
                message=f"[NUM_COLUMNS_MISMATCH] UNION can only be performed on inputs with the"
                f" same number of columns; the column `{absent}` is not in both DataFrames."
                " Pass allowMissingColumns=True to fill it with NULL."
            )
        left = self.select(*self.columns, *[lit(None).alias(name) for name in extra])
        right_columns: list[ColumnOrName] = [
            theirs[name.lower()] if name.lower() in theirs else lit(None).alias(name)
            for name in self.columns
        ]
        right = other.select(*right_columns, *extra)
        return left.union(right)

    def intersect(self, other: DataFrame) -> DataFrame:
        return self._of(
            plan_module.combine(
                self.plan, other.plan, lambda a, b: exp.intersect(a, b, distinct=True)
            )
        )

    def subtract(self, other: DataFrame) -> DataFrame:
        return self._of(
            plan_module.combine(
                self.plan, other.plan, lambda a, b: exp.except_(a, b, distinct=True)
            )
        )

    def exceptAll(self, other: DataFrame) -> DataFrame:  # noqa: N802 - PySpark's name
        return self._of(
            plan_module.combine(
                self.plan, other.plan, lambda a, b: exp.except_(a, b, distinct=False)
            )
        )

    def orderBy(  # noqa: N802 - PySpark's name
        self, *cols: ColumnOrName | list[ColumnOrName], ascending: bool | list[bool] = True
    ) -> DataFrame:
        """Sorted by ``cols`` (ascending with NULLs first, descending with NULLs last,
        unless a Column says otherwise), as PySpark sorts."""
        keys = column_expressions(_flat(cols))
        directions = ascending if isinstance(ascending, list) else [ascending] * len(keys)
        ordered = [
            key
            if isinstance(key, exp.Ordered)
            else exp.Ordered(this=key, desc=not up, nulls_first=bool(up))
            for key, up in zip(keys, directions, strict=True)
        ]
        return self._derive(lambda query: query.order_by(*ordered, copy=False))

    sort = orderBy

    def distinct(self) -> DataFrame:
        return self._derive(lambda query: query.distinct(copy=False))

    def dropDuplicates(self, subset: list[str] | None = None) -> DataFrame:  # noqa: N802
        """One row for each distinct value of ``subset`` (all columns by default); which
        row of each group is kept is not defined, as in PySpark."""
        if not subset:
            return self.distinct()
        for name in subset:
            self._require_column(name)
        keys = [exp.column(_identifier(name)) for name in subset]
        # Ordered by the keys themselves, equal within a partition: any row of it is first
        # (Spark SQL refuses row_number() over an unordered window).
        window = exp.Window(
            this=exp.func("row_number"),
            partition_by=keys,
            order=exp.Order(expressions=[exp.Ordered(this=key.copy()) for key in keys]),
        )
        numbered = self._derive(
            lambda query: query.select(exp.alias_(window, _ROW_NUMBER, quoted=True), append=True)
        )
        first = numbered._derive(
            lambda query: query.where(exp.column(_identifier(_ROW_NUMBER)).eq(1))
        )
        return first.select(*[col(_quoted_name(name)) for name in self.columns])

    drop_duplicates = dropDuplicates

    def alias(self, alias: str) -> DataFrame:
        """This DataFrame under the name ``alias``, for ``col("alias.a")`` in later
        operations (a self-join: ``df.alias("l").join(df.alias("r"), ...)``)."""
        return self._of(self.plan.aliased(alias))

    @property
    def write(self) -> DataFrameWriter:
        return DataFrameWriter(self)

    def _require_column(self, name: str) -> None:
        if name.lower() not in (column.lower() for column in self.columns):
            suggestion = ", ".join(f"`{column}`" for column in self.columns)
            raise AnalysisException(
                message=f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter"
                f" with name `{name}` cannot be resolved. Did you mean one of the following?"
                f" [{suggestion}]."
            )

    # ---- show ----

    def show(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> None:
        """Print the first ``n`` rows as Spark's ``Dataset.showString`` does."""
        print(self._show_string(n, truncate, vertical))

    def _repr_html_(self) -> str:
        """The first rows as an HTML table, in the markup PySpark's ``_repr_html_`` gives
        with ``spark.sql.repl.eagerEval.enabled`` (the shim runs eagerly, so always):
        at most ``spark.sql.repl.eagerEval.maxNumRows`` rows (20), cells cut to
        ``spark.sql.repl.eagerEval.truncate`` characters (20).

        >>> frame = DataFrame(_NoSession(), pa.table({"a": [1, 2], "b": ["<x>", None]}))
        >>> print(frame._repr_html_())
        <table border='1'>
        <tr><th>a</th><th>b</th></tr>
        <tr><td>1</td><td>&lt;x&gt;</td></tr>
        <tr><td>2</td><td>NULL</td></tr>
        </table>
        <BLANKLINE>
        """
        import html

        limit = max(_conf_int(self._session, EAGER_EVAL_MAX_ROWS_CONF, 20), 0)
        width = _conf_int(self._session, EAGER_EVAL_TRUNCATE_CONF, 20)
        head = self._first_rows(limit + 1)
        cells = [
            pretty_strings(column, field.dataType, self._session.time_zone)
            for column, field in zip(head.columns, self._schema.fields, strict=True)
        ]
        rows = [list(r) for r in zip(*cells, strict=True)] if cells else [[]] * head.num_rows
        more = len(rows) > limit

        def line(tag: str, values: list[str]) -> str:
            escaped = [html.escape(_truncate(escape_meta_characters(v), width)) for v in values]
            return f"<tr><{tag}>" + f"</{tag}><{tag}>".join(escaped) + f"</{tag}></tr>\n"

        markup = "<table border='1'>\n" + line("th", list(self._schema.names))
        markup += "".join(line("td", row) for row in rows[:limit]) + "</table>\n"
        if more:
            markup += f"only showing top {limit} {'row' if limit == 1 else 'rows'}\n"
        return markup

    def _show_string(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> str:
        if not isinstance(n, int) or isinstance(n, bool):
            raise PySparkTypeError(
                error_class="NOT_INT",
                message_parameters={"arg_name": "n", "arg_type": type(n).__name__},
            )
        if not isinstance(vertical, bool):
            raise PySparkTypeError(
                error_class="NOT_BOOL",
                message_parameters={"arg_name": "vertical", "arg_type": type(vertical).__name__},
            )
        if isinstance(truncate, bool) and truncate:
            width = 20
        else:
            try:
                width = int(truncate)
            except ValueError:
                raise PySparkTypeError(
                    error_class="NOT_BOOL",
                    message_parameters={
                        "arg_name": "truncate",
                        "arg_type": type(truncate).__name__,
                    },
                ) from None
        num_rows = max(n, 0)
        head = self._first_rows(num_rows + 1)
        cells = [
            pretty_strings(column, field.dataType, self._session.time_zone)
            for column, field in zip(head.columns, self._schema.fields, strict=True)
        ]
        header = [escape_meta_characters(name) for name in self._schema.names]
        rows = [list(r) for r in zip(*cells, strict=True)] if cells else [[]] * head.num_rows
        data = [[_truncate(escape_meta_characters(cell), width) for cell in row] for row in rows]
        return show_string(header, data, num_rows, width, vertical)


# ---------------------------------------------------------------------------------------
# What the transformations share
# ---------------------------------------------------------------------------------------

_ROW_NUMBER = "__sparkshim_row_number"

# PySpark's join type names (lower case, without underscores) → the kind they mean.
_JOIN_TYPES = {
    "inner": "INNER",
    "cross": "CROSS",
    "outer": "FULL",
    "full": "FULL",
    "fullouter": "FULL",
    "left": "LEFT",
    "leftouter": "LEFT",
    "right": "RIGHT",
    "rightouter": "RIGHT",
    "semi": "SEMI",
    "leftsemi": "SEMI",
    "anti": "ANTI",
    "leftanti": "ANTI",
}

# kind → (side, kind) of the sqlglot Join node that says it in Spark SQL
_JOIN_WORDS: dict[str, tuple[str | None, str | None]] = {
    "INNER": (None, "INNER"),
    "CROSS": (None, "CROSS"),
    "FULL": ("FULL", "OUTER"),
    "LEFT": ("LEFT", "OUTER"),
    "RIGHT": ("RIGHT", "OUTER"),
    "SEMI": ("LEFT", "SEMI"),
    "ANTI": ("LEFT", "ANTI"),
}


def join_kind(how: str) -> str:
    """The join PySpark's ``how`` names.

    >>> join_kind("left_outer"), join_kind("leftanti")
    ('LEFT', 'ANTI')
    """
    kind = _JOIN_TYPES.get(how.lower().replace("_", ""))
    if kind is None:
        raise IllegalArgumentException(
            message=f"Unsupported join type '{how}'. Supported join types include: 'inner',"
            " 'outer', 'full', 'fullouter', 'full_outer', 'leftouter', 'left', 'left_outer',"
            " 'rightouter', 'right', 'right_outer', 'leftsemi', 'left_semi', 'semi',"
            " 'leftanti', 'left_anti', 'anti', 'cross'."
        )
    return kind


def parse_expression(text: str) -> exp.Expr:
    """One Spark SQL expression (``selectExpr``, ``filter("...")``, ``expr``)."""
    try:
        (expression,) = parse_statements(text)
    except (sqlglot.ParseError, sqlglot.TokenError, ValueError) as failure:
        raise ParseException(
            message=f"[PARSE_SYNTAX_ERROR] Syntax error in the expression '{text}'."
        ) from failure
    return expression


def _flat(values: tuple[Any, ...]) -> list[Any]:
    """PySpark's varargs, which also take one list."""
    if len(values) == 1 and isinstance(values[0], list):
        return list(values[0])
    return list(values)


def _identifier(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _quoted_name(name: str) -> str:
    """``name`` as ``col`` reads one column of that exact name."""
    return "`" + name.replace("`", "``") + "`"


def _named(expression: exp.Expr, name: str) -> exp.Expr:
    if isinstance(expression, exp.Alias):
        expression = expression.this
    return exp.alias_(expression, name, quoted=True)


def _dropped_name(frame: DataFrame, column: ColumnOrName) -> str:
    """The column name ``drop`` removes for ``column``."""
    if isinstance(column, str):
        return column
    node = column.expression
    if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
        raise PySparkTypeError(
            error_class="NOT_COLUMN_OR_STR",
            message_parameters={"arg_name": "col", "arg_type": type(column).__name__},
        )
    name = node.name
    if [c.lower() for c in frame.columns].count(name.lower()) > 1:
        raise AnalysisException(
            message=f"sparkshim cannot drop one of the several columns named `{name}` (after a"
            " join): rename the column on one side before the join (withColumnRenamed), or"
            " select the columns to keep"
        )
    return name


def _conf_int(session: SessionLike, key: str, default: int) -> int:
    conf = getattr(session, "conf", None)
    value = conf.get(key, None) if conf is not None else None
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _head(table: pa.Table, count: int) -> pa.Table:
    # Arrow does not clamp a slice of a table without columns to its length.
    return table.slice(0, min(count, table.num_rows))


class _NoSession:
    """A stand-in session for doctests."""

    time_zone = "UTC"

    def register_temp_view(self, name: str, table: pa.Table, /) -> None:
        del name, table


# ---------------------------------------------------------------------------------------
# Dataset.showString
# ---------------------------------------------------------------------------------------

_MINIMUM_COLUMN_WIDTH = 3


def show_string(
    header: list[str], rows: list[list[str]], num_rows: int, truncate: int, vertical: bool
) -> str:
    """Spark 3.5's ``Dataset.showString`` over cells already rendered, escaped and
    truncated; ``rows`` may hold one row more than ``num_rows``, which means "more data".

    >>> print(show_string(["a"], [["1"], ["2"]], 1, 20, False), end="")
    +---+
    |  a|
    +---+
    |  1|
    +---+
    only showing top 1 row
    """
    has_more = len(rows) > num_rows
    rows = rows[:num_rows]
    lines: list[str] = []
    if not vertical:
        widths = [_MINIMUM_COLUMN_WIDTH] * len(header)
        for row in [header, *rows]:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], string_half_width(cell))

        def render(row: list[str]) -> str:
            padded = []
            for cell, width in zip(row, widths, strict=True):
                padding = " " * (width - string_half_width(cell))
                padded.append(padding + cell if truncate > 0 else cell + padding)
            return "|" + "|".join(padded) + "|"

        separator = "+" + "+".join("-" * width for width in widths) + "+"
        lines += [separator, render(header), separator]
        lines += [render(row) for row in rows]
        lines.append(separator)
    else:
        name_width = max([_MINIMUM_COLUMN_WIDTH, *map(string_half_width, header)])
        data_width = max(
            [_MINIMUM_COLUMN_WIDTH, *(string_half_width(cell) for row in rows for cell in row)]
        )
        for number, row in enumerate(rows):
            lines.append(_right_pad(f"-RECORD {number}", name_width + data_width + 5, "-"))
            for name, cell in zip(header, row, strict=True):
                name_cell = name + " " * (name_width - string_half_width(name))
                data_cell = cell + " " * (data_width - string_half_width(cell))
                lines.append(f" {name_cell} | {data_cell} ")
    if vertical and not rows:
        lines.append("(0 rows)")
    elif has_more:
        lines.append(f"only showing top {num_rows} {'row' if num_rows == 1 else 'rows'}")
    return "".join(line + "\n" for line in lines)


def _right_pad(text: str, size: int, pad: str) -> str:
    return text + pad * (size - java_length(text))


def _truncate(cell: str, truncate: int) -> str:
    if truncate <= 0 or java_length(cell) <= truncate:
        return cell
    if truncate < 4:
        return _java_substring(cell, truncate)
    return _java_substring(cell, truncate - 3) + "..."


def java_length(text: str) -> int:
    """``String.length()`` in Java: UTF-16 code units (a character beyond the BMP is two).

    >>> java_length("naïve 😀")
    8
    """
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _java_substring(text: str, units: int) -> str:
    out: list[str] = []
    used = 0
    for ch in text:
        size = 2 if ord(ch) > 0xFFFF else 1
        if used + size > units:
            if used < units:
                # Java keeps the lone high surrogate, which prints as "?".
                out.append("?")
            break
        out.append(ch)
        used += size
    return "".join(out)


# Spark's Utils.fullWidthRegex: characters that take two columns in a terminal.
_FULL_WIDTH_RANGES = (
    (0x1100, 0x115F),
    (0x2E80, 0xA4CF),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE19),
    (0xFE30, 0xFE6F),
    (0xFF00, 0xFF60),
    (0xFFE0, 0xFFE6),
)


def string_half_width(text: str) -> int:
    """Spark's ``Utils.stringHalfWidth``: the Java length plus one per full-width character.

    >>> string_half_width("日本"), string_half_width("ab")
    (4, 2)
    """
    wide = sum(1 for ch in text if any(lo <= ord(ch) <= hi for lo, hi in _FULL_WIDTH_RANGES))
    return java_length(text) + wide


_META_CHARACTERS = str.maketrans(
    {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\b": "\\b", "\v": "\\v", "\a": "\\a"}
)


def escape_meta_characters(text: str) -> str:
    r"""Spark's ``SchemaUtils.escapeMetaCharacters``: control characters that would break
    the table, written as escapes.

    >>> print(escape_meta_characters("a\nb\tc"))
    a\nb\tc
    """
    return text.translate(_META_CHARACTERS)


# ---------------------------------------------------------------------------------------
# ToPrettyString: how show() renders one value
# ---------------------------------------------------------------------------------------

_NULL = "NULL"


def pretty_strings(column: pa.ChunkedArray, spark_type: DataType, time_zone: str) -> list[str]:
    """The cells ``show()`` prints for a column: Spark 3.5's ``ToPrettyString``."""
    render = _pretty_renderer(spark_type)
    values = to_python_converter(spark_type, time_zone)(column)
    return [_NULL if value is None else render(value) for value in values]


def _pretty_renderer(spark_type: DataType) -> Callable[[Any], str]:
    if isinstance(spark_type, BooleanType):
        return lambda v: "true" if v else "false"
    if isinstance(spark_type, DoubleType):
        return format_double
    if isinstance(spark_type, FloatType):
        return format_float
    if isinstance(spark_type, DecimalType):
        return _plain_decimal
    if isinstance(spark_type, BinaryType):
        return lambda v: "[" + " ".join(f"{byte:02X}" for byte in v) + "]"
    if isinstance(spark_type, DateType):
        return _format_date
    if isinstance(spark_type, (TimestampType, TimestampNTZType)):
        return _format_timestamp
    if isinstance(spark_type, ArrayType):
        element = _nullable(_pretty_renderer(spark_type.elementType))
        return lambda v: "[" + ", ".join(map(element, v)) + "]"
    if isinstance(spark_type, MapType):
        key = _pretty_renderer(spark_type.keyType)
        value = _nullable(_pretty_renderer(spark_type.valueType))
        return lambda v: "{" + ", ".join(f"{key(k)} -> {value(x)}" for k, x in v.items()) + "}"
    if isinstance(spark_type, StructType):
        fields = [_nullable(_pretty_renderer(f.dataType)) for f in spark_type.fields]
        return lambda v: (
            "{" + ", ".join(render(x) for render, x in zip(fields, v, strict=True)) + "}"
        )
    return str


def _nullable(render: Callable[[Any], str]) -> Callable[[Any], str]:
    return lambda v: _NULL if v is None else render(v)


def _plain_decimal(value: decimal.Decimal) -> str:
    return format(value, "f")


def _format_date(value: datetime.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _format_timestamp(value: datetime.datetime) -> str:
    text = f"{_format_date(value)} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if value.microsecond:
        text += "." + f"{value.microsecond:06d}".rstrip("0")
    return text


# ---------------------------------------------------------------------------------------
# StructType.treeString
# ---------------------------------------------------------------------------------------


def tree_string(schema: StructType, max_depth: int = 0) -> str:
    """Spark's ``StructType.treeString(maxDepth)``; a depth of 0 or less means all levels.

    >>> from pyspark.sql.types import LongType, StringType
    >>> print(tree_string(StructType([StructField("m", MapType(StringType(), LongType()))])))
    root
     |-- m: map (nullable = true)
     |    |-- key: string
     |    |-- value: long (valueContainsNull = true)
    <BLANKLINE>
    """
    lines = ["root"]
    depth = max_depth if max_depth > 0 else 2**31 - 1
    for field in schema.fields:
        _tree_field(field, " |", lines, depth)
    return "".join(line + "\n" for line in lines)


def _type_name(data_type: DataType) -> str:
    if isinstance(data_type, ArrayType):
        return "array"
    if isinstance(data_type, MapType):
        return "map"
    if isinstance(data_type, StructType):
        return "struct"
    return str(data_type.jsonValue())


def _tree_field(field: StructField, prefix: str, lines: list[str], depth: int) -> None:
    if depth <= 0:
        return
    name = escape_meta_characters(field.name)
    lines.append(
        f"{prefix}-- {name}: {_type_name(field.dataType)} (nullable = {_bool(field.nullable)})"
    )
    _tree_children(field.dataType, prefix + "    |", lines, depth)


def _tree_children(data_type: DataType, prefix: str, lines: list[str], depth: int) -> None:
    depth -= 1
    if depth <= 0:
        return
    if isinstance(data_type, StructType):
        for field in data_type.fields:
            _tree_field(field, prefix, lines, depth)
    elif isinstance(data_type, ArrayType):
        element = data_type.elementType
        lines.append(
            f"{prefix}-- element: {_type_name(element)}"
            f" (containsNull = {_bool(data_type.containsNull)})"
        )
        _tree_children(element, prefix + "    |", lines, depth)
    elif isinstance(data_type, MapType):
        lines.append(f"{prefix}-- key: {_type_name(data_type.keyType)}")
        _tree_children(data_type.keyType, prefix + "    |", lines, depth)
        lines.append(
            f"{prefix}-- value: {_type_name(data_type.valueType)}"
            f" (valueContainsNull = {_bool(data_type.valueContainsNull)})"
        )
        _tree_children(data_type.valueType, prefix + "    |", lines, depth)


def _bool(value: bool) -> str:
    return "true" if value else "false"
