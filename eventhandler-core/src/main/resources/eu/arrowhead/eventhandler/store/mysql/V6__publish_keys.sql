-- The Idempotency-Keys of recent publishes, written in the transaction of their events, so that a publisher's
-- retry after a restart or a crash still gets the first ids (loaded back at start, for
-- publish.idempotency-window-seconds). Keyed by the first id, which is never given twice: the same key may come
-- again once its window ended in memory, before the row is deleted. Rows older than the window are deleted.
-- One statement, and IF NOT EXISTS: MySQL commits each DDL statement at once, so a start that stopped after the
-- table was made but before the version was recorded must be able to run this again.
CREATE TABLE IF NOT EXISTS eh_publish_key (
    first_id        BIGINT       NOT NULL PRIMARY KEY,
    caller          VARCHAR(255) NOT NULL,
    idempotency_key VARCHAR(128) NOT NULL,
    fingerprint     BIGINT       NOT NULL,
    event_count     INT          NOT NULL,
    created_at_ms   BIGINT       NOT NULL,
    KEY eh_publish_key_time (created_at_ms)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
