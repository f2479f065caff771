-- The Idempotency-Keys of recent publishes, written in the transaction of their events, so that a publisher's
-- retry after a restart or a crash still gets the first ids (loaded back at start, for
-- publish.idempotency-window-seconds). Keyed by the first id, which is never given twice: the same key may come
-- again once its window ended in memory, before the row is deleted. Rows older than the window are deleted.
CREATE TABLE eh_publish_key (
    first_id        BIGINT       NOT NULL PRIMARY KEY,
    caller          VARCHAR(255) NOT NULL,
    idempotency_key VARCHAR(128) NOT NULL,
    fingerprint     BIGINT       NOT NULL,
    event_count     INT          NOT NULL,
    created_at_ms   BIGINT       NOT NULL
);
-- Loading the window back at start, newest first, and deleting what is older.
CREATE INDEX eh_publish_key_time ON eh_publish_key (created_at_ms);
