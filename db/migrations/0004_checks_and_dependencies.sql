PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_evaluation_results` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`execution_id` integer NOT NULL,
	`pipeline_node_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`entity_type` text NOT NULL,
	`entity_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`message_id` integer,
	`step_id` integer,
	`result` text,
	`score` real,
	`status` text NOT NULL,
	`error` text,
	`raw_output` text,
	`execution_time` integer DEFAULT 0 NOT NULL,
	`model_name` text,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cached` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`execution_id`) REFERENCES `pipeline_executions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`pipeline_node_id`) REFERENCES `pipeline_nodes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`step_id`) REFERENCES `steps`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "evaluation_results_status_check" CHECK("__new_evaluation_results"."status" in ('completed', 'failed', 'skipped'))
);
--> statement-breakpoint
INSERT INTO `__new_evaluation_results`("id", "execution_id", "pipeline_node_id", "dataset_id", "entity_type", "entity_id", "conversation_id", "message_id", "step_id", "result", "score", "status", "error", "raw_output", "execution_time", "model_name", "input_tokens", "output_tokens", "cached", "created_at") SELECT "id", "execution_id", "pipeline_node_id", "dataset_id", "entity_type", "entity_id", "conversation_id", "message_id", "step_id", "result", "score", "status", "error", "raw_output", "execution_time", "model_name", "input_tokens", "output_tokens", "cached", "created_at" FROM `evaluation_results`;--> statement-breakpoint
DROP TABLE `evaluation_results`;--> statement-breakpoint
ALTER TABLE `__new_evaluation_results` RENAME TO `evaluation_results`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `evaluation_results_execution_idx` ON `evaluation_results` (`execution_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_latest_idx` ON `evaluation_results` (`pipeline_node_id`,`entity_type`,`entity_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_dataset_idx` ON `evaluation_results` (`dataset_id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_conversation_idx` ON `evaluation_results` (`conversation_id`);--> statement-breakpoint
ALTER TABLE `metric_templates` ADD `kind` text DEFAULT 'llm' NOT NULL;--> statement-breakpoint
ALTER TABLE `metric_templates` ADD `check` text;--> statement-breakpoint
ALTER TABLE `metric_templates` ADD `applies_to` text;--> statement-breakpoint
ALTER TABLE `pipeline_nodes` ADD `kind` text DEFAULT 'llm' NOT NULL;--> statement-breakpoint
ALTER TABLE `pipeline_nodes` ADD `check` text;--> statement-breakpoint
ALTER TABLE `pipeline_nodes` ADD `applies_to` text;--> statement-breakpoint
ALTER TABLE `pipeline_nodes` ADD `depends_on` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `pipeline_nodes` ADD `skip_rule` text;