"""Turn an ANTLR parse tree into typed statements (``dyntables.statements``).

This is the only module that reads ANTLR contexts. Embedded SQL is sliced out of the
original text by token offsets (``StatementBuilder.text_of``), never rebuilt from tokens,
so it keeps the user's spelling. Rules that need no catalog (required clauses, clauses that
exclude each other, literal formats) are checked here, each raising a located
``DynamicTableSyntaxError`` that names the rule and the way out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NoReturn

from antlr4 import ParserRuleContext

from dyntables.errors import UnsupportedStatementError, line_and_column, syntax_error_at
from dyntables.parser._generated.DynamicTablesLexer import DynamicTablesLexer as Lexer
from dyntables.parser._generated.DynamicTablesParser import DynamicTablesParser as Parser
from dyntables.parser.literals import (
    parse_target_lag,
    split_dotted_name,
    unquote_identifier,
    unquote_string,
)
from dyntables.statements import (
    AlterAction,
    AlterDynamicTable,
    AlterValue,
    BackfillFrom,
    ColumnDef,
    CreateDynamicTable,
    CreateMaterializedView,
    DescribeDynamicTable,
    DropDynamicTable,
    DropMaterializedView,
    DynamicTableStatement,
    ExplainCreateDynamicTable,
    ExplainDynamicTable,
    Initialize,
    RefreshMaterializedView,
    RefreshMode,
    ShowDynamicTables,
    Span,
    TableName,
    TargetLag,
    TimePoint,
    TimePointBy,
    TimePointKind,
)

# ANTLR's Python runtime is untyped: contexts and tokens are plain objects to mypy.
Context = Any
Token = Any

_BACKFILL_POINTS = frozenset(
    {TimePointBy.TIMESTAMP, TimePointBy.OFFSET, TimePointBy.STATEMENT, TimePointBy.VERSION}
)
_START_AT_POINTS = frozenset(
    {
        TimePointBy.TIMESTAMP,
        TimePointBy.OFFSET,
        TimePointBy.STATEMENT,
        TimePointBy.STREAM,
        TimePointBy.VERSION,
    }
)
_INTEGER = re.compile(r"[+-]?\s*\d+\Z")
# How a CreateDynamicTable field is spelled as a clause, for messages.
_CLAUSE_NAMES = {
    "target_lag": "TARGET_LAG",
    "warehouse": "WAREHOUSE",
    "refresh_mode": "REFRESH_MODE",
    "initialize": "INITIALIZE",
    "frozen_where": "FROZEN WHERE",
    "backfill_from": "BACKFILL FROM",
    "start_at": "START AT",
    "cluster_by": "CLUSTER BY",
    "comment": "COMMENT",
    "data_retention_days": "DATA_RETENTION_TIME_IN_DAYS",
    "partitioned_by": "PARTITIONED BY",
    "properties": "TBLPROPERTIES",
    "copy_grants": "COPY GRANTS",
}


class StatementBuilder:
    """Builds one statement from the tree of the piece ``text[offset:...]``.

    ``text`` is the whole text given to ``parse``, so spans, slices and error
    positions are all relative to it.
    """

    def __init__(self, text: str, offset: int) -> None:
        self.text = text
        self.offset = offset

    # ---- positions, slices, errors ----

    def start_of(self, node: Context | Token) -> int:
        """Absolute offset of the first character of a context or token."""
        token = node.start if isinstance(node, ParserRuleContext) else node
        return self.offset + int(token.start)

    def stop_of(self, ctx: Context) -> int:
        """Absolute offset just past the last character of a context."""
        if ctx.stop is None or ctx.stop.tokenIndex < ctx.start.tokenIndex:
            return self.start_of(ctx)  # an empty rule: it ends where it starts
        return self.offset + int(ctx.stop.stop) + 1

    def text_of(self, ctx: Context) -> str:
        """The original text a context covers, exactly as written."""
        return self.text[self.start_of(ctx) : self.stop_of(ctx)]

    def span(self, node: Context | Token) -> Span:
        start = self.start_of(node)
        is_context = isinstance(node, ParserRuleContext)
        stop = self.stop_of(node) if is_context else start + len(node.text)
        return Span(start, stop, *line_and_column(self.text, start))

    def fail(self, reason: str, node: Context | Token) -> NoReturn:
        raise syntax_error_at(reason, self.text, self.start_of(node))

    # ---- statements ----

    def build(self, tree: Context) -> DynamicTableStatement:
        statement = tree.statement()
        builder = _STATEMENT_BUILDERS[type(statement)]
        return builder(self, statement)

    def create_dynamic_table(self, ctx: Context) -> CreateDynamicTable:
        return self.create_statement(ctx.createDynamicTableStatement())

    def create_statement(self, ctx: Context) -> CreateDynamicTable:
        clauses = self.collect_properties(ctx.dynamicTableProperty())
        body = ctx.dynamicTableBody()
        columns = self.column_list(ctx.columnList())
        query = refresh_using = None
        if isinstance(body, Parser.QueryBodyContext):
            query = self.text_of(body.query())
        else:
            refresh_using = self.refresh_using_body(body)
        create = CreateDynamicTable(
            name=self.table_name(ctx.multipartIdentifier()),
            target_lag=clauses.pop("target_lag", None) or self.missing_target_lag(body),
            query=query,
            refresh_using=refresh_using,
            columns=columns,
            or_replace=ctx.REPLACE() is not None,
            if_not_exists=ctx.EXISTS() is not None,
            transient=ctx.TRANSIENT() is not None,
            span=self.span(ctx),
            **clauses,
        )
        if create.or_replace and create.if_not_exists:
            self.fail("OR REPLACE and IF NOT EXISTS cannot be combined: use one of them", ctx)
        self.check_create_rules(create, ctx)
        return create

    def missing_target_lag(self, body: Context) -> NoReturn:
        self.fail(
            "TARGET_LAG is required: add TARGET_LAG = '<n> {seconds|minutes|hours|days}'"
            " or TARGET_LAG = DOWNSTREAM before the query",
            body,
        )

    def check_create_rules(self, create: CreateDynamicTable, ctx: Context) -> None:
        """Rules between clauses that the grammar alone does not express."""
        body = ctx.dynamicTableBody()
        mode = create.refresh_mode
        if create.refresh_using is None:
            if mode is RefreshMode.CUSTOM_INCREMENTAL:
                self.fail(
                    "REFRESH_MODE = CUSTOM_INCREMENTAL needs a REFRESH USING ( ... ) body,"
                    " not AS <query>",
                    body,
                )
            if create.start_at is not None:
                self.fail(
                    "START AT applies only to dynamic tables defined with REFRESH USING:"
                    " remove it or use REFRESH USING ( ... )",
                    self.property_node(ctx, Parser.StartAtPropertyContext),
                )
            return
        if mode in (RefreshMode.FULL, RefreshMode.INCREMENTAL):
            self.fail(
                f"REFRESH_MODE = {mode.value} cannot be combined with REFRESH USING:"
                " use REFRESH_MODE = AUTO or CUSTOM_INCREMENTAL",
                self.property_node(ctx, Parser.RefreshModePropertyContext),
            )
        if create.columns is None:
            self.fail(
                "REFRESH USING needs an explicit column list: declare the columns"
                " (name type, ...) after the table name",
                body,
            )
        for column, column_ctx in zip(
            create.columns, ctx.columnList().columnDefinition(), strict=True
        ):
            if column.type_sql is None:
                self.fail(
                    f"column {column.name} needs a type: REFRESH USING tables declare their schema",
                    column_ctx,
                )
        if create.frozen_where is not None:
            self.fail(
                "FROZEN WHERE (IMMUTABLE WHERE) cannot be combined with REFRESH USING",
                self.property_node(ctx, Parser.FrozenWherePropertyContext),
            )

    @staticmethod
    def property_node(ctx: Context, kind: type) -> Context:
        return next(prop for prop in ctx.dynamicTableProperty() if isinstance(prop, kind))

    def refresh_using_body(self, body: Context) -> str:
        """The DML statement inside ``REFRESH USING ( ... )``, checked to be exactly one
        INSERT or MERGE statement."""
        tokens = body.balancedTokens().balancedToken()
        if not tokens:
            self.fail(
                "REFRESH USING needs a statement: MERGE INTO SELF ... or INSERT INTO SELF ...",
                body.RIGHT_PAREN().symbol,
            )
        first = tokens[0].start
        if first.type not in (Lexer.INSERT, Lexer.MERGE):
            self.fail(
                "REFRESH USING takes one MERGE INTO SELF or INSERT INTO SELF statement",
                first,
            )
        semicolons = [t for t in tokens if t.start.type == Lexer.SEMICOLON]
        if semicolons and semicolons[0] is not tokens[-1]:
            self.fail(
                "REFRESH USING takes exactly one DML statement (no multi-statement"
                " transactions): split the work into several dynamic tables",
                semicolons[0],
            )
        if semicolons:  # one trailing ';' inside the parentheses is harmless
            return self.text[self.start_of(tokens[0]) : self.start_of(semicolons[0])].rstrip()
        return self.text_of(body.balancedTokens())

    def collect_properties(self, properties: list[Context]) -> dict[str, Any]:
        """Keyword arguments for ``CreateDynamicTable`` from the property clauses,
        rejecting a clause given twice."""
        clauses: dict[str, Any] = {}
        for prop in properties:
            field_name, value = self.dynamic_table_property(prop)
            if field_name in clauses:
                self.fail(f"{_CLAUSE_NAMES[field_name]} is given twice: keep one", prop)
            clauses[field_name] = value
        return clauses

    def dynamic_table_property(self, prop: Context) -> tuple[str, Any]:
        """The ``CreateDynamicTable`` field a property clause sets, and its value."""
        if isinstance(prop, Parser.TargetLagPropertyContext):
            return "target_lag", self.target_lag(prop.targetLagValue())
        if isinstance(prop, Parser.WarehousePropertyContext):
            return "warehouse", self.warehouse_name(prop.warehouseName())
        if isinstance(prop, Parser.RefreshModePropertyContext):
            return "refresh_mode", RefreshMode(prop.refreshModeValue().getText().upper())
        if isinstance(prop, Parser.InitializePropertyContext):
            return "initialize", Initialize(prop.initializeValue().getText().upper())
        if isinstance(prop, Parser.FrozenWherePropertyContext):
            return "frozen_where", self.predicate(prop.balancedTokens(), prop)
        if isinstance(prop, Parser.BackfillFromPropertyContext):
            return "backfill_from", self.backfill_from(prop)
        if isinstance(prop, Parser.StartAtPropertyContext):
            point = self.time_point(TimePointKind.AT, prop.timePointSpec(), _START_AT_POINTS)
            return "start_at", point
        if isinstance(prop, Parser.ClusterByPropertyContext):
            return "cluster_by", self.expression_list(prop.expressionList())
        if isinstance(prop, Parser.CommentPropertyContext):
            return "comment", unquote_string(prop.STRING().getText())
        if isinstance(prop, Parser.DataRetentionPropertyContext):
            return "data_retention_days", int(prop.INTEGER_VALUE().getText())
        if isinstance(prop, Parser.PartitionedByPropertyContext):
            return "partitioned_by", self.expression_list(prop.expressionList())
        if isinstance(prop, Parser.TblPropertiesPropertyContext):
            return "properties", self.table_properties(prop.tableProperty())
        if isinstance(prop, Parser.CopyGrantsPropertyContext):
            return "copy_grants", True
        raise AssertionError(f"unhandled property {type(prop).__name__}")

    def alter_dynamic_table(self, ctx: Context) -> AlterDynamicTable:
        action, value = self.alter_action(ctx.alterAction())
        return AlterDynamicTable(
            name=self.table_name(ctx.multipartIdentifier()),
            action=action,
            value=value,
            if_exists=ctx.EXISTS() is not None,
            span=self.span(ctx),
        )

    def alter_action(self, ctx: Context) -> tuple[AlterAction, AlterValue]:
        if isinstance(ctx, Parser.SuspendActionContext):
            return AlterAction.SUSPEND, None
        if isinstance(ctx, Parser.ResumeActionContext):
            return AlterAction.RESUME, None
        if isinstance(ctx, Parser.RefreshActionContext):
            return AlterAction.REFRESH, None
        if isinstance(ctx, Parser.SetTargetLagActionContext):
            return AlterAction.SET_TARGET_LAG, self.target_lag(ctx.targetLagValue())
        if isinstance(ctx, Parser.SetWarehouseActionContext):
            return AlterAction.SET_WAREHOUSE, self.warehouse_name(ctx.warehouseName())
        if isinstance(ctx, Parser.SetRefreshModeActionContext):
            mode = RefreshMode(ctx.refreshModeValue().getText().upper())
            return AlterAction.SET_REFRESH_MODE, mode
        if isinstance(ctx, Parser.SetFrozenWhereActionContext):
            return AlterAction.SET_FROZEN_WHERE, self.predicate(ctx.balancedTokens(), ctx)
        if isinstance(ctx, Parser.UnsetFrozenWhereActionContext):
            return AlterAction.UNSET_FROZEN_WHERE, None
        if isinstance(ctx, Parser.RenameActionContext):
            return AlterAction.RENAME_TO, self.table_name(ctx.multipartIdentifier())
        if isinstance(ctx, Parser.SetCommentActionContext):
            return AlterAction.SET_COMMENT, unquote_string(ctx.STRING().getText())
        if isinstance(ctx, Parser.SetCreateOnlyActionContext):
            token = ctx.START() or ctx.BACKFILL()
            clause = "START AT" if ctx.START() is not None else "BACKFILL FROM"
            self.fail(
                f"{clause} can only be set when a dynamic table is created, not by ALTER:"
                f" recreate it with CREATE OR REPLACE DYNAMIC TABLE … {clause} …",
                token.symbol,
            )
        raise AssertionError(f"unhandled ALTER action {type(ctx).__name__}")

    def drop_dynamic_table(self, ctx: Context) -> DropDynamicTable:
        name = self.table_name(ctx.multipartIdentifier())
        return DropDynamicTable(name, if_exists=ctx.EXISTS() is not None, span=self.span(ctx))

    def show_dynamic_tables(self, ctx: Context) -> ShowDynamicTables:
        pattern = ctx.pattern
        return ShowDynamicTables(
            like=None if pattern is None else unquote_string(pattern.text),
            in_schema=None if ctx.schema is None else self.table_name(ctx.schema),
            in_account=ctx.ACCOUNT() is not None,
            full=ctx.FULL() is not None,
            span=self.span(ctx),
        )

    def describe_dynamic_table(self, ctx: Context) -> DescribeDynamicTable:
        return DescribeDynamicTable(self.table_name(ctx.multipartIdentifier()), self.span(ctx))

    def explain_dynamic_table(self, ctx: Context) -> ExplainDynamicTable:
        return ExplainDynamicTable(self.table_name(ctx.multipartIdentifier()), self.span(ctx))

    def explain_create_dynamic_table(self, ctx: Context) -> ExplainCreateDynamicTable:
        create = self.create_statement(ctx.createDynamicTableStatement())
        return ExplainCreateDynamicTable(create, self.span(ctx))

    def create_or_alter_dynamic_table(self, ctx: Context) -> NoReturn:
        raise syntax_error_at(
            "CREATE OR ALTER is not supported yet: use CREATE OR REPLACE, or ALTER DYNAMIC"
            " TABLE to change a single property",
            self.text,
            self.start_of(ctx),
            UnsupportedStatementError,
        )

    def create_materialized_view(self, ctx: Context) -> CreateMaterializedView:
        comment = None
        properties: tuple[tuple[str, str], ...] = ()
        seen: set[type] = set()
        for prop in ctx.materializedViewProperty():
            if type(prop) in seen:
                self.fail(f"{prop.start.text.upper()} is given twice: keep one", prop)
            seen.add(type(prop))
            if isinstance(prop, Parser.MvCommentPropertyContext):
                comment = unquote_string(prop.STRING().getText())
            else:
                properties = self.table_properties(prop.tableProperty())
        create = CreateMaterializedView(
            name=self.table_name(ctx.multipartIdentifier()),
            query=self.text_of(ctx.query()),
            or_replace=ctx.REPLACE() is not None,
            if_not_exists=ctx.EXISTS() is not None,
            columns=self.column_list(ctx.columnList()),
            comment=comment,
            properties=properties,
            span=self.span(ctx),
        )
        if create.or_replace and create.if_not_exists:
            self.fail("OR REPLACE and IF NOT EXISTS cannot be combined: use one of them", ctx)
        return create

    def refresh_materialized_view(self, ctx: Context) -> RefreshMaterializedView:
        name = self.table_name(ctx.multipartIdentifier())
        return RefreshMaterializedView(name, self.span(ctx))

    def call_refresh_materialized_view(self, ctx: Context) -> RefreshMaterializedView:
        """BigQuery's ``CALL BQ.REFRESH_MATERIALIZED_VIEW('project.dataset.view')``."""
        procedure = self.table_name(ctx.procedure)
        if [part.upper() for part in procedure.parts] != ["BQ", "REFRESH_MATERIALIZED_VIEW"]:
            self.fail("only CALL BQ.REFRESH_MATERIALIZED_VIEW('<view>') is supported", ctx)
        quoted_name = unquote_string(ctx.viewName.text)
        parts = split_dotted_name(quoted_name)
        if parts is None:
            self.fail(f"'{quoted_name}' is not a view name", ctx.viewName)
        return RefreshMaterializedView(TableName(parts, self.span(ctx.viewName)), self.span(ctx))

    def drop_materialized_view(self, ctx: Context) -> DropMaterializedView:
        name = self.table_name(ctx.multipartIdentifier())
        return DropMaterializedView(name, if_exists=ctx.EXISTS() is not None, span=self.span(ctx))

    # ---- clauses ----

    def table_name(self, ctx: Context) -> TableName:
        parts = tuple(unquote_identifier(part.getText()) for part in ctx.identifier())
        return TableName(parts, self.span(ctx))

    def target_lag(self, ctx: Context) -> TargetLag:
        if ctx.DOWNSTREAM() is not None:
            return TargetLag(seconds=None, downstream=True, span=self.span(ctx))
        literal = ctx.STRING().getText()
        try:
            seconds = parse_target_lag(unquote_string(literal))
        except ValueError as problem:
            self.fail(f"invalid TARGET_LAG {literal}: {problem}", ctx)
        return TargetLag(seconds=seconds, downstream=False, span=self.span(ctx))

    def warehouse_name(self, ctx: Context) -> str:
        if ctx.STRING() is not None:
            return unquote_string(ctx.STRING().getText())
        return unquote_identifier(ctx.getText())

    def predicate(self, tokens: Context, clause: Context) -> str:
        """A parenthesized predicate's text without the outer parentheses."""
        text = self.text_of(tokens)
        if not text.strip():
            self.fail("FROZEN WHERE needs a predicate inside the parentheses", clause)
        return text

    def backfill_from(self, ctx: Context) -> BackfillFrom:
        point_ctx = ctx.timePoint()
        point = None
        if point_ctx is not None:
            kind = TimePointKind(point_ctx.getChild(0).getText().upper())
            point = self.time_point(kind, point_ctx.timePointSpec(), _BACKFILL_POINTS)
        return BackfillFrom(self.table_name(ctx.multipartIdentifier()), point, self.span(ctx))

    def time_point(
        self, kind: TimePointKind, spec: Context, allowed: frozenset[TimePointBy]
    ) -> TimePoint:
        by = TimePointBy(spec.timePointBy().getText().upper())
        if by not in allowed:
            names = ", ".join(sorted(b.value for b in allowed))
            self.fail(f"{by.value} => is not allowed here; use one of {names}", spec)
        expression = spec.timePointExpression()
        expr_sql = self.text_of(expression)
        if by is TimePointBy.OFFSET and _INTEGER.match(expr_sql) and int(expr_sql) >= 0:
            self.fail("OFFSET must be negative: the number of seconds before now", expression)
        if by is TimePointBy.VERSION and not (_INTEGER.match(expr_sql) and int(expr_sql) >= 0):
            self.fail("VERSION must be a table version: a non-negative integer", expression)
        return TimePoint(kind, by, expr_sql, self.span(spec))

    def expression_list(self, ctx: Context) -> tuple[str, ...]:
        return tuple(self.text_of(expression) for expression in ctx.expression())

    def column_list(self, ctx: Context | None) -> tuple[ColumnDef, ...] | None:
        if ctx is None:
            return None
        columns = tuple(self.column(column) for column in ctx.columnDefinition())
        seen: set[str] = set()
        for column, column_ctx in zip(columns, ctx.columnDefinition(), strict=True):
            if column.name.lower() in seen:  # Spark's column names are case-insensitive
                self.fail(f"column {column.name} is declared twice", column_ctx)
            seen.add(column.name.lower())
        return columns

    def column(self, ctx: Context) -> ColumnDef:
        data_type = ctx.dataType()
        comment = ctx.STRING()
        return ColumnDef(
            name=unquote_identifier(ctx.identifier().getText()),
            type_sql=None if data_type is None else self.text_of(data_type),
            comment=None if comment is None else unquote_string(comment.getText()),
            not_null=ctx.NOT() is not None,
            span=self.span(ctx),
        )

    def table_properties(self, properties: list[Context]) -> tuple[tuple[str, str], ...]:
        pairs: dict[str, str] = {}
        for prop in properties:
            key_ctx = prop.key
            if key_ctx.STRING() is not None:
                key = unquote_string(key_ctx.STRING().getText())
            else:
                key = ".".join(unquote_identifier(p.getText()) for p in key_ctx.identifier())
            if prop.value is None:
                self.fail(f"table property '{key}' needs a value: '{key}' = '<value>'", prop)
            if key in pairs:
                self.fail(f"table property '{key}' is given twice", prop)
            pairs[key] = self.property_value(prop.value)
        return tuple(pairs.items())

    @staticmethod
    def property_value(ctx: Context) -> str:
        """A TBLPROPERTIES value as Spark stores it: strings unquoted, booleans in lower
        case, numbers as written."""
        text = str(ctx.getText())
        if ctx.STRING() is not None:
            return unquote_string(text)
        return text.lower() if text.lower() in ("true", "false") else text


_STATEMENT_BUILDERS: dict[type, Callable[[StatementBuilder, Context], DynamicTableStatement]] = {
    Parser.CreateDynamicTableContext: StatementBuilder.create_dynamic_table,
    Parser.CreateOrAlterDynamicTableContext: StatementBuilder.create_or_alter_dynamic_table,
    Parser.AlterDynamicTableContext: StatementBuilder.alter_dynamic_table,
    Parser.DropDynamicTableContext: StatementBuilder.drop_dynamic_table,
    Parser.ShowDynamicTablesContext: StatementBuilder.show_dynamic_tables,
    Parser.DescribeDynamicTableContext: StatementBuilder.describe_dynamic_table,
    Parser.ExplainDynamicTableContext: StatementBuilder.explain_dynamic_table,
    Parser.ExplainCreateDynamicTableContext: StatementBuilder.explain_create_dynamic_table,
    Parser.CreateMaterializedViewContext: StatementBuilder.create_materialized_view,
    Parser.RefreshMaterializedViewContext: StatementBuilder.refresh_materialized_view,
    Parser.CallRefreshMaterializedViewContext: StatementBuilder.call_refresh_materialized_view,
    Parser.DropMaterializedViewContext: StatementBuilder.drop_materialized_view,
}
