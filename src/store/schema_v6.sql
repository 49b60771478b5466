-- fslab results store: migration from schema version 5 to 6 (PRAGMA user_version = 6).
-- See doc/schema.md.
--
-- A repetition that completed but is left out of the statistics because other activity on
-- the machine disturbed it (`[repetitions] disturbed = "repeat" | "drop"`, `--disturbed`):
-- `rerun` (a repetition with the same number was run again) or `dropped` (not run again).
-- Such a row has status 'discarded' and keeps its repetition number, its samples and its
-- `interference` line. NULL for every other row, and in rows written before version 6.
ALTER TABLE trial ADD COLUMN excluded TEXT;
