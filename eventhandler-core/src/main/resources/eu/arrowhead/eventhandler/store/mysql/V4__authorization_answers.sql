-- The Arrowhead Authorization system's last answer per subscriber (which publishers it may receive events
-- from), so that existing subscribers stay served after a restart while the Authorization system is down.
-- IF NOT EXISTS: MySQL commits a DDL statement at once, so a start that stopped after the table was made but
-- before the version was recorded must be able to run this again.
CREATE TABLE IF NOT EXISTS eh_authorization_answer (
    subscriber_key VARCHAR(255) NOT NULL PRIMARY KEY,
    checked_at_ms  BIGINT       NOT NULL,
    answer_json    LONGTEXT     NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
