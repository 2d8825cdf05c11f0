"""Column names as Spark treats them: a table keeps each name as it was written
(``MyId``), and a statement names a column in any case (``myid``, ``MYID``), as Spark
does with ``spark.sql.caseSensitive`` off, its default. Two columns of one table may not
differ only in case."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sparkshim.errors import AnalysisException


def resolve(name: str, columns: Sequence[str]) -> str | None:
    """The column of ``columns`` that ``name`` names (in any case), or None."""
    wanted = name.lower()
    return next((column for column in columns if column.lower() == wanted), None)


def require(name: str, columns: Sequence[str]) -> str:
    """The column of ``columns`` that ``name`` names, or Spark's UNRESOLVED_COLUMN with
    the columns there are."""
    column = resolve(name, columns)
    if column is None:
        suggestion = ", ".join(f"`{candidate}`" for candidate in columns)
        raise AnalysisException(
            message=f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with"
            f" name `{name}` cannot be resolved. Did you mean one of the following?"
            f" [{suggestion}]."
        )
    return column


def check_unique(names: Sequence[str]) -> None:
    """Spark's COLUMN_ALREADY_EXISTS where two of ``names`` are one name in another case
    (a table's columns, a column list)."""
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise AnalysisException(
                message=f"[COLUMN_ALREADY_EXISTS] The column `{name.lower()}` already exists. "
                "Consider to choose another name or rename the existing column."
            )
        seen.add(name.lower())


# ---- the fields of STRUCT columns, named in any case ----

# A relation's columns in order: each name, and its Spark type (``simpleString``) where
# known here.
Columns = list[tuple[str, str | None]]


def spell_struct_fields(tree: exp.Expr, schemas: dict[str, dict[str, str]]) -> None:
    """Write, in place, each access to a field of a STRUCT in a grouped SELECT with the
    struct's own spelling of the field.

    Spark names a field in any case (``s.Aa`` is the field ``aa``) and reads
    ``SELECT s.aa, count(*) FROM t GROUP BY s.Aa`` as grouped by the one expression it
    selects. DuckDB finds a field in any case too, but compares the SELECT list, HAVING and
    ORDER BY with the GROUP BY keys as the fields are written, and refuses ``s.aa`` as not
    grouped. (Columns need nothing: DuckDB binds their names before comparing.) An
    unaliased column of the SELECT list whose last field is respelled is aliased by its
    name as written, Spark's name for it. The columns of the relations read are known
    from ``schemas`` (by registered name) and the SELECTs of derived tables and CTEs; a
    field of a column not known so is left as written."""
    relations = _Relations(tree, schemas)
    for select in list(tree.find_all(exp.Select)):
        if select.args.get("group") is None:
            continue
        sources = relations.sources(select)
        written: dict[int, str] = {}  # id of a respelled identifier -> its name as written
        for column in list(select.find_all(exp.Column)):
            if column.is_star or column.find_ancestor(exp.Select) is not select:
                continue
            _, fields = _resolve(_field_path(column), sources)
            for identifier, own in fields:
                if identifier.name != own:
                    written.setdefault(id(identifier), identifier.name)
                    identifier.set("this", own)
        for item in list(select.expressions):
            if isinstance(item, exp.Column) and id(item.this) in written:
                alias = exp.Alias(alias=exp.to_identifier(written[id(item.this)], quoted=True))
                item.replace(alias)
                alias.set("this", item)


def star_widths(query: exp.Expr, schemas: dict[str, dict[str, str]]) -> list[int | None]:
    """How many columns each ``*`` (or ``t.*``) of the SELECT that names ``query``'s
    columns gives, where the relations' columns are known here (see
    :func:`spell_struct_fields`)."""
    relations = _Relations(query, schemas)
    select = query
    while isinstance(select, exp.SetOperation | exp.Subquery):
        select = select.this
    if not isinstance(select, exp.Select):
        return []
    sources = relations.sources(select)
    widths: list[int | None] = []
    for item in select.expressions:
        if item.is_star:
            columns = relations.star_columns(select, item, sources)
            widths.append(None if columns is None else len(columns))
    return widths


def _field_path(column: exp.Column) -> list[exp.Identifier]:
    """The identifiers of ``column`` (``t.s.a``) and of the field accesses on it
    (``.b.c``, where sqlglot reads more parts than a column has as dots), in order."""
    parts = [part for part in column.parts if isinstance(part, exp.Identifier)]
    if len(parts) != len(column.parts):
        return []  # a part that is no name (sqlglot's reading of a long path)
    node: exp.Expr = column
    while isinstance(node.parent, exp.Dot) and node.parent.this is node:
        node = node.parent
        if not isinstance(node.expression, exp.Identifier):
            break
        parts.append(node.expression)
    return parts


def _resolve(
    parts: list[exp.Identifier], sources: list[tuple[str, Columns | None]]
) -> tuple[str | None, list[tuple[exp.Identifier, str]]]:
    """The Spark type of the column or field ``parts`` name among ``sources`` (each
    relation's qualifier and columns), as Spark resolves it (``q.c`` a column ``c`` of the
    relation ``q`` where it has one, else the field ``c`` of a column ``q``), and the
    field identifiers with their structs' spellings; (None, the fields found) where a part
    is not found, or is ambiguous."""
    names = [part.name.lower() for part in parts]
    found: tuple[str | None, int] | None = None
    if len(parts) >= 2:
        for qualifier, columns in sources:
            if qualifier.lower() == names[0] and columns is not None:
                column_type = _column(columns, names[1])
                if column_type is not None:
                    found = (column_type[1], 2)
                    break
    if found is None and parts:
        matches = [_column(columns, names[0]) for _, columns in sources if columns is not None]
        types = {match[1] for match in matches if match is not None}
        if len(types) == 1:
            found = (types.pop(), 1)
    if found is None:
        return None, []
    spark_type, start = found
    fields: list[tuple[exp.Identifier, str]] = []
    for part in parts[start:]:
        field = _struct_fields(spark_type).get(part.name.lower())
        if field is None:
            return None, fields
        own, spark_type = field
        fields.append((part, own))
    return spark_type, fields


def _column(columns: Columns, name: str) -> tuple[str, str | None] | None:
    """The column of ``columns`` named ``name`` (lower case) in any case; None where there
    is none, or two."""
    matches = [column for column in columns if column[0].lower() == name]
    return matches[0] if len(matches) == 1 else None


def _struct_fields(spark_type: str | None) -> dict[str, tuple[str, str]]:
    """The fields of a STRUCT's Spark type (``struct<aa:int,Bb:struct<c:int>>``), by
    lower-case name: each name and type; empty for another type. (A type's
    ``simpleString`` does not quote names: one holding a ``:`` is misread, but a name is
    only respelled to one equal in any case, which DuckDB finds as it found the other.)"""
    if spark_type is None or not spark_type.startswith("struct<") or not spark_type.endswith(">"):
        return {}
    fields: dict[str, tuple[str, str]] = {}
    depth, start = 0, len("struct<")
    body_end = len(spark_type) - 1
    for index in range(start, body_end + 1):
        character = spark_type[index]
        if character in "<(":
            depth += 1
        elif character in ">)":
            depth -= 1
        if index == body_end or (character == "," and depth == 0):
            name, _, field_type = spark_type[start:index].partition(":")
            fields.setdefault(name.lower(), (name, field_type))
            start = index + 1
    return fields


class _Relations:
    """The columns of the relations a statement reads: a registered table's from
    ``schemas``, a CTE's or derived table's from its SELECT."""

    def __init__(self, tree: exp.Expr, schemas: dict[str, dict[str, str]]) -> None:
        self._schemas = schemas
        self._ctes = {cte.alias_or_name.lower(): cte for cte in tree.find_all(exp.CTE)}
        self._reading: set[str] = set()  # the CTEs being read (a recursive one reads itself)

    def sources(self, select: exp.Select) -> list[tuple[str, Columns | None]]:
        """The relations ``select`` reads (FROM, JOINs): each qualifier and columns."""
        relations: list[exp.Expr] = []
        source = select.args.get("from_")
        if source is not None:
            relations.append(source.this)
            relations.extend(join.this for join in source.this.args.get("joins") or [])
        relations.extend(join.this for join in select.args.get("joins") or [])
        return [(relation.alias_or_name, self.columns(relation)) for relation in relations]

    def columns(self, relation: exp.Expr) -> Columns | None:
        """The columns of a relation in a FROM or JOIN; None where not known here (or
        pivoted)."""
        columns: Columns | None = None
        if relation.args.get("pivots"):
            return None
        if isinstance(relation, exp.Table) and relation.name in self._schemas:
            columns = list(self._schemas[relation.name].items())
        elif isinstance(relation, exp.Table):
            name = relation.name.lower()
            cte = self._ctes.get(name)
            if cte is None or name in self._reading or relation.db:
                return None
            self._reading.add(name)
            try:
                columns = _renamed(self.query_columns(cte.this), cte.args.get("alias"))
            finally:
                self._reading.discard(name)
        elif isinstance(relation, exp.Subquery):
            columns = self.query_columns(relation.this)
        else:
            return None
        return _renamed(columns, relation.args.get("alias"))

    def query_columns(self, query: exp.Expr) -> Columns | None:
        """The columns of a query (its first SELECT's, for a set operation)."""
        while isinstance(query, exp.SetOperation | exp.Subquery):
            query = query.this
        if not isinstance(query, exp.Select):
            return None
        sources = self.sources(query)
        columns: Columns = []
        for item in query.expressions:
            if item.is_star:
                starred = self.star_columns(query, item, sources)
                if starred is None:
                    return None
                columns.extend(starred)
                continue
            base = item.unalias()
            while isinstance(base, exp.Dot):  # a path longer than a column's parts
                base = base.this
            path = _field_path(base) if isinstance(base, exp.Column) else []
            spark_type, _ = _resolve(path, sources)
            columns.append((item.alias_or_name, spark_type))
        return columns

    @staticmethod
    def star_columns(
        query: exp.Select, star: exp.Expr, sources: list[tuple[str, Columns | None]]
    ) -> Columns | None:
        """The columns ``*`` or ``q.*`` of ``query`` gives; None where not known here (a
        ``*`` over a USING or NATURAL join gives their keys once, over a LEFT SEMI or ANTI
        join the left's columns alone, over a LATERAL VIEW its columns too)."""
        inner = star.this if isinstance(star, exp.Column) else star
        if not isinstance(inner, exp.Star) or any(inner.args.get(key) for key in inner.args):
            return None
        if isinstance(star, exp.Column) and star.table:
            qualified = [cols for name, cols in sources if name.lower() == star.table.lower()]
            return qualified[0] if len(qualified) == 1 else None
        source = query.args.get("from_")
        hung = source.this.args.get("joins") or [] if source is not None else []
        joins = [*hung, *(query.args.get("joins") or [])]
        if query.args.get("laterals") or any(
            join.args.get("using")
            or join.args.get("method")
            or str(join.args.get("kind") or "").upper() in ("SEMI", "ANTI")
            for join in joins
        ):
            return None
        columns: Columns = []
        for _, source_columns in sources:
            if source_columns is None:
                return None
            columns.extend(source_columns)
        return columns


def _renamed(columns: Columns | None, alias: exp.Expr | None) -> Columns | None:
    """``columns`` as a table alias's column list (``AS d(x, y)``) renames them."""
    listed = alias.columns if isinstance(alias, exp.TableAlias) else []
    if not listed:
        return columns
    names = [column.name for column in listed]
    if columns is None or len(columns) != len(names):
        return [(name, None) for name in names]
    return [(name, column[1]) for name, column in zip(names, columns, strict=True)]
