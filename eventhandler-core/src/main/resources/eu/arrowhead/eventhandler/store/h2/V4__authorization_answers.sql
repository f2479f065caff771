-- The Arrowhead Authorization system's last answer per subscriber (which publishers it may receive events
-- from), so that existing subscribers stay served after a restart while the Authorization system is down.
CREATE TABLE eh_authorization_answer (
    subscriber_key VARCHAR(255)           NOT NULL PRIMARY KEY,
    checked_at_ms  BIGINT                 NOT NULL,
    answer_json    CHARACTER LARGE OBJECT NOT NULL
);
