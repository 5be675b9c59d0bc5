CREATE TABLE `latest_result_counts` (
	`pipeline_node_id` integer NOT NULL,
	`entity_type` text NOT NULL,
	`results` integer DEFAULT 0 NOT NULL,
	`passes` integer DEFAULT 0 NOT NULL,
	`fails` integer DEFAULT 0 NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`pipeline_node_id`, `entity_type`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `latest_results` (
	`entity_id` integer NOT NULL,
	`entity_type` text NOT NULL,
	`pipeline_node_id` integer NOT NULL,
	`position` integer,
	`result_id` integer NOT NULL,
	`status` text NOT NULL,
	`score` real,
	PRIMARY KEY(`entity_id`, `entity_type`, `pipeline_node_id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- The latest result of each (metric, entity): backfilled, then kept by the triggers below in the transaction
-- that writes or deletes a result. The grid's verdict filters and metric sorts read these indexes in grid order.
INSERT INTO `latest_results` (`entity_id`, `entity_type`, `pipeline_node_id`, `position`, `result_id`, `status`, `score`)
SELECT r.entity_id, r.entity_type, r.pipeline_node_id,
  CASE WHEN r.entity_type = 'conversation' THEN (SELECT c.position FROM conversations c WHERE c.id = r.conversation_id) END,
  r.id, r.status, CASE WHEN r.status = 'completed' THEN r.score END
FROM evaluation_results r
JOIN (SELECT max(id) AS id FROM evaluation_results GROUP BY pipeline_node_id, entity_type, entity_id) l ON l.id = r.id;
--> statement-breakpoint
INSERT INTO `latest_result_counts` (`pipeline_node_id`, `entity_type`, `results`, `passes`, `fails`, `failures`)
SELECT pipeline_node_id, entity_type, count(*), sum(score IS 1), sum(score IS 0), sum(status = 'failed')
FROM latest_results GROUP BY pipeline_node_id, entity_type;
--> statement-breakpoint
CREATE INDEX `latest_results_score_idx` ON `latest_results` (`pipeline_node_id`, `entity_type`, `score`, `position`) WHERE `score` IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `latest_results_score_desc_idx` ON `latest_results` (`pipeline_node_id`, `entity_type`, `score` DESC, `position`) WHERE `score` IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `latest_results_failed_idx` ON `latest_results` (`pipeline_node_id`, `entity_type`, `position`) WHERE `status` = 'failed';
--> statement-breakpoint
-- Every row by grid position: `none` tests a conversation by (metric, level, position) on an index walked in grid order.
CREATE INDEX `latest_results_position_idx` ON `latest_results` (`pipeline_node_id`, `entity_type`, `position`);
--> statement-breakpoint
CREATE TRIGGER `latest_results_kept` AFTER INSERT ON `evaluation_results` BEGIN
  INSERT INTO latest_results (entity_id, entity_type, pipeline_node_id, position, result_id, status, score)
  SELECT NEW.entity_id, NEW.entity_type, NEW.pipeline_node_id,
    CASE WHEN NEW.entity_type = 'conversation' THEN (SELECT position FROM conversations WHERE id = NEW.conversation_id) END,
    NEW.id, NEW.status, CASE WHEN NEW.status = 'completed' THEN NEW.score END
  WHERE true
  ON CONFLICT (entity_id, entity_type, pipeline_node_id) DO UPDATE SET result_id = excluded.result_id, status = excluded.status, score = excluded.score
  WHERE excluded.result_id > latest_results.result_id;
END;
--> statement-breakpoint
-- A deleted result that was the latest gives way to the latest one left, or to none.
CREATE TRIGGER `latest_results_forgotten` AFTER DELETE ON `evaluation_results` BEGIN
  UPDATE latest_results SET (result_id, status, score) = (
    SELECT r.id, r.status, CASE WHEN r.status = 'completed' THEN r.score END FROM evaluation_results r
    WHERE r.pipeline_node_id = OLD.pipeline_node_id AND r.entity_type = OLD.entity_type AND r.entity_id = OLD.entity_id ORDER BY r.id DESC LIMIT 1)
  WHERE entity_id = OLD.entity_id AND entity_type = OLD.entity_type AND pipeline_node_id = OLD.pipeline_node_id AND result_id = OLD.id
    AND EXISTS (SELECT 1 FROM evaluation_results r WHERE r.pipeline_node_id = OLD.pipeline_node_id AND r.entity_type = OLD.entity_type AND r.entity_id = OLD.entity_id);
  DELETE FROM latest_results WHERE entity_id = OLD.entity_id AND entity_type = OLD.entity_type AND pipeline_node_id = OLD.pipeline_node_id AND result_id = OLD.id;
END;
--> statement-breakpoint
CREATE TRIGGER `latest_results_moved` AFTER UPDATE OF `position` ON `conversations` BEGIN
  UPDATE latest_results SET position = NEW.position WHERE entity_id = NEW.id AND entity_type = 'conversation';
END;
--> statement-breakpoint
CREATE TRIGGER `latest_result_counts_added` AFTER INSERT ON `latest_results` BEGIN
  INSERT INTO latest_result_counts (pipeline_node_id, entity_type, results, passes, fails, failures)
  VALUES (NEW.pipeline_node_id, NEW.entity_type, 1, NEW.score IS 1, NEW.score IS 0, NEW.status = 'failed')
  ON CONFLICT (pipeline_node_id, entity_type) DO UPDATE SET results = results + 1, passes = passes + excluded.passes,
    fails = fails + excluded.fails, failures = failures + excluded.failures;
END;
--> statement-breakpoint
CREATE TRIGGER `latest_result_counts_changed` AFTER UPDATE OF `status`, `score` ON `latest_results` BEGIN
  UPDATE latest_result_counts SET passes = passes + (NEW.score IS 1) - (OLD.score IS 1), fails = fails + (NEW.score IS 0) - (OLD.score IS 0),
    failures = failures + (NEW.status = 'failed') - (OLD.status = 'failed')
  WHERE pipeline_node_id = NEW.pipeline_node_id AND entity_type = NEW.entity_type;
END;
--> statement-breakpoint
CREATE TRIGGER `latest_result_counts_removed` AFTER DELETE ON `latest_results` BEGIN
  UPDATE latest_result_counts SET results = results - 1, passes = passes - (OLD.score IS 1), fails = fails - (OLD.score IS 0),
    failures = failures - (OLD.status = 'failed')
  WHERE pipeline_node_id = OLD.pipeline_node_id AND entity_type = OLD.entity_type;
END;
--> statement-breakpoint
CREATE TRIGGER `latest_result_counts_dropped` AFTER DELETE ON `pipeline_nodes` BEGIN
  DELETE FROM latest_result_counts WHERE pipeline_node_id = OLD.id;
END;
