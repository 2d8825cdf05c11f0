"""The one MERGE that deletes some rows of a table and inserts others in one commit.

Both the incremental refresh (rewriting touched rows or groups) and Iceberg's replace-where
(which Iceberg's Spark SQL has no ``INSERT … REPLACE WHERE`` for) need "delete these rows,
insert those" as a single statement. A MERGE does it when its source is the rows to insert
and the rows that select what to delete, told apart by a marker column: a marked row matches
the target rows it deletes, and an unmarked row never matches, so it is inserted.
"""

from __future__ import annotations

from sqlglot import exp

# The source's marker column: TRUE on the rows that select target rows to delete.
REMOVE = "__dt_remove"


def delete_then_insert_merge(
    target: exp.Expr,
    insertions: exp.Select,
    removals: exp.Select,
    *,
    alias: str,
    match: exp.Expr,
    columns: list[str],
    source_columns: list[exp.Identifier],
) -> exp.Merge:
    """One MERGE that deletes the ``target`` rows ``match`` pairs with a row of
    ``removals``, and inserts the rows of ``insertions``::

        MERGE INTO target USING (
            insertions + FALSE AS __dt_remove UNION ALL removals + TRUE AS __dt_remove
        ) AS alias ON alias.__dt_remove AND match
        WHEN MATCHED THEN DELETE
        WHEN NOT MATCHED AND NOT alias.__dt_remove THEN INSERT (columns) VALUES (alias.…)

    ``insertions`` and ``removals`` select the same ``source_columns`` (by position; the
    insertions come first, so theirs are the source's names); ``match`` reads the target
    and ``alias``. ``columns`` are the target's columns each inserted row fills, in the
    order of ``source_columns``. A target row matching several removal rows is deleted
    once; an inserted row matches nothing, whatever ``match`` says, so it is inserted.
    """
    source = exp.Subquery(
        this=exp.union(
            insertions.select(exp.alias_(exp.false(), REMOVE)),
            removals.select(exp.alias_(exp.true(), REMOVE)),
            distinct=False,
        ),
        alias=exp.TableAlias(this=exp.to_identifier(alias)),
    )
    removing = exp.column(REMOVE, table=alias)
    return exp.Merge(
        this=target.copy(),
        using=source,
        on=exp.and_(removing.copy(), match.copy()),
        whens=exp.Whens(
            expressions=[
                exp.When(matched=True, source=False, then=exp.var("DELETE")),
                exp.When(
                    matched=False,
                    source=False,
                    condition=exp.not_(removing.copy()),
                    then=exp.Insert(
                        this=exp.Tuple(
                            expressions=[exp.column(name, quoted=True) for name in columns]
                        ),
                        expression=exp.Tuple(
                            expressions=[
                                exp.column(name.copy(), table=alias) for name in source_columns
                            ]
                        ),
                    ),
                ),
            ]
        ),
    )


__all__ = ["REMOVE", "delete_then_insert_merge"]
