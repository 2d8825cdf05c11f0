-- The example pipeline: raw orders → cleaned orders (frozen history) → daily revenue.
-- `make demo` checks and prints every statement of this script.

CREATE TABLE IF NOT EXISTS raw_orders (
  order_id BIGINT, customer_id BIGINT, order_date TIMESTAMP,
  order_status STRING, line_total DECIMAL(10, 2)
) USING DELTA;

INSERT INTO raw_orders VALUES
  (1001, 7, TIMESTAMP '2025-01-15 08:30:00', 'shipped', 89.97),
  (1002, 7, TIMESTAMP '2025-01-15 09:45:00', 'returned', 49.99),
  (1003, 9, TIMESTAMP '2025-01-16 10:00:00', 'shipped', 62.50);

-- Orders older than 30 days never change: freeze them so refreshes skip them.
CREATE OR REPLACE DYNAMIC TABLE dt_orders
  TARGET_LAG = '10 minutes'
  WAREHOUSE = transform_wh
  FROZEN WHERE (order_date < CURRENT_TIMESTAMP() - INTERVAL '30 days')
AS
  SELECT order_id, customer_id, order_date, line_total
  FROM raw_orders
  WHERE order_status != 'returned';

CREATE OR REPLACE DYNAMIC TABLE dt_daily_revenue
  TARGET_LAG = DOWNSTREAM
  COMMENT = 'revenue per day, refreshed when a consumer needs it'
AS
  SELECT date_trunc('DAY', order_date) AS order_day, SUM(line_total) AS revenue
  FROM dt_orders
  GROUP BY 1;

SHOW DYNAMIC TABLES LIKE 'dt_%';
ALTER DYNAMIC TABLE dt_orders REFRESH;
SELECT * FROM dt_daily_revenue ORDER BY order_day;
