CREATE TABLE "latest_result_counts" (
	"pipeline_node_id" integer NOT NULL,
	"entity_type" text NOT NULL,
	"results" integer DEFAULT 0 NOT NULL,
	"passes" integer DEFAULT 0 NOT NULL,
	"fails" integer DEFAULT 0 NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "latest_result_counts_pipeline_node_id_entity_type_pk" PRIMARY KEY("pipeline_node_id","entity_type")
);
--> statement-breakpoint
CREATE TABLE "latest_results" (
	"entity_id" integer NOT NULL,
	"entity_type" text NOT NULL,
	"pipeline_node_id" integer NOT NULL,
	"position" integer,
	"result_id" integer NOT NULL,
	"status" text NOT NULL,
	"score" double precision,
	CONSTRAINT "latest_results_entity_id_entity_type_pipeline_node_id_pk" PRIMARY KEY("entity_id","entity_type","pipeline_node_id")
);
--> statement-breakpoint
-- The latest result of each (metric, entity): backfilled, then kept by the triggers below in the transaction
-- that writes or deletes a result. The grid's verdict filters and metric sorts read these indexes in grid order.
INSERT INTO "latest_results" ("entity_id", "entity_type", "pipeline_node_id", "position", "result_id", "status", "score")
SELECT DISTINCT ON (r.pipeline_node_id, r.entity_type, r.entity_id) r.entity_id, r.entity_type, r.pipeline_node_id,
  CASE WHEN r.entity_type = 'conversation' THEN c.position END,
  r.id, r.status, CASE WHEN r.status = 'completed' THEN r.score END
