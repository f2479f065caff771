-- Exact ranges of ids the log does not hold although the sequence gave them out: events dropped from the
-- write buffer while the database was down, and the hole a crash leaves. eh_state's missing_up_to stays the
-- low watermark below which retention deleted everything.
-- IF NOT EXISTS: MySQL commits a DDL statement at once, so a start that stopped after the table was made but
-- before the version was recorded must be able to run this again (the INSERT below is rolled back then).
CREATE TABLE IF NOT EXISTS eh_missing_range (
    first_id BIGINT NOT NULL PRIMARY KEY,
    last_id  BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- How many ids the running Event Handler may have given out beyond the last one it committed: the next start
-- after a crash skips that many and records them as missing. 100000 was the bound (store.buffer-events) before
-- this version recorded it.
INSERT INTO eh_state (name, state_value) VALUES ('lag_bound', 100000);
