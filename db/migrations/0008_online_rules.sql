CREATE TABLE `online_rule_conversations` (
	`rule_id` integer NOT NULL,
	`otel_conversation_id` integer NOT NULL,
	`revision` integer NOT NULL,
	`sampled` integer DEFAULT false NOT NULL,
	`execution_id` integer,
	`claimed_at` text NOT NULL,
	FOREIGN KEY (`rule_id`) REFERENCES `online_rules`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`otel_conversation_id`) REFERENCES `otel_conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `online_rule_conversations_rule_conv_idx` ON `online_rule_conversations` (`rule_id`,`otel_conversation_id`);--> statement-breakpoint
CREATE INDEX `online_rule_conversations_claimed_idx` ON `online_rule_conversations` (`rule_id`,`claimed_at`);--> statement-breakpoint
CREATE TABLE `online_rule_runs` (
	`rule_id` integer NOT NULL,
	`execution_id` integer NOT NULL,
	`conversations` integer NOT NULL,
	`started_at` text NOT NULL,
	FOREIGN KEY (`rule_id`) REFERENCES `online_rules`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `online_rule_runs_execution_idx` ON `online_rule_runs` (`execution_id`);--> statement-breakpoint
CREATE INDEX `online_rule_runs_rule_idx` ON `online_rule_runs` (`rule_id`,`started_at`);--> statement-breakpoint
CREATE TABLE `online_rules` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`user_id` text NOT NULL,
	`pipeline_node_ids` text NOT NULL,
	`filter` text,
	`sample_rate` real NOT NULL,
	`idle_seconds` integer NOT NULL,
	`max_cost_usd_per_day` real,
	`enabled` integer DEFAULT true NOT NULL,
	`evaluated` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`last_error_at` text,
	`swept_until` text,
	`sweep_lease_until` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `online_rules_dataset_idx` ON `online_rules` (`dataset_id`);