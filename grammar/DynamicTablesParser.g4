/*
 * Parser for the dynamic-table DDL of spark-dynamic-tables.
 *
 * Only statements that begin with one of our forms reach this parser (a keyword
 * pre-check in python/dyntables/parser/recognizer.py sends everything else to Spark).
 * Embedded SQL (queries, predicates, the REFRESH USING body, time-point expressions,
 * column types) is matched as balanced token runs and sliced out of the original text
 * by the AST builder, so its inner syntax is left to Spark and sqlglot.
 * Regenerate the Python code with `make grammar`; never edit the generated files.
 */
parser grammar DynamicTablesParser;

options { tokenVocab = DynamicTablesLexer; }

singleStatement
    : statement EOF
    ;

statement
    : createDynamicTableStatement                                          #createDynamicTable
    | CREATE OR ALTER anyToken*                                            #createOrAlterDynamicTable
    | ALTER DYNAMIC TABLE (IF EXISTS)? multipartIdentifier alterAction     #alterDynamicTable
    | DROP DYNAMIC TABLE (IF EXISTS)? multipartIdentifier                  #dropDynamicTable
    | SHOW FULL? DYNAMIC TABLES (LIKE pattern=STRING)?
        (IN (ACCOUNT
            | (SCHEMA | DATABASE) schema=multipartIdentifier?
            | schema=multipartIdentifier))?                                #showDynamicTables
    | (DESCRIBE | DESC) DYNAMIC TABLE multipartIdentifier                  #describeDynamicTable
    | EXPLAIN DYNAMIC TABLE multipartIdentifier                            #explainDynamicTable
    | EXPLAIN createDynamicTableStatement                                  #explainCreateDynamicTable
    | CREATE (OR REPLACE)? MATERIALIZED VIEW (IF NOT EXISTS)? multipartIdentifier
        columnList? materializedViewProperty* AS query                     #createMaterializedView
    | REFRESH MATERIALIZED VIEW multipartIdentifier                        #refreshMaterializedView
    | CALL procedure=multipartIdentifier LEFT_PAREN viewName=STRING RIGHT_PAREN
                                                                           #callRefreshMaterializedView
    | DROP MATERIALIZED VIEW (IF EXISTS)? multipartIdentifier              #dropMaterializedView
    ;

createDynamicTableStatement
    : CREATE (OR REPLACE)? TRANSIENT? DYNAMIC TABLE (IF NOT EXISTS)? multipartIdentifier
        columnList? dynamicTableProperty* dynamicTableBody
    ;

dynamicTableBody
    : AS query                                                  #queryBody
    | REFRESH USING LEFT_PAREN balancedTokens RIGHT_PAREN       #refreshUsingBody
    ;

// Properties may come in any order; the AST builder rejects duplicates.
dynamicTableProperty
    : TARGET_LAG EQ targetLagValue                                          #targetLagProperty
    | WAREHOUSE EQ warehouseName                                            #warehouseProperty
    | REFRESH_MODE EQ refreshModeValue                                      #refreshModeProperty
    | INITIALIZE EQ initializeValue                                         #initializeProperty
    | (FROZEN | IMMUTABLE) WHERE LEFT_PAREN balancedTokens RIGHT_PAREN      #frozenWhereProperty
    | BACKFILL FROM multipartIdentifier timePoint?                          #backfillFromProperty
    | START AT LEFT_PAREN timePointSpec RIGHT_PAREN                         #startAtProperty
    | CLUSTER BY LEFT_PAREN expressionList RIGHT_PAREN                      #clusterByProperty
    | COMMENT EQ? STRING                                                    #commentProperty
    | DATA_RETENTION_TIME_IN_DAYS EQ INTEGER_VALUE                          #dataRetentionProperty
    | PARTITIONED BY LEFT_PAREN expressionList RIGHT_PAREN                  #partitionedByProperty
    | TBLPROPERTIES LEFT_PAREN tableProperty (COMMA tableProperty)* RIGHT_PAREN
                                                                            #tblPropertiesProperty
    | COPY GRANTS                                                           #copyGrantsProperty
    ;

materializedViewProperty
    : COMMENT EQ? STRING                                                    #mvCommentProperty
    | TBLPROPERTIES LEFT_PAREN tableProperty (COMMA tableProperty)* RIGHT_PAREN
                                                                            #mvTblPropertiesProperty
    ;

