CREATE TABLE `otel_conversations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`key` text NOT NULL,
	`conversation_id` integer,
	`span_count` integer DEFAULT 0 NOT NULL,
	`revision` integer DEFAULT 0 NOT NULL,
	`assembled_revision` integer DEFAULT 0 NOT NULL,
	`message_hashes` text DEFAULT '[]' NOT NULL,
	`first_span_at` text NOT NULL,
	`last_span_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `otel_conversations_dataset_key_idx` ON `otel_conversations` (`dataset_id`,`key`);--> statement-breakpoint
CREATE INDEX `otel_conversations_last_span_idx` ON `otel_conversations` (`last_span_at`);--> statement-breakpoint
CREATE INDEX `otel_conversations_conversation_idx` ON `otel_conversations` (`conversation_id`);--> statement-breakpoint
CREATE TABLE `otel_spans` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dataset_id` integer NOT NULL,
	`trace_id` text NOT NULL,
	`span_id` text NOT NULL,
	`name` text NOT NULL,
	`start_ns` text NOT NULL,
	`data` text NOT NULL,
	`received_at` text NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `otel_spans_trace_span_idx` ON `otel_spans` (`trace_id`,`span_id`);--> statement-breakpoint
CREATE INDEX `otel_spans_dataset_trace_idx` ON `otel_spans` (`dataset_id`,`trace_id`);--> statement-breakpoint
CREATE TABLE `otel_traces` (
	`dataset_id` integer NOT NULL,
	`trace_id` text NOT NULL,
	`otel_conversation_id` integer NOT NULL,
	`keyed` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`otel_conversation_id`) REFERENCES `otel_conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `otel_traces_dataset_trace_idx` ON `otel_traces` (`dataset_id`,`trace_id`);--> statement-breakpoint
CREATE INDEX `otel_traces_conversation_idx` ON `otel_traces` (`otel_conversation_id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_message_idx` ON `evaluation_results` (`message_id`);--> statement-breakpoint
CREATE INDEX `evaluation_results_step_idx` ON `evaluation_results` (`step_id`);