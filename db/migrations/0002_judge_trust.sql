CREATE TABLE `labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`pipeline_node_id` integer NOT NULL,
	`entity_type` text NOT NULL,
	`entity_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`user_id` text NOT NULL,
	`value` text,
	`score` real,
	`note` text,
	`superseded_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`pipeline_node_id`) REFERENCES `pipeline_nodes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `labels_cell_user_idx` ON `labels` (`pipeline_node_id`,`entity_type`,`entity_id`,`user_id`,`id`);--> statement-breakpoint
CREATE INDEX `labels_dataset_idx` ON `labels` (`dataset_id`,`pipeline_node_id`);--> statement-breakpoint
CREATE TABLE `metric_prompt_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`pipeline_node_id` integer NOT NULL,
	`version` integer NOT NULL,
	`prompt` text NOT NULL,
	`evaluation_level` text NOT NULL,
	`output_type` text NOT NULL,
	`output_schema` text,
	`model_name` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`pipeline_node_id`) REFERENCES `pipeline_nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `metric_prompt_versions_node_version_idx` ON `metric_prompt_versions` (`pipeline_node_id`,`version`);--> statement-breakpoint
ALTER TABLE `pipeline_nodes` ADD `reference` text;