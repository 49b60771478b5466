-- fslab results store: migration from schema version 1 to 2 (PRAGMA user_version = 2).
-- The code that applies it also sets PRAGMA application_id = 0x46534C42 ("FSLB"), the
-- marker by which fslab recognises its own files. See doc/schema.md.

-- Who is running a study or engine run right now: at most one process at a time. A row
-- whose process is gone (on this host: no /proc/<pid>, or a different start time because
-- the pid was reused) may be taken over.
CREATE TABLE claim (
    study_id    INTEGER PRIMARY KEY REFERENCES study(id) ON DELETE CASCADE,
    pid         INTEGER NOT NULL,
    host        TEXT    NOT NULL,          -- uname nodename
    start_time  INTEGER NOT NULL,          -- /proc/<pid>/stat field 22 (clock ticks since boot)
    claimed_at  TEXT    NOT NULL
);

-- Paths an ad-hoc engine run created (or is about to create), so `fslab cleanup` and
-- `fdtree -R` can prove a leftover is fslab's own before removing it.
CREATE TABLE owned_path (
    id         INTEGER PRIMARY KEY,
    study_id   INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
    path       TEXT    NOT NULL,          -- absolute
    kind       TEXT    NOT NULL,          -- 'fdtree_tree' | 'iozone_file' | 'dbench_dir'
    detail     TEXT    NOT NULL DEFAULT '{}',  -- JSON (shape of a tree, …)
    dev        INTEGER,                   -- st_dev once created
    ino        INTEGER,                   -- st_ino once created
    state      TEXT    NOT NULL CHECK (state IN ('intended', 'created', 'removed')),
    created_at TEXT    NOT NULL
);
CREATE INDEX owned_path_by_path ON owned_path (path);
CREATE INDEX owned_path_by_study ON owned_path (study_id);
