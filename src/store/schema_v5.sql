-- fslab results store: migration from schema version 4 to 5 (PRAGMA user_version = 5).
-- See doc/schema.md.
--
-- Where an imported study came from (`fslab import OTHER.db`): one row per imported study or
-- run. `origin` identifies the original measurement whatever file it travelled through (host,
-- creation time, id and name where it was first stored), so importing the same file twice,
-- or a copy of it, adds nothing the second time.
CREATE TABLE provenance (
    study_id     INTEGER PRIMARY KEY REFERENCES study(id) ON DELETE CASCADE,
    origin       TEXT    NOT NULL UNIQUE,
    source_path  TEXT    NOT NULL,     -- the file it was imported from (absolute)
    source_id    INTEGER NOT NULL,     -- its id in that file
    source_host  TEXT,                 -- the `host` of its environment, if stored
    imported_at  TEXT    NOT NULL
);

-- The view `samples` follows (samples_view.sql).
