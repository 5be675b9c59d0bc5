CREATE TABLE `comparison_pairs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`comparison_id` integer NOT NULL,
	`position` integer NOT NULL,
	`group_key` text,
	`a_conversation_id` integer NOT NULL,
	`a_message_id` integer,
	`b_conversation_id` integer NOT NULL,
	`b_message_id` integer,
	`verdict_ab` text,
	`verdict_ba` text,
	`reasoning_ab` text,
	`reasoning_ba` text,
	`outcome` text,
	`error` text,
	FOREIGN KEY (`comparison_id`) REFERENCES `comparisons`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`a_conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`b_conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `comparison_pairs_position_idx` ON `comparison_pairs` (`comparison_id`,`position`);--> statement-breakpoint
CREATE TABLE `comparisons` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`pipeline_node_id` integer NOT NULL,
	`a_source` text NOT NULL,
	`b_source` text,
	`a_dataset_id` integer NOT NULL,
	`b_dataset_id` integer,
	`pair_by` text NOT NULL,
	`status` text NOT NULL,
	`params` text NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`usage` text,
	`error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`finished_at` text,
	FOREIGN KEY (`pipeline_node_id`) REFERENCES `pipeline_nodes`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`a_dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`b_dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `comparisons_node_idx` ON `comparisons` (`pipeline_node_id`);