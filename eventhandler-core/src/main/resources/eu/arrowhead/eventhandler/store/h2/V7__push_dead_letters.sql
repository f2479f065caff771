-- Events a push subscriber refused for good (a 4xx other than 408 and 429, push.poison-retries more times),
-- set aside so that its cursor could go on: one row per subscription and event, at most push.dead-letter-max
-- per subscription (the oldest dropped), deleted with the subscription. Written in the cursors' transaction,
-- so that no cursor is kept past an event set aside that is not.
CREATE TABLE eh_push_dead_letter (
    subscription_id BIGINT        NOT NULL,
    event_id        BIGINT        NOT NULL,
    event_type      VARCHAR(255)  NOT NULL,
    status          INT           NOT NULL,
    answer          VARCHAR(1024) NOT NULL,
    dead_at_ms      BIGINT        NOT NULL,
    PRIMARY KEY (subscription_id, event_id)
);
