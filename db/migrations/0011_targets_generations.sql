CREATE TABLE `generations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`source_dataset_id` integer,
	`dataset_id` integer NOT NULL,
	`target_id` integer,
	`mode` text NOT NULL,
	`status` text NOT NULL,
	`params` text NOT NULL,
	`total` integer DEFAULT 0 NOT NULL,
	`completed` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`usage` text,
	`stop_reasons` text,
	`error` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`finished_at` text,
	FOREIGN KEY (`source_dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_id`) REFERENCES `targets`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `generations_dataset_idx` ON `generations` (`dataset_id`);--> statement-breakpoint
CREATE INDEX `generations_source_idx` ON `generations` (`source_dataset_id`);--> statement-breakpoint
CREATE TABLE `targets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`url` text NOT NULL,
	`model` text,
	`headers` text,
	`request_template` text,
	`reply_path` text,
	`steps_path` text,
	`max_concurrency` integer DEFAULT 16 NOT NULL,
	`timeout_ms` integer DEFAULT 60000 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `targets_user_idx` ON `targets` (`user_id`);