-- fslab results store: migration from schema version 3 to 4 (PRAGMA user_version = 4).
-- See doc/schema.md.
--
-- A repetition's time series, sampled once a second while it ran, when asked (`--timeline`,
-- `[repetitions] timeline = true`): device throughput and utilisation, CPU shares, the
-- engine's progress rate. Older rows and repetitions run without it have none.
CREATE TABLE timeline (
    trial_id  INTEGER NOT NULL REFERENCES trial(id) ON DELETE CASCADE,
    t         REAL    NOT NULL,   -- seconds since the run began, end of the interval
    metric    TEXT    NOT NULL,
    unit      TEXT    NOT NULL,
    value     REAL    NOT NULL,
    PRIMARY KEY (trial_id, t, metric)
);
