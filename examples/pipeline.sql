-- The example pipeline: raw orders and customers → cleaned orders → revenue per customer
-- and per day → a report of the top customers; then new data arrives and flows through.
-- `make demo` runs it with dyntables-sql on a fresh embedded warehouse.

-- 1. Raw tables, as an ingestion job would fill them.
CREATE TABLE customers (
  customer_id BIGINT, customer_name STRING, country STRING
) USING DELTA;

CREATE TABLE orders (
  order_id BIGINT, customer_id BIGINT, order_ts TIMESTAMP,
  order_status STRING, amount DECIMAL(10, 2)
) USING DELTA;

INSERT INTO customers VALUES
  (7, 'Acme Corp', 'US'),
  (9, 'Globex', 'DE'),
  (12, 'Initech', 'US');

INSERT INTO orders VALUES
  (1001, 7, TIMESTAMP '2025-01-15 08:30:00', 'shipped', 89.97),
  (1002, 7, TIMESTAMP '2025-01-15 09:45:00', 'returned', 49.99),
  (1003, 9, TIMESTAMP '2025-01-16 10:00:00', 'shipped', 62.50),
  (1004, 12, TIMESTAMP '2025-01-16 14:20:00', 'pending', 15.00);

-- 2. Cleaned orders: returned orders never count as revenue.
CREATE DYNAMIC TABLE dt_orders
  TARGET_LAG = '10 minutes'
  WAREHOUSE = transform_wh
  COMMENT = 'orders without returns'
AS
  SELECT order_id, customer_id, CAST(order_ts AS DATE) AS order_date, order_status, amount
  FROM orders
  WHERE order_status <> 'returned';

-- 3. Two aggregates over the cleaned orders.
CREATE DYNAMIC TABLE dt_customer_revenue
  TARGET_LAG = '1 hour'
  WAREHOUSE = transform_wh
AS
  SELECT c.customer_id, c.customer_name, c.country,
         COUNT(o.order_id) AS order_count, SUM(o.amount) AS revenue
  FROM dt_orders o
  JOIN customers c ON o.customer_id = c.customer_id
  GROUP BY c.customer_id, c.customer_name, c.country;

-- DOWNSTREAM: refreshed when a consumer needs it, or when asked with ALTER … REFRESH.
CREATE DYNAMIC TABLE dt_daily_revenue
  TARGET_LAG = DOWNSTREAM
  WAREHOUSE = transform_wh
  COMMENT = 'revenue per day'
AS
  SELECT order_date, COUNT(*) AS order_count, SUM(amount) AS revenue
  FROM dt_orders
  GROUP BY order_date;

-- 4. The report: a materialized view, refreshed when read while stale.
CREATE MATERIALIZED VIEW mv_top_customers AS
  SELECT customer_name, revenue
  FROM dt_customer_revenue
  ORDER BY revenue DESC
  LIMIT 2;

SELECT * FROM dt_customer_revenue ORDER BY customer_id;
SELECT * FROM mv_top_customers;

-- 5. New orders arrive and a pending order ships.
INSERT INTO orders VALUES
  (1005, 9, TIMESTAMP '2025-01-17 11:05:00', 'shipped', 120.00),
  (1006, 12, TIMESTAMP '2025-01-17 16:40:00', 'returned', 30.00);

UPDATE orders SET order_status = 'shipped' WHERE order_id = 1004;

-- Refresh upstream first, so each table reads fresh inputs.
ALTER DYNAMIC TABLE dt_orders REFRESH;
ALTER DYNAMIC TABLE dt_customer_revenue REFRESH;
ALTER DYNAMIC TABLE dt_daily_revenue REFRESH;

SELECT * FROM dt_orders ORDER BY order_id;
SELECT * FROM dt_customer_revenue ORDER BY customer_id;
SELECT * FROM dt_daily_revenue ORDER BY order_date;
SELECT * FROM mv_top_customers;

SHOW DYNAMIC TABLES LIKE 'dt_%';

SELECT name, refresh_action, state
FROM information_schema.dynamic_table_refresh_history()
ORDER BY refresh_start_time;
