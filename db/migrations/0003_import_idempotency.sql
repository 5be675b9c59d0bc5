CREATE TABLE `import_idempotency_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `import_idempotency_keys_key_idx` ON `import_idempotency_keys` (`user_id`,`scope`,`key`);--> statement-breakpoint
CREATE INDEX `import_idempotency_keys_created_idx` ON `import_idempotency_keys` (`created_at`);