CREATE TABLE `alignments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`dataset_id` integer NOT NULL,
	`pipeline_node_id` integer NOT NULL,
	`status` text NOT NULL,
	`params` text NOT NULL,
	`report` text,
	`usage` text,
	`total` integer DEFAULT 0 NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`finished_at` text,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`pipeline_node_id`) REFERENCES `pipeline_nodes`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `alignments_node_idx` ON `alignments` (`pipeline_node_id`);