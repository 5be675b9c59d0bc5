ALTER TABLE `generations` ADD `source_conversation_ids` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `claimed_by` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `lease_until` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `generations_status_idx` ON `generations` (`status`);