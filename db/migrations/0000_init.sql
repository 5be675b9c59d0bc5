CREATE TABLE `conversations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`position` integer NOT NULL,
	`name` text,
	`description` text,
	`meta` text,
	`agents` text,
	`goal` text,
	`goal_generated_by` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_dataset_position_idx` ON `conversations` (`dataset_id`,`position`);--> statement-breakpoint
CREATE TABLE `datasets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`user_id` text DEFAULT 'default' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `datasets_user_created_idx` ON `datasets` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `evaluation_pipelines` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `evaluation_pipelines_dataset_idx` ON `evaluation_pipelines` (`dataset_id`);--> statement-breakpoint
CREATE TABLE `evaluation_results` (
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
	CONSTRAINT "evaluation_results_status_check" CHECK("evaluation_results"."status" in ('completed', 'failed'))
);
--> statement-breakpoint
CREATE INDEX `evaluation_results_execution_idx` ON `evaluation_results` (`execution_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_latest_idx` ON `evaluation_results` (`pipeline_node_id`,`entity_type`,`entity_id`,`id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_dataset_idx` ON `evaluation_results` (`dataset_id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_conversation_idx` ON `evaluation_results` (`conversation_id`);--> statement-breakpoint
CREATE TABLE `judge_cache` (
	`key` text PRIMARY KEY NOT NULL,
	`model` text NOT NULL,
	`response` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`hits` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`last_used_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `judge_cache_last_used_idx` ON `judge_cache` (`last_used_at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`conversation_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`position` integer NOT NULL,
	`role` text NOT NULL,
	`content` text,
	`meta` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_conversation_position_idx` ON `messages` (`conversation_id`,`position`);--> statement-breakpoint
CREATE INDEX `messages_dataset_role_idx` ON `messages` (`dataset_id`,`role`);--> statement-breakpoint
CREATE TABLE `metric_templates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`system_key` text,
	`name` text NOT NULL,
	`description` text,
	`evaluation_level` text NOT NULL,
	`prompt` text NOT NULL,
	`output_type` text NOT NULL,
	`output_schema` text,
	`model_name` text,
	`is_advanced` integer DEFAULT false NOT NULL,
	`template_variables` text DEFAULT '[]' NOT NULL,
	`category` text,
	`is_system` integer DEFAULT false NOT NULL,
	`user_id` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `metric_templates_system_key_idx` ON `metric_templates` (`system_key`);--> statement-breakpoint
CREATE INDEX `metric_templates_user_idx` ON `metric_templates` (`user_id`,`evaluation_level`);--> statement-breakpoint
CREATE INDEX `metric_templates_system_level_idx` ON `metric_templates` (`is_system`,`evaluation_level`);--> statement-breakpoint
CREATE TABLE `pipeline_executions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`evaluation_pipeline_id` integer,
	`dataset_id` integer NOT NULL,
	`pipeline_node_id` integer,
	`status` text DEFAULT 'pending' NOT NULL,
	`started_at` text,
	`completed_at` text,
	`duration_ms` integer,
	`total_evaluations` integer DEFAULT 0 NOT NULL,
	`successful_evaluations` integer DEFAULT 0 NOT NULL,
	`failed_evaluations` integer DEFAULT 0 NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`meta` text DEFAULT '{}' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`evaluation_pipeline_id`) REFERENCES `evaluation_pipelines`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`pipeline_node_id`) REFERENCES `pipeline_nodes`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `pipeline_executions_dataset_started_idx` ON `pipeline_executions` (`dataset_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `pipeline_executions_status_idx` ON `pipeline_executions` (`status`);--> statement-breakpoint
CREATE INDEX `pipeline_executions_node_idx` ON `pipeline_executions` (`pipeline_node_id`);--> statement-breakpoint
CREATE TABLE `pipeline_nodes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`evaluation_pipeline_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`template_id` integer,
	`name` text NOT NULL,
	`description` text,
	`evaluation_level` text NOT NULL,
	`prompt` text NOT NULL,
	`output_type` text NOT NULL,
	`output_schema` text,
	`model_name` text,
	`is_advanced` integer DEFAULT false NOT NULL,
	`template_variables` text DEFAULT '[]' NOT NULL,
	`position` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`evaluation_pipeline_id`) REFERENCES `evaluation_pipelines`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`template_id`) REFERENCES `metric_templates`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `pipeline_nodes_dataset_position_idx` ON `pipeline_nodes` (`dataset_id`,`position`);--> statement-breakpoint
CREATE INDEX `pipeline_nodes_pipeline_idx` ON `pipeline_nodes` (`evaluation_pipeline_id`);--> statement-breakpoint
CREATE INDEX `pipeline_nodes_template_idx` ON `pipeline_nodes` (`template_id`);--> statement-breakpoint
CREATE TABLE `steps` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`position` integer NOT NULL,
	`thinking` text,
	`tool_call` text,
	`tool_result` text,
	`output_content` text,
	`output_structured` text,
	`model_name` text,
	`agent_name` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`message_id`) REFERENCES `messages`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `steps_message_position_idx` ON `steps` (`message_id`,`position`);--> statement-breakpoint
CREATE INDEX `steps_conversation_idx` ON `steps` (`conversation_id`);--> statement-breakpoint
CREATE INDEX `steps_dataset_idx` ON `steps` (`dataset_id`);