alterAction
    : SUSPEND                                                       #suspendAction
    | RESUME                                                        #resumeAction
    | REFRESH                                                       #refreshAction
    | SET TARGET_LAG EQ targetLagValue                              #setTargetLagAction
    | SET WAREHOUSE EQ warehouseName                                #setWarehouseAction
    | SET REFRESH_MODE EQ refreshModeValue                          #setRefreshModeAction
    | SET (FROZEN | IMMUTABLE) WHERE LEFT_PAREN balancedTokens RIGHT_PAREN
                                                                    #setFrozenWhereAction
    | UNSET (FROZEN | IMMUTABLE) WHERE                              #unsetFrozenWhereAction
    | RENAME TO multipartIdentifier                                 #renameAction
    | SET COMMENT EQ? STRING                                        #setCommentAction
    // CREATE-only clauses: matched so that the AST builder can say so (seed 003).
    | SET? (START AT | BACKFILL FROM) anyToken*                     #setCreateOnlyAction
    ;

targetLagValue
    : STRING
    | DOWNSTREAM
    ;

warehouseName
    : identifier
    | STRING
    ;

refreshModeValue
    : AUTO
    | FULL
    | INCREMENTAL
    | CUSTOM_INCREMENTAL
    ;

initializeValue
    : ON_CREATE
    | ON_SCHEDULE
    ;

timePoint
    : (AT | BEFORE) LEFT_PAREN timePointSpec RIGHT_PAREN
    ;

timePointSpec
    : timePointBy ARROW timePointExpression
    ;

timePointBy
    : TIMESTAMP
    | OFFSET
    | STATEMENT
    | VERSION
    | STREAM
    ;

timePointExpression
    : balancedToken+
    ;

columnList
    : LEFT_PAREN columnDefinition (COMMA columnDefinition)* RIGHT_PAREN
    ;

// Snowflake allows the type to be left out when the query determines it.
columnDefinition
    : identifier dataType? (NOT NULL)? (COMMENT STRING)?
    ;

// Spark's type syntax, only to find where a type ends: the text is sliced verbatim.
dataType
    : identifier LT complexTypeArgument (COMMA complexTypeArgument)* GT
    | INTERVAL identifier (TO identifier)?
    | identifier (LEFT_PAREN INTEGER_VALUE (COMMA INTEGER_VALUE)* RIGHT_PAREN)?
    ;

complexTypeArgument
    : (identifier COLON?)? dataType (NOT NULL)? (COMMENT STRING)?
    ;

tableProperty
    : key=propertyKey (EQ? value=propertyValue)?
    ;

propertyKey
    : identifier (DOT identifier)*
    | STRING
    ;

propertyValue
    : MINUS? INTEGER_VALUE
    | MINUS? DECIMAL_VALUE
    | STRING
    | identifier
    ;

expressionList
    : expression (COMMA expression)*
    ;

// One expression of a comma-separated list: a run of tokens with balanced parentheses.
expression
    : (LEFT_PAREN balancedTokens RIGHT_PAREN
      | ~(LEFT_PAREN | RIGHT_PAREN | COMMA | UNCLOSED_STRING | UNCLOSED_COMMENT))+
    ;

// The text after AS: any tokens, up to the end of the statement.
query
    : anyToken+
    ;

balancedTokens
    : balancedToken*
    ;

balancedToken
    : LEFT_PAREN balancedTokens RIGHT_PAREN
    | ~(LEFT_PAREN | RIGHT_PAREN | UNCLOSED_STRING | UNCLOSED_COMMENT)
    ;

// Unterminated strings and comments are errors even inside embedded SQL.
anyToken
    : ~(EOF | UNCLOSED_STRING | UNCLOSED_COMMENT)
    ;

multipartIdentifier
    : identifier (DOT identifier)*
    ;

identifier
    : IDENTIFIER
    | BACKQUOTED_IDENTIFIER
    | nonReserved
    ;

// Every keyword is non-reserved: our statements never need to reserve a name.
nonReserved
    : ACCOUNT | ALTER | AS | AT | AUTO | BACKFILL | BEFORE | BY | CALL | CLUSTER | COMMENT
    | COPY | CREATE | CUSTOM_INCREMENTAL | DATABASE | DATA_RETENTION_TIME_IN_DAYS | DESC
    | DESCRIBE | DOWNSTREAM | DROP | DYNAMIC | EXISTS | EXPLAIN | FROM | FROZEN | FULL
    | GRANTS | IF | IMMUTABLE | IN | INCREMENTAL | INITIALIZE | INSERT | INTERVAL | LIKE
    | MATERIALIZED
    | MERGE | NOT | NULL | OFFSET | ON_CREATE | ON_SCHEDULE | OR | PARTITIONED | REFRESH
    | REFRESH_MODE | RENAME | REPLACE | RESUME | SCHEMA | SET | SHOW | START | STATEMENT
    | STREAM | SUSPEND | TABLE | TABLES | TARGET_LAG | TBLPROPERTIES | TIMESTAMP | TO
    | TRANSIENT | UNSET | USING | VERSION | VIEW | WAREHOUSE | WHERE
    ;
