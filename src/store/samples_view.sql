-- fslab results store: the view `samples`, made by the migration to schema version 5 and
-- made again by the one to version 7 (which makes the table `study` again). See
-- doc/schema.md.
--
-- One row per stored sample with everything that says what it is, for sqlite3 and pandas
-- users: no JSON to unpack. `levels` is the cell's factor levels in plan order as
-- `factor=level` joined by commas (empty for a run without factors). Per-study views
-- `study_<id>_samples` (made by fslab when a study's cells are recorded) have one column per
-- factor instead.
CREATE VIEW samples AS
SELECT st.id            AS study_id,
       st.kind          AS study_kind,
       st.name          AS study,
       c.idx            AS cell_idx,
       c.label          AS cell,
       COALESCE((SELECT group_concat(json_extract(f.value, '$[0]') || '=' || json_extract(f.value, '$[1]'), ',')
                 FROM json_each(c.factors) f), '') AS levels,
       w.idx            AS workload_idx,
       w.kind           AS workload_kind,
       w.label          AS workload,
       t.id             AS trial_id,
       t.repetition     AS repetition,
       t.order_index    AS order_index,
       t.status         AS trial_status,
       t.cache_policy   AS cache_policy,
       t.started_at     AS started_at,
       s.phase          AS phase,
       s.metric         AS metric,
       s.unit           AS unit,
       s.value          AS value
FROM sample s
JOIN trial t    ON t.id = s.trial_id
JOIN cell c     ON c.id = t.cell_id
JOIN workload w ON w.id = t.workload_id
JOIN study st   ON st.id = c.study_id;
