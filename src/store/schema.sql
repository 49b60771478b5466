-- fslab results store, schema version 1 (PRAGMA user_version = 1).
-- Raw samples only: summaries are computed when reporting. See doc/schema.md.

CREATE TABLE study (
    id            INTEGER PRIMARY KEY,
    kind          TEXT    NOT NULL CHECK (kind IN ('run', 'study')),
    name          TEXT    NOT NULL,
    description   TEXT    NOT NULL DEFAULT '',
    command_line  TEXT    NOT NULL,
    spec          TEXT    NOT NULL DEFAULT '',
    spec_hash     TEXT    NOT NULL DEFAULT '',
    tool_version  TEXT    NOT NULL,
    seed          INTEGER,
    status        TEXT    NOT NULL CHECK (status IN ('running', 'complete', 'partial', 'failed', 'interrupted')),
    created_at    TEXT    NOT NULL,
    finished_at   TEXT
);

CREATE TABLE environment (
    study_id  INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    key       TEXT    NOT NULL,
    value     TEXT    NOT NULL,
    PRIMARY KEY (study_id, key)
);

CREATE TABLE cell (
    id          INTEGER PRIMARY KEY,
    study_id    INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    label       TEXT    NOT NULL,
    factors     TEXT    NOT NULL DEFAULT '[]',
    config      TEXT    NOT NULL DEFAULT '{}',
    commands    TEXT    NOT NULL DEFAULT '[]',
    superblock  TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'complete', 'failed')),
    error       TEXT,
    UNIQUE (study_id, idx)
);

CREATE TABLE workload (
    id        INTEGER PRIMARY KEY,
    study_id  INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,
    kind      TEXT    NOT NULL,
    label     TEXT    NOT NULL,
    params    TEXT    NOT NULL DEFAULT '{}',
    UNIQUE (study_id, idx)
);

CREATE TABLE series (
    cell_id      INTEGER NOT NULL REFERENCES cell(id) ON DELETE CASCADE,
    workload_id  INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,
    status       TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'complete', 'failed')),
    stop_reason  TEXT,
    error        TEXT,
    PRIMARY KEY (cell_id, workload_id)
);

CREATE TABLE trial (
    id            INTEGER PRIMARY KEY,
    cell_id       INTEGER NOT NULL REFERENCES cell(id) ON DELETE CASCADE,
    workload_id   INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,
    repetition    INTEGER NOT NULL,
    order_index   INTEGER NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'discarded')),
    error         TEXT,
    cache_policy  TEXT    NOT NULL,
    started_at    TEXT    NOT NULL,
    finished_at   TEXT    NOT NULL,
    wall_seconds  REAL    NOT NULL
);
-- A counted repetition exists at most once: resume can never double one.
CREATE UNIQUE INDEX trial_unique_ok ON trial (cell_id, workload_id, repetition) WHERE status = 'ok';
CREATE INDEX trial_by_cell ON trial (cell_id, workload_id);

CREATE TABLE sample (
    trial_id  INTEGER NOT NULL REFERENCES trial(id) ON DELETE CASCADE,
    phase     TEXT    NOT NULL,
    metric    TEXT    NOT NULL,
    unit      TEXT    NOT NULL,
    value     REAL    NOT NULL,
    PRIMARY KEY (trial_id, phase, metric)
);

CREATE TABLE histogram (
    trial_id  INTEGER NOT NULL REFERENCES trial(id) ON DELETE CASCADE,
    phase     TEXT    NOT NULL,
    name      TEXT    NOT NULL,
    encoding  TEXT    NOT NULL,
    data      BLOB    NOT NULL,
    PRIMARY KEY (trial_id, phase, name)
);
