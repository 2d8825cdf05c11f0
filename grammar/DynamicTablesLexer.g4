/*
 * Lexer for the dynamic-table DDL of spark-dynamic-tables.
 *
 * It tokenizes any Spark SQL text (the defining query, predicates and REFRESH USING body
 * are embedded in our statements), but the parser only inspects our own clauses: embedded
 * SQL is sliced out of the original text by token offsets, never rebuilt from tokens.
 * Keywords are case-insensitive. Regenerate the Python code with `make grammar`.
 */
lexer grammar DynamicTablesLexer;

options { caseInsensitive = true; }

// ---- keywords (every one is also listed in the parser's nonReserved rule) ----
ACCOUNT: 'ACCOUNT';
ALTER: 'ALTER';
AS: 'AS';
AT: 'AT';
AUTO: 'AUTO';
BACKFILL: 'BACKFILL';
BEFORE: 'BEFORE';
BY: 'BY';
CALL: 'CALL';
CLUSTER: 'CLUSTER';
COMMENT: 'COMMENT';
COPY: 'COPY';
CREATE: 'CREATE';
CUSTOM_INCREMENTAL: 'CUSTOM_INCREMENTAL';
DATABASE: 'DATABASE';
DATA_RETENTION_TIME_IN_DAYS: 'DATA_RETENTION_TIME_IN_DAYS';
DESC: 'DESC';
DESCRIBE: 'DESCRIBE';
DOWNSTREAM: 'DOWNSTREAM';
DROP: 'DROP';
DYNAMIC: 'DYNAMIC';
EXISTS: 'EXISTS';
EXPLAIN: 'EXPLAIN';
FROM: 'FROM';
FROZEN: 'FROZEN';
FULL: 'FULL';
GRANTS: 'GRANTS';
IF: 'IF';
IMMUTABLE: 'IMMUTABLE';
IN: 'IN';
INCREMENTAL: 'INCREMENTAL';
INITIALIZE: 'INITIALIZE';
INSERT: 'INSERT';
INTERVAL: 'INTERVAL';
LIKE: 'LIKE';
MATERIALIZED: 'MATERIALIZED';
MERGE: 'MERGE';
NOT: 'NOT';
NULL: 'NULL';
OFFSET: 'OFFSET';
ON_CREATE: 'ON_CREATE';
ON_SCHEDULE: 'ON_SCHEDULE';
OR: 'OR';
PARTITIONED: 'PARTITIONED';
REFRESH: 'REFRESH';
REFRESH_MODE: 'REFRESH_MODE';
RENAME: 'RENAME';
REPLACE: 'REPLACE';
RESUME: 'RESUME';
SCHEMA: 'SCHEMA';
SET: 'SET';
SHOW: 'SHOW';
START: 'START';
STATEMENT: 'STATEMENT';
STREAM: 'STREAM';
SUSPEND: 'SUSPEND';
TABLE: 'TABLE';
TABLES: 'TABLES';
TARGET_LAG: 'TARGET_LAG';
TBLPROPERTIES: 'TBLPROPERTIES';
TIMESTAMP: 'TIMESTAMP';
TO: 'TO';
TRANSIENT: 'TRANSIENT';
UNSET: 'UNSET';
USING: 'USING';
VERSION: 'VERSION';
VIEW: 'VIEW';
WAREHOUSE: 'WAREHOUSE';
WHERE: 'WHERE';

// ---- punctuation the parser looks at ----
LEFT_PAREN: '(';
RIGHT_PAREN: ')';
COMMA: ',';
DOT: '.';
SEMICOLON: ';';
ARROW: '=>';
DOUBLE_COLON: '::';
EQ: '=' | '==';
LT: '<';
GT: '>';
COLON: ':';
MINUS: '-';
PLUS: '+';

// ---- literals and identifiers ----
// Spark escapes quotes with a backslash, Snowflake by doubling them; accept both.
STRING
    : '\'' ( ~['\\] | '\\' . | '\'\'' )* '\''
    | '"' ( ~["\\] | '\\' . | '""' )* '"'
    ;

INTEGER_VALUE: DIGIT+;

// No ".5" form: it would swallow the dot of a name like sales.2024_orders.
DECIMAL_VALUE
    : DIGIT+ '.' DIGIT* EXPONENT?
    | DIGIT+ EXPONENT
    ;

// As in Spark, a name may start with digits (2024_orders) if it is not a number;
// `$` appears in Snowflake metadata columns such as METADATA$ACTION.
IDENTIFIER: DIGIT* (LETTER | '_') (LETTER | DIGIT | '_' | '$')*;

BACKQUOTED_IDENTIFIER: '`' ( ~'`' | '``' )* '`';

// ---- trivia ----
SIMPLE_COMMENT: '--' ~[\r\n]* -> channel(HIDDEN);
// Comments nest, as in Spark. The body never contains "/*" or "*/" except as a nested
// comment, so a comment cannot be read in two ways.
BRACKETED_COMMENT: '/*' COMMENT_TEXT* '*'* '*/' -> channel(HIDDEN);
WS: [ \t\r\n\f\u000B]+ -> channel(HIDDEN);

// Unterminated strings and comments get their own tokens so the error can say so. Neither
// can run past a closing quote or "*/", so a terminated one always lexes as above.
UNCLOSED_STRING: ( '\'' ( ~['\\] | '\\' . )* | '"' ( ~["\\] | '\\' . )* ) EOF;
UNCLOSED_COMMENT: '/*' COMMENT_TEXT* ( '*'+ | '/'+ )? EOF;

// Anything else Spark SQL may contain (operators, brackets, ...): the parser never
// inspects it, it only has to pass through embedded SQL.
OTHER: .;

fragment COMMENT_TEXT: BRACKETED_COMMENT | ~[*/] | '/'+ ~[*/] | '*'+ ~[*/];
fragment DIGIT: [0-9];
fragment LETTER: [A-Z];
fragment EXPONENT: 'E' [+-]? DIGIT+;
