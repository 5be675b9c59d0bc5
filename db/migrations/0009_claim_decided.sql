ALTER TABLE `online_rule_conversations` ADD `decided_at` text;--> statement-breakpoint
UPDATE `online_rule_conversations` SET `decided_at` = `claimed_at`;
