CREATE TABLE `dataset_counts` (
	`dataset_id` integer PRIMARY KEY NOT NULL,
	`conversations` integer DEFAULT 0 NOT NULL,
	`messages` integer DEFAULT 0 NOT NULL,
	`assistant_messages` integer DEFAULT 0 NOT NULL,
	`steps` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`dataset_id`) REFERENCES `datasets`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `dataset_counts` (`dataset_id`, `conversations`, `messages`, `assistant_messages`, `steps`)
SELECT d.id,
  (SELECT count(*) FROM conversations c WHERE c.dataset_id = d.id),
  (SELECT count(*) FROM messages m WHERE m.dataset_id = d.id),
  (SELECT count(*) FROM messages m WHERE m.dataset_id = d.id AND m.role = 'assistant'),
  (SELECT count(*) FROM steps s WHERE s.dataset_id = d.id)
FROM datasets d;
--> statement-breakpoint
CREATE TRIGGER `datasets_counted` AFTER INSERT ON `datasets` BEGIN
  INSERT INTO dataset_counts (dataset_id) VALUES (NEW.id);
END;
--> statement-breakpoint
CREATE TRIGGER `conversations_counted` AFTER INSERT ON `conversations` BEGIN
  UPDATE dataset_counts SET conversations = conversations + 1 WHERE dataset_id = NEW.dataset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `conversations_uncounted` AFTER DELETE ON `conversations` BEGIN
  UPDATE dataset_counts SET conversations = conversations - 1 WHERE dataset_id = OLD.dataset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_counted` AFTER INSERT ON `messages` BEGIN
  UPDATE dataset_counts SET messages = messages + 1, assistant_messages = assistant_messages + (NEW.role = 'assistant') WHERE dataset_id = NEW.dataset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_uncounted` AFTER DELETE ON `messages` BEGIN
  UPDATE dataset_counts SET messages = messages - 1, assistant_messages = assistant_messages - (OLD.role = 'assistant') WHERE dataset_id = OLD.dataset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `steps_counted` AFTER INSERT ON `steps` BEGIN
  UPDATE dataset_counts SET steps = steps + 1 WHERE dataset_id = NEW.dataset_id;
END;
--> statement-breakpoint
CREATE TRIGGER `steps_uncounted` AFTER DELETE ON `steps` BEGIN
  UPDATE dataset_counts SET steps = steps - 1 WHERE dataset_id = OLD.dataset_id;
END;