FROM evaluation_results r LEFT JOIN conversations c ON c.id = r.conversation_id
ORDER BY r.pipeline_node_id, r.entity_type, r.entity_id, r.id DESC;
--> statement-breakpoint
INSERT INTO "latest_result_counts" ("pipeline_node_id", "entity_type", "results", "passes", "fails", "failures")
SELECT pipeline_node_id, entity_type, count(*), count(*) FILTER (WHERE score = 1), count(*) FILTER (WHERE score = 0), count(*) FILTER (WHERE status = 'failed')
FROM latest_results GROUP BY pipeline_node_id, entity_type;
--> statement-breakpoint
CREATE INDEX "latest_results_score_idx" ON "latest_results" ("pipeline_node_id", "entity_type", "score", "position") WHERE "score" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "latest_results_score_desc_idx" ON "latest_results" ("pipeline_node_id", "entity_type", "score" DESC, "position") WHERE "score" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "latest_results_failed_idx" ON "latest_results" ("pipeline_node_id", "entity_type", "position") WHERE "status" = 'failed';
--> statement-breakpoint
-- Every row by grid position: `none` tests a conversation by (metric, level, position) on an index walked in grid order.
CREATE INDEX "latest_results_position_idx" ON "latest_results" ("pipeline_node_id", "entity_type", "position");
--> statement-breakpoint
-- Writers of one dataset's results take its transaction lock first, in dataset order: two transactions that
-- write the same cells (two runs of a metric) in several statements would otherwise lock latest_results rows
-- and their counts in different orders and deadlock.
CREATE FUNCTION latest_results_lock(datasets integer[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE d integer;
BEGIN
  FOR d IN SELECT DISTINCT x FROM unnest(datasets) AS x ORDER BY x LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('turnscope.latest_results:' || d, 0));
  END LOOP;
END $$;
--> statement-breakpoint
CREATE FUNCTION latest_results_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM latest_results_lock(array(SELECT DISTINCT dataset_id FROM new_rows));
  INSERT INTO latest_results AS l (entity_id, entity_type, pipeline_node_id, position, result_id, status, score)
  SELECT DISTINCT ON (n.entity_id, n.entity_type, n.pipeline_node_id) n.entity_id, n.entity_type, n.pipeline_node_id,
    CASE WHEN n.entity_type = 'conversation' THEN (SELECT c.position FROM conversations c WHERE c.id = n.conversation_id) END,
    n.id, n.status, CASE WHEN n.status = 'completed' THEN n.score END
  FROM new_rows n
  ORDER BY n.entity_id, n.entity_type, n.pipeline_node_id, n.id DESC
  ON CONFLICT (entity_id, entity_type, pipeline_node_id) DO UPDATE SET result_id = excluded.result_id, status = excluded.status, score = excluded.score
  WHERE excluded.result_id > l.result_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER latest_results_kept AFTER INSERT ON evaluation_results REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_results_keep();
--> statement-breakpoint
-- A deleted result that was the latest gives way to the latest one left, or to none.
CREATE FUNCTION latest_results_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM latest_results_lock(array(SELECT DISTINCT dataset_id FROM old_rows));
  UPDATE latest_results l SET result_id = r.id, status = r.status, score = CASE WHEN r.status = 'completed' THEN r.score END
  FROM old_rows o CROSS JOIN LATERAL (
    SELECT e.id, e.status, e.score FROM evaluation_results e
    WHERE e.pipeline_node_id = o.pipeline_node_id AND e.entity_type = o.entity_type AND e.entity_id = o.entity_id ORDER BY e.id DESC LIMIT 1) r
  WHERE l.entity_id = o.entity_id AND l.entity_type = o.entity_type AND l.pipeline_node_id = o.pipeline_node_id AND l.result_id = o.id;
  DELETE FROM latest_results l USING old_rows o
  WHERE l.entity_id = o.entity_id AND l.entity_type = o.entity_type AND l.pipeline_node_id = o.pipeline_node_id AND l.result_id = o.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER latest_results_forgotten AFTER DELETE ON evaluation_results REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_results_forget();
--> statement-breakpoint
CREATE FUNCTION latest_results_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE latest_results l SET position = n.position
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE n.position IS DISTINCT FROM o.position AND l.entity_id = n.id AND l.entity_type = 'conversation';
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER latest_results_moved AFTER UPDATE ON conversations REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_results_move();
--> statement-breakpoint
-- One UPDATE of the counts per statement, from its transition tables.
CREATE FUNCTION latest_result_counts_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO latest_result_counts AS k (pipeline_node_id, entity_type, results, passes, fails, failures)
    SELECT pipeline_node_id, entity_type, count(*), count(*) FILTER (WHERE score = 1), count(*) FILTER (WHERE score = 0), count(*) FILTER (WHERE status = 'failed')
    FROM new_rows GROUP BY pipeline_node_id, entity_type ORDER BY pipeline_node_id, entity_type
    ON CONFLICT (pipeline_node_id, entity_type) DO UPDATE SET results = k.results + excluded.results, passes = k.passes + excluded.passes,
      fails = k.fails + excluded.fails, failures = k.failures + excluded.failures;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE latest_result_counts k SET results = k.results - d.results, passes = k.passes - d.passes, fails = k.fails - d.fails, failures = k.failures - d.failures
    FROM (SELECT pipeline_node_id, entity_type, count(*) AS results, count(*) FILTER (WHERE score = 1) AS passes, count(*) FILTER (WHERE score = 0) AS fails,
      count(*) FILTER (WHERE status = 'failed') AS failures FROM old_rows GROUP BY pipeline_node_id, entity_type) d
    WHERE k.pipeline_node_id = d.pipeline_node_id AND k.entity_type = d.entity_type;
  ELSE
    UPDATE latest_result_counts k SET passes = k.passes + d.passes, fails = k.fails + d.fails, failures = k.failures + d.failures
    FROM (SELECT n.pipeline_node_id, n.entity_type,
        sum((n.score IS NOT DISTINCT FROM 1)::int - (o.score IS NOT DISTINCT FROM 1)::int) AS passes,
        sum((n.score IS NOT DISTINCT FROM 0)::int - (o.score IS NOT DISTINCT FROM 0)::int) AS fails,
        sum((n.status = 'failed')::int - (o.status = 'failed')::int) AS failures
      FROM new_rows n JOIN old_rows o ON o.entity_id = n.entity_id AND o.entity_type = n.entity_type AND o.pipeline_node_id = n.pipeline_node_id
      WHERE n.status <> o.status OR n.score IS DISTINCT FROM o.score
      GROUP BY n.pipeline_node_id, n.entity_type) d
    WHERE k.pipeline_node_id = d.pipeline_node_id AND k.entity_type = d.entity_type;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER latest_result_counts_added AFTER INSERT ON latest_results REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_result_counts_keep();
--> statement-breakpoint
CREATE TRIGGER latest_result_counts_changed AFTER UPDATE ON latest_results REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_result_counts_keep();
--> statement-breakpoint
CREATE TRIGGER latest_result_counts_removed AFTER DELETE ON latest_results REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_result_counts_keep();
--> statement-breakpoint
CREATE FUNCTION latest_result_counts_drop() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM latest_result_counts k USING old_rows o WHERE k.pipeline_node_id = o.id;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER latest_result_counts_dropped AFTER DELETE ON pipeline_nodes REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION latest_result_counts_drop();
