ALTER TABLE `alignments` ADD `lease_until` text;--> statement-breakpoint
ALTER TABLE `comparisons` ADD `lease_until` text;