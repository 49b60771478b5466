-- fslab results store: migration from schema version 2 to 3 (PRAGMA user_version = 3).
-- See doc/schema.md.
--
-- Per repetition, what the runner knows about the machine around it. Both are NULL in rows
-- written before version 3 and whenever the runner did not measure or was not asked.
ALTER TABLE trial ADD COLUMN interference TEXT;     -- one-line reason; NULL = quiet or not measured
ALTER TABLE trial ADD COLUMN settle_seconds REAL;   -- waited for a quiet machine; NULL = not asked
--
-- trial.cache_policy has no CHECK constraint (any word is stored as given), so the new
-- policy `fresh` needs no change here.
