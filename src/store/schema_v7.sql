-- fslab results store: migration from schema version 6 to 7 (PRAGMA user_version = 7).
-- See doc/schema.md.
--
-- Study ids are never reused: `study.id` becomes INTEGER PRIMARY KEY AUTOINCREMENT, so after
-- `fslab rm` of the newest study the next one gets a new id (SQLite keeps the largest id
-- ever used in `sqlite_sequence`). Without it SQLite hands out max(id) + 1, and a removed
-- study's id went to the next one. SQLite cannot add AUTOINCREMENT to a table, so the table
-- is made again, the documented way (https://sqlite.org/lang_altertable.html, "Making Other
-- Kinds Of Table Schema Changes"): the caller turns foreign keys off around this script
-- (dropping the old table must not cascade to its cells, trials and samples) and checks
-- them before it commits. The view `samples` reads `study` and is made again after it.
-- Ids removed before this version cannot be known; from now on none is handed out twice.
DROP VIEW IF EXISTS samples;

CREATE TABLE study_v7 (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO study_v7 (id, kind, name, description, command_line, spec, spec_hash,
                      tool_version, seed, status, created_at, finished_at)
SELECT id, kind, name, description, command_line, spec, spec_hash,
       tool_version, seed, status, created_at, finished_at
FROM study;
DROP TABLE study;
ALTER TABLE study_v7 RENAME TO study;

-- The view `samples` is made again (samples_view.sql follows).
