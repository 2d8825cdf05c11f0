"""Change queries: the signed change of a defining query between two versions of its
sources, derived operator by operator (seed 002).

A change query returns the query's columns and ``__dt_sign``: +1 for a row the query gains,
-1 for a row it loses (a changed row is both). By operator:

* a source table's change is its change feed between the two pinned versions;
* a SELECT block over inner/cross-joined inputs with filters, scalar projections and
  ``LATERAL VIEW explode`` is linear in each input, so its change is the telescoping sum
  ``Σ_i Q(new_1..new_{i-1}, Δ_i, old_{i+1}..old_n)`` with the sign carried through;
* UNION ALL distributes: the change of ``A UNION ALL B`` is ``ΔA UNION ALL ΔB``;
* a CTE is inlined where it is used, so each use is an input of its own;
* an outer join is linear in each input it never pads with NULLs (a preserved side, such
  as the left of a LEFT JOIN): when only such inputs changed, its change is that sum too;
* a keyed operator — GROUP BY, DISTINCT, window functions with PARTITION BY, and an outer
  join on equality keys whose padded side changed — is recomputed for the keys its
  inputs' changes touch: the rows of a key depend only on input rows of that key, so its
  change is ``Q(new inputs of those keys) - Q(old inputs of those keys)``. The touched keys
  are computed once into a relation, and both recomputes keep the rows whose keys are in
  it (``touched_by``: a null-safe EXISTS, which engines run as a semi join); no key is
  written into the SQL text, and there is no cap on how many.

A source's change feed is read where a statement reads it (``runnable``): a change query
holds a reference to the feed, and before a statement runs, a feed it reads once and no
earlier statement read is written into it as a subquery; a feed it reads more than once (a
self-join's terms, UNION ALL of one source) or that an earlier statement read is computed
once into a temporary view, which every later statement reads instead.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from sqlglot import exp

from dyntables.catalog import key_to_table, table_key
from dyntables.errors import CannotRefreshIncrementallyError
from dyntables.formats import TableFormat
from dyntables.planner.key_types import KeyTyping
from dyntables.planner.structure import (
    KEY,
    expand_stars,
    key_definitions,
    key_probe,
    keyed_join,
    output_names,
    pads_a_change,
    recompute_keys,
    select_inputs,
    select_shape,
)
from dyntables.sql.dialect import to_spark_sql

SIGN = "__dt_sign"
NET = "__dt_net"  # a row value's net number of copies added (netted)
# A reference to a source's change feed in a change query, until a statement reads it.
FEED = "__dt_feed_{}"
# The columns ``_held_with_summary`` computes a summary's aggregates in.
SUMMARY = "__dt_summary{}"

Statement = TypeVar("Statement", bound=exp.Expr)


def _read(view: str) -> exp.Expr:
    """A read of a change view, under a name that is the same each refresh (the view's
    own is random: it must not meet another refresh's in the session), so that a
    statement of the same shape has the same text (sparkshim keeps their translations)."""
    return exp.to_table(view).as_("__dt_changes")


def view_read(rows: exp.Query) -> str:
    """The temporary view that rows ``summarized`` (or ``materialize``) returned read."""
    source = rows.args["from_"].this
    assert isinstance(source, exp.Table)
    assert source.alias == "__dt_changes"
    return source.name


@dataclass(frozen=True)
class Versions:
    """Each source's version at the last refresh (old) and now (new)."""

    old: dict[str, int | None]
    new: dict[str, int | None]

    def changed(self, key: str) -> bool:
        return self.old.get(key) != self.new.get(key)

    def changed_keys(self) -> set[str]:
        return {key for key in {*self.old, *self.new} if self.changed(key)}


class Summarized(NamedTuple):
    """Rows computed into a temporary view (``ChangeDeriver.summarized``), and the values of
    the summary expressions over them, in order."""

    rows: exp.Query
    values: tuple[Any, ...]


@dataclass
class _Feed:
    """A source's change feed in a derivation: the query reading it, the view it was
    computed into (once a statement read it twice, or a second statement read it), and
    whether a statement has read it."""

    query: exp.Query
    view: str | None = None
    read: bool = False


# ---- the derivation ----


class ChangeDeriver:
    """Builds the signed change query of a query over pinned sources. Keyed operators
    collect their touched keys on ``session`` while the change is derived.

    With ``materialize_feeds`` a change query reads its sources' change feeds through
    references that only this deriver resolves: a statement built from one runs through
    ``materialize``, ``summarized`` or ``runnable``."""

    def __init__(
        self,
        session: Any,
        fmt: TableFormat,
        versions: Versions,
        columns_of: Callable[[str], list[str]],
        *,
        types_of: Callable[[str], list[str]] | None = None,
        materialize_feeds: bool = False,
        checkpoint_views: bool = False,
        netted_by: Mapping[str, list[exp.Expr]] | None = None,
    ) -> None:
        self.session = session
        self.fmt = fmt
        self.versions = versions
        self.columns_of = columns_of
        # The types an outer join's keys are compared in (key_types); without the sources'
        # types (``types_of``), each input's own.
        self.key_typing = (
            KeyTyping(lambda key: (columns_of(key), types_of(key))) if types_of else None
        )
        # Each source's change feed read by one statement at most (see table_change);
        # False: written into every change query that uses it.
        self.materialize_feeds = materialize_feeds
        # Whether ``materialize`` checkpoints the rows (``Engine.checkpoints_dataframes``).
        self.checkpoint_views = checkpoint_views
        # Source key -> what its change feed's rows are netted by (``cancelled_out``): the
        # columns the query reads of it. A source not in it is read as its feed is.
        self.netted_by = netted_by or {}
        self._feeds: dict[str, str] = {}  # source key -> the name its change queries use
        self._feed_named: dict[str, _Feed] = {}  # that name -> the feed
        self._views: list[str] = []  # every temporary view made, to drop at the end

    # ---- inputs at a version ----

    def at(self, node: exp.Expr, side: str) -> exp.Expr:
        """A copy of ``node`` (a table or subquery) reading every source at ``side``."""
        copy = node.copy()
        references = [copy] if isinstance(copy, exp.Table) else list(copy.find_all(exp.Table))
        for reference in references:
            key = table_key(reference)
            version = (self.versions.old if side == "old" else self.versions.new).get(key)
            if version is None:
                raise CannotRefreshIncrementallyError(f"{key} has no version to read at")
            pinned = self.fmt.pinned(reference, version)
            if reference is copy:
                return pinned
            reference.replace(pinned)
        return copy

    def _pinned_input(self, item: exp.Expr, side: str) -> exp.Expr:
        """An input of a SELECT block at ``side``, under the name the block uses for it."""
        pinned = self.at(item, side)
        if isinstance(pinned, exp.Table) and not pinned.alias:
            pinned.set("alias", exp.TableAlias(this=exp.to_identifier(item.alias_or_name)))
        return pinned

    # ---- change queries ----

    def change(self, node: exp.Expr) -> exp.Query | None:
        """The signed change of ``node`` (a query, table or subquery), None if it has none."""
        if isinstance(node, exp.Table):
            return self.table_change(node)
        if isinstance(node, exp.Subquery):
            return self.change(node.this)
        if isinstance(node, exp.Union):
            if node.args.get("distinct"):
                raise CannotRefreshIncrementallyError("UNION (distinct) is not incremental yet")
            sides = (node.left, node.right)
            changes = [self.change(side) for side in sides]
            if not any(changes):
                return None
            # A branch that did not change still types the union's columns, as Spark widens
            # them over every branch (a STRING beside a BIGINT makes STRINGs): its rows at
            # the new versions, none of them, take its place.
            parts = [
                change if change is not None else self._no_rows_of(side)
                for side, change in zip(sides, changes, strict=True)
            ]
            # A union's columns are named by its first branch; a change of the others alone
            # would carry theirs.
            names = output_names(node.left, self.columns_of)
            if names is not None:
                parts = [exp.select("*").from_(with_columns(part, names)) for part in parts]
            return union_all(parts)
        if isinstance(node, exp.Select):
            shape = select_shape(node)
            if shape == "linear" or (shape == "outer" and self.changes_linearly(node)):
                return self.linear_change(node)
            return self.keyed_change(node)
        raise CannotRefreshIncrementallyError(
            f"{type(node).__name__.upper()} is not incremental yet"
        )

    def _no_rows_of(self, branch: exp.Expr) -> exp.Query:
        """None of ``branch``'s rows (at the new versions), with a sign column: a change of
        no rows in the branch's column types."""
        pinned = self.at(exp.Subquery(this=branch.copy()), "new")
        assert isinstance(pinned, exp.Subquery)
        return (
            exp.select(exp.Star(), exp.alias_(exp.Literal.number(1), SIGN))
            .from_(aliased(pinned.this, "__dt_typed"))
            .where(exp.false())
        )

    def changes_linearly(self, select: exp.Select) -> bool:
        """Whether this refresh's change of ``select``, a block with an outer join, is
        linear: no input an outer join pads changed (``pads_a_change``), so the change of
        its preserved inputs is the telescoping sum, as for inner joins, and costs what
        changed; else it is recomputed by the keys the changes touch."""
        return not pads_a_change(select, self.versions.changed_keys())

    def table_change(self, table: exp.Table) -> exp.Query | None:
        if isinstance(table.this, exp.Anonymous):
            raise CannotRefreshIncrementallyError(
                f"the table function {table.this.name} is not incremental"
            )
        key = table_key(table)
        if not self.versions.changed(key):
            return None
        old, new = self.versions.old.get(key), self.versions.new.get(key)
        if old is None or new is None:
            raise CannotRefreshIncrementallyError(
                f"{key} has no version range to read changes from"
            )
        if key not in self._feeds:
            columns = self.columns_of(key)
            feed = self.fmt.changes(self.session, key_to_table(key), columns, old, new, SIGN)
            if key in self.netted_by:
                feed = cancelled_out(feed, columns, self.netted_by[key])
            if not self.materialize_feeds:
                return feed
            # Read by one statement at most: a change query may use it several times (the
            # terms of a self-join, UNION ALL) and statements after the first read it again.
            # Numbered, not random: a statement of the same shape has the same text each
            # refresh, so an engine that keeps translations (sparkshim) finds it.
            name = FEED.format(len(self._feed_named))
            self._feeds[key] = name
            self._feed_named[name] = _Feed(feed)
        return exp.select("*").from_(exp.to_table(self._feeds[key]))

    def runnable(self, statement: Statement, *, reads: bool = True) -> Statement:
        """A copy of ``statement`` ready to run: each change feed it references (see
        ``table_change``) written in as a subquery where this is the only read of it, else
        read from a temporary view, computed now if not yet (one statement). ``reads``
        False: the statement only reads a schema, not the feeds' rows."""
        statement = statement.copy()
        references = [
            table
            for table in statement.find_all(exp.Table)
            if not table.db and table.name in self._feed_named
        ]
        uses = Counter(table.name for table in references)
        for reference in references:
            name = reference.name
            feed = self._feed_named[name]
            if reads and feed.view is None and (feed.read or uses[name] > 1):
                feed.view, _ = self._computed(feed.query, [])
            feed.read = feed.read or reads
            alias = exp.TableAlias(this=exp.to_identifier(reference.alias or name))
            if feed.view is not None:
                reference.replace(exp.Table(this=exp.to_identifier(feed.view), alias=alias))
            else:
                reference.replace(exp.Subquery(this=feed.query.copy(), alias=alias))
        return statement

    def materialize(self, query: exp.Query) -> exp.Query:
        """``query`` as a temporary view of the session, dropped by ``drop_change_views``,
        computed once: the embedded engine's DataFrames hold their rows; on Spark
        (``checkpoint_views``) the rows are computed now and kept by the executors
        (``localCheckpoint``), instead of every statement that reads the view computing
        them again (a changelog scan each time)."""
        return self.summarized(query, []).rows

    def summarized(self, query: exp.Query, summary: Sequence[exp.Expr]) -> Summarized:
        """``materialize`` ``query``, with the values of ``summary`` (aggregates over its
        columns, unqualified) over its rows: on Spark computed by the job that computes
        the rows (``DataFrame.observe``), elsewhere by the statement that computes them
        (``_held_with_summary``)."""
        view, values = self._computed(self.runnable(query), summary)
        return Summarized(exp.select("*").from_(_read(view)), values)

    def _computed(
        self, query: exp.Query, summary: Sequence[exp.Expr]
    ) -> tuple[str, tuple[Any, ...]]:
        """The temporary view ``query`` (with no feed left to resolve) is computed into,
        and the values of ``summary`` over it."""
        view = f"__dt_changes_{uuid.uuid4().hex}"
        values: tuple[Any, ...] | None = ()
        if self.checkpoint_views:
            rows = self.session.sql(to_spark_sql(query))
            observed = None
            if summary:
                rows, observed = _observed(rows, summary)
            rows = rows.localCheckpoint(eager=True)
            if observed is not None:
                values = observed()
        elif summary:
            rows, values = self._held_with_summary(query, summary)
        else:
            rows = self.session.sql(to_spark_sql(query))
        rows.createOrReplaceTempView(view)
        self._views.append(view)
        if values is None:  # no row to read them from: the aggregates of no rows
            values = _aggregates_of_no_rows(summary)
        if values is None:
            query = exp.select(*[e.copy() for e in summary]).from_(_read(view))
            values = tuple(self.session.sql(to_spark_sql(query)).collect()[0])
        return view, values

    def _held_with_summary(
        self, query: exp.Query, summary: Sequence[exp.Expr]
    ) -> tuple[Any, tuple[Any, ...] | None]:
        """On an engine whose results hold their rows: ``query``'s rows, and the values of
        ``summary`` over them, from one statement (each aggregate over the whole result as
        a window, read from its first row, then dropped); None for the values when there
        is no row."""
        names = [SUMMARY.format(index) for index in range(len(summary))]
        windowed = [
            exp.alias_(exp.Window(this=aggregate.copy()), name, quoted=True)
            for aggregate, name in zip(summary, names, strict=True)
        ]
        statement = exp.select(exp.Star(), *windowed).from_(query.subquery("__dt_summarized"))
        computed = self.session.sql(to_spark_sql(statement)).toArrow()
        values = (
            tuple(computed.column(name)[0].as_py() for name in names) if computed.num_rows else None
        )
        return self.session.createDataFrame(computed.drop_columns(names)), values

    def drop_change_views(self) -> None:
        """Forget the change feeds read by this derivation (temporary views)."""
        for view in self._views:
            self.session.catalog.dropTempView(view)
        self._views.clear()
        self._feeds.clear()
        self._feed_named.clear()

    def linear_change(self, select: exp.Select) -> exp.Query | None:
        """The telescoping sum over the block's inputs. A star in the block's list is
        expanded first: it would also pass on the sign column of the changed input, which
        the term adds itself (Spark refuses the duplicate as ambiguous)."""
        expanded = expand_stars(select, self.columns_of)
        if expanded is None:  # its star would pass on the sign column of a changed input
            raise CannotRefreshIncrementallyError(
                "a * in the SELECT list whose columns the query's structure does not tell"
            )
        select = expanded
        inputs = select_inputs(select)
        terms: list[exp.Query] = []
        for index, changed in enumerate(inputs):
            delta = self.change(changed)
            if delta is None:
                continue
            term = select.copy()
            for position, item in enumerate(select_inputs(term)):
                if position == index:
                    item.replace(aliased(delta, item.alias_or_name))
                else:
                    item.replace(self._pinned_input(item, "new" if position < index else "old"))
            sign_column = exp.column(SIGN, table=inputs[index].alias_or_name)
            term.set("expressions", [*term.expressions, exp.alias_(sign_column, SIGN)])
            terms.append(term)
        return union_all(terms) if terms else None

    def keyed_change(self, select: exp.Select) -> exp.Query | None:
        """A keyed block's change: its rows of the touched keys at the new versions, less
        its rows of those keys at the old versions."""
        recompute = self.recompute(select)
        if recompute is None:
            return None
        return union_all(
            [
                self.recomputed(select, recompute, "new", sign=1),
                self.recomputed(select, recompute, "old", sign=-1),
            ]
        )

    def recompute(self, select: exp.Select) -> Recompute | None:
        """The keys a keyed block's (or an outer join's) input changes touch, and how its
        rows are restricted to them; None when no input changed."""
        if select_shape(select) == "outer":
            return self._join_recompute(select)
        keys = recompute_keys(select, self.columns_of)
        delta = self.change(key_probe(select, keys))
        if delta is None:
            return None
        touched = self._touched_keys([delta], len(keys))
        if touched is None:
            return None
        return Recompute(touched, block_keys=keys)

    def _join_recompute(self, select: exp.Select) -> Recompute | None:
        """The join keys the changes of the block's inputs (or of its joins' prefix) touch,
        and the inputs and rows restricted to them (``keyed_join``)."""
        plan = keyed_join(select, self.columns_of, self.key_typing)
        changes = [delta for delta in map(self.change, plan.probes) if delta is not None]
        count = len(plan.probes[0].expressions)  # each probe's __dt_key… columns
        touched = self._touched_keys(changes, count) if changes else None
        if touched is None:
            return None
        return Recompute(touched, block_keys=plan.row_keys, input_keys=plan.input_keys)

    def _touched_keys(self, changes: list[exp.Query], count: int) -> exp.Query | None:
        """The distinct ``__dt_key…`` values (``count`` of them) the ``changes`` hold, as a
        relation computed once (a view, read by both recomputes); None when there are
        none. No literal list and no cap: how many keys a change touches only matters
        through the cost rule (the change's size)."""
        names = [KEY.format(i) for i in range(count)]
        first, *others = [
            exp.select(*quoted_columns(names)).from_(aliased(change, "k")) for change in changes
        ]
        distinct: exp.Query = first.distinct()
        for other in others:
            distinct = exp.union(distinct, other, distinct=True)
        touched, (found,) = self.summarized(distinct, [exp.func("count", exp.Star())])
        return touched if found else None

    def recomputed(
        self, select: exp.Select, recompute: Recompute, side: str, *, sign: int | None = None
    ) -> exp.Select:
        """The block over its inputs at ``side``, restricted to the touched keys (in its
        WHERE, or on each input), each row signed ``sign`` (None: no sign column)."""
        term = select.copy()
        for position, item in enumerate(select_inputs(term)):
            pinned = self._pinned_input(item, side)
            keys = recompute.input_keys[position] if recompute.input_keys else None
            if keys is not None:
                pinned = restricted_input(pinned, keys, recompute.touched, item.alias_or_name)
            item.replace(pinned)
        if recompute.block_keys is not None:
            term = term.where(touched_by(recompute.block_keys, recompute.touched), copy=False)
        if sign is not None:
            signed = exp.alias_(exp.Literal.number(sign), SIGN)
            term.set("expressions", [*term.expressions, signed])
        return term


@dataclass(frozen=True)
class Recompute:
    """A keyed recompute: the touched keys (a relation of ``__dt_key…`` columns) and where
    they restrict the block: its rows, by the block's keys (``block_keys``: a GROUP BY,
    DISTINCT or windows), or each input's rows, by that input's keys (``input_keys``: an
    outer join)."""

    touched: exp.Query
    block_keys: list[exp.Expr] | None = None
    input_keys: list[list[exp.Expr] | None] | None = None


def restricted_input(
    pinned: exp.Expr, keys: list[exp.Expr], touched: exp.Query, alias: str
) -> exp.Expr:
    """An input (at a version) keeping the rows whose ``keys`` are touched. A derived
    table that computes each key as a column of its own rows (a GROUP BY key, a projected
    column) is restricted inside, before it groups: a GROUP BY over a whole source would
    otherwise be computed in full to keep a few of its groups."""
    inner = pinned.this if isinstance(pinned, exp.Subquery) else None
    if isinstance(inner, exp.Select):
        defining = key_definitions(inner, keys)
        if defining is not None:
            inner.where(touched_by(defining, touched), copy=False)
            return pinned
    rows = exp.select("*").from_(pinned).where(touched_by(keys, touched))
    return aliased(rows, alias)


# What an aggregate is over no rows, by its kind: a count is 0, the others NULL.
_COUNTS_OF_NO_ROWS = (exp.Count, exp.CountIf)
_NULL_OF_NO_ROWS = (exp.Sum, exp.Min, exp.Max, exp.Avg)


def _aggregates_of_no_rows(summary: Sequence[exp.Expr]) -> tuple[Any, ...] | None:
    """The values of ``summary``'s aggregates over no rows, known without running them
    (a refresh whose change nets out to nothing then runs no statement for them); None
    when one of them is of another kind."""
    values: list[Any] = []
    for aggregate in summary:
        if isinstance(aggregate, _COUNTS_OF_NO_ROWS):
            values.append(0)
        elif isinstance(aggregate, _NULL_OF_NO_ROWS):
            values.append(None)
        else:
            return None
    return tuple(values)


def _observed(rows: Any, summary: Sequence[exp.Expr]) -> tuple[Any, Callable[[], tuple[Any, ...]]]:
    """``rows`` (a Spark DataFrame) observing ``summary``, and the values once its rows are
    computed (``pyspark.sql.Observation``)."""
    # Imported here: only real Spark checkpoints, and importing dyntables must not import it.
    from pyspark.sql import Observation, functions

    observation = Observation()
    names = [f"_{index}" for index in range(len(summary))]
    columns = [
        functions.expr(to_spark_sql(e)).alias(n) for e, n in zip(summary, names, strict=True)
    ]
    observed = rows.observe(observation, *columns)

    def values() -> tuple[Any, ...]:
        got = observation.get
        return tuple(got[name] for name in names)

    return observed, values


def touched_by(keys: list[exp.Expr], touched: exp.Query) -> exp.Expr:
    """True for a row whose ``keys`` equal (null-safe: a NULL key is a key) one row of
    ``touched`` (columns ``__dt_key0``, …, in the keys' order)."""
    alias = "__dt_touched"  # a name no query of the user's has a column of: a column the
    # keys read unqualified resolves to the query's own (DuckDB would take a relation of
    # the same name for that name's row)
    equal = [
        exp.NullSafeEQ(
            this=exp.column(KEY.format(i), table=alias, quoted=True), expression=_operand(k)
        )
        for i, k in enumerate(keys)
    ]
    found = exp.select(exp.Literal.number(1)).from_(aliased(touched, alias)).where(exp.and_(*equal))
    return exp.Exists(this=found)


def _operand(expression: exp.Expr) -> exp.Expr:
    """A copy of ``expression`` to put beside an operator: parenthesized unless it is a
    column or a literal (``k <=> v IS NULL`` would read as ``(k <=> v) IS NULL``)."""
    if isinstance(expression, (exp.Column, exp.Literal, exp.Paren)):
        return expression.copy()
    return exp.paren(expression.copy(), copy=False)


def union_all(parts: list[exp.Query]) -> exp.Query:
    combined = parts[0]
    for part in parts[1:]:
        combined = exp.union(combined, part, distinct=False)
    return combined


def aliased(query: exp.Query, alias: str) -> exp.Subquery:
    return exp.Subquery(this=query.copy(), alias=exp.TableAlias(this=exp.to_identifier(alias)))


def quoted_columns(names: list[str], table: str | None = None) -> list[exp.Expr]:
    """The columns ``names`` (of ``table``, when given), quoted."""
    return [exp.column(name, table=table, quoted=True) for name in names]


def rows_of_keys(
    table: exp.Table, names: list[str], keys: exp.Query, key_names: list[str]
) -> exp.Select:
    """The rows (columns ``names``, of alias ``t``) of ``table`` whose ``key_names`` equal
    (null-safe) a row of ``keys`` (those columns): a semi join by the keys, which the
    embedded engine answers through an index of them instead of reading the table (a
    table of half a million rows or more: a smaller one is read)."""
    return (
        exp.select(*quoted_columns(names, "t"))
        .from_(exp.alias_(table.copy(), "t", table=True))
        .join(aliased(keys, "k"), on=null_safe_equal(key_names, "t", "k"), join_type="semi")
    )


def null_safe_equal(names: list[str], left: str, right: str) -> exp.Expr:
    """Every column of ``names`` equal in ``left`` and ``right``, NULL equal to NULL."""
    return exp.and_(
        *[
            exp.NullSafeEQ(
                this=exp.column(name, table=left, quoted=True),
                expression=exp.column(name, table=right, quoted=True),
            )
            for name in names
        ]
    )


def with_columns(change: exp.Query, names: list[str]) -> exp.Subquery:
    """The change query as ``d(<names>, __dt_sign)``: its columns named by position, so
    unaliased expressions of the defining query need no name of their own."""
    columns = [exp.to_identifier(name, quoted=True) for name in [*names, SIGN]]
    return exp.Subquery(
        this=change, alias=exp.TableAlias(this=exp.to_identifier("d"), columns=columns)
    )


def netting_partition(
    columns: Sequence[str], types: Sequence[str], read: frozenset[str] | None
) -> list[exp.Expr] | None:
    """What a source's change feed is netted by (``cancelled_out``): the source's columns
    (``columns``, of ``types``) whose names the query may read (``read``: lowercased, see
    ``planner.read_column_names``). None where netting would not be exact or would drop
    nothing: the query reads columns it does not name, or all of them; or a column it reads
    holds a map (not comparable) or a floating-point value inside an array or a struct.
    A floating-point column is compared as its text, where 0.0 and -0.0 differ."""
    if read is None:
        return None
    partition: list[exp.Expr] = []
    for name, simple_type in zip(columns, types, strict=True):
        if name.lower() not in read:
            continue
        if "map<" in simple_type:
            return None
        column = exp.column(name, quoted=True)
        if simple_type in ("float", "double"):
            partition.append(exp.cast(column, exp.DataType.build("string")))
        elif "float" in simple_type or "double" in simple_type:
            return None
        else:
            partition.append(column)
    return partition if len(partition) < len(columns) else None


def cancelled_out(feed: exp.Query, columns: list[str], partition: list[exp.Expr]) -> exp.Select:
    """The rows of a source's signed change ``feed`` (``columns`` and the sign) less the
    changes that cancel on ``partition`` (the columns the query reads): the rows of each
    value of those columns whose signs sum to zero, such as an update's two images when
    it set only columns the query does not read. What is left sums to the same signed
    multiset of the columns read, so every change derived from it is the same."""
    net = exp.Window(this=exp.func("sum", exp.column(SIGN)), partition_by=partition)
    with_net = exp.select("*", exp.alias_(net, NET)).from_(aliased(feed, "f"))
    kept = exp.NEQ(this=exp.column(NET), expression=exp.Literal.number(0))
    return (
        exp.select(*quoted_columns(columns), exp.column(SIGN))
        .from_(aliased(with_net, "f"))
        .where(kept)
    )


def netted(renamed: exp.Subquery, names: list[str], active: exp.Expr | None = None) -> exp.Query:
    """Each row value of a change (``with_columns``) with its net number of copies added
    (``NET``, below zero: removed), values whose changes cancel left out, and frozen
    values too (``active``: a value is frozen or active whatever its number of copies)."""
    net_sum = exp.func("sum", exp.column(SIGN))
    net = exp.select(*quoted_columns(names), exp.alias_(net_sum, NET)).from_(renamed)
    if active is not None:
        net = net.where(active.copy(), copy=False)
    # copy=False: ``net`` is built here, and copying it would copy the whole change query.
    return net.group_by(*quoted_columns(names), copy=False).having(
        exp.NEQ(this=net_sum.copy(), expression=exp.Literal.number(0)), copy=False
    )
