CREATE TABLE "dataset_counts" (
	"dataset_id" integer PRIMARY KEY NOT NULL,
	"conversations" integer DEFAULT 0 NOT NULL,
	"messages" integer DEFAULT 0 NOT NULL,
	"assistant_messages" integer DEFAULT 0 NOT NULL,
	"steps" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dataset_counts" ADD CONSTRAINT "dataset_counts_dataset_id_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
INSERT INTO "dataset_counts" ("dataset_id", "conversations", "messages", "assistant_messages", "steps")
SELECT d.id,
  (SELECT count(*) FROM conversations c WHERE c.dataset_id = d.id),
  (SELECT count(*) FROM messages m WHERE m.dataset_id = d.id),
  (SELECT count(*) FROM messages m WHERE m.dataset_id = d.id AND m.role = 'assistant'),
  (SELECT count(*) FROM steps s WHERE s.dataset_id = d.id)
FROM datasets d;
--> statement-breakpoint
CREATE FUNCTION dataset_counts_new() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO dataset_counts (dataset_id) SELECT id FROM new_rows;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER datasets_counted AFTER INSERT ON datasets REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_new();
--> statement-breakpoint
-- One UPDATE per statement (a multi-row import insert, a cascade), not per row.
CREATE FUNCTION dataset_counts_conversations() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE dataset_counts d SET conversations = d.conversations + n.c
      FROM (SELECT dataset_id, count(*) AS c FROM new_rows GROUP BY dataset_id) n WHERE d.dataset_id = n.dataset_id;
  ELSE
    UPDATE dataset_counts d SET conversations = d.conversations - n.c
      FROM (SELECT dataset_id, count(*) AS c FROM old_rows GROUP BY dataset_id) n WHERE d.dataset_id = n.dataset_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER conversations_counted AFTER INSERT ON conversations REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_conversations();
--> statement-breakpoint
CREATE TRIGGER conversations_uncounted AFTER DELETE ON conversations REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_conversations();
--> statement-breakpoint
CREATE FUNCTION dataset_counts_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE dataset_counts d SET messages = d.messages + n.c, assistant_messages = d.assistant_messages + n.a
      FROM (SELECT dataset_id, count(*) AS c, count(*) FILTER (WHERE role = 'assistant') AS a FROM new_rows GROUP BY dataset_id) n WHERE d.dataset_id = n.dataset_id;
  ELSE
    UPDATE dataset_counts d SET messages = d.messages - n.c, assistant_messages = d.assistant_messages - n.a
      FROM (SELECT dataset_id, count(*) AS c, count(*) FILTER (WHERE role = 'assistant') AS a FROM old_rows GROUP BY dataset_id) n WHERE d.dataset_id = n.dataset_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER messages_counted AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_messages();
--> statement-breakpoint
CREATE TRIGGER messages_uncounted AFTER DELETE ON messages REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_messages();
--> statement-breakpoint
CREATE FUNCTION dataset_counts_steps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE dataset_counts d SET steps = d.steps + n.c
      FROM (SELECT dataset_id, count(*) AS c FROM new_rows GROUP BY dataset_id) n WHERE d.dataset_id = n.dataset_id;
  ELSE
    UPDATE dataset_counts d SET steps = d.steps - n.c
      FROM (SELECT dataset_id, count(*) AS c FROM old_rows GROUP BY dataset_id) n WHERE d.dataset_id = n.dataset_id;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER steps_counted AFTER INSERT ON steps REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_steps();
--> statement-breakpoint
CREATE TRIGGER steps_uncounted AFTER DELETE ON steps REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION dataset_counts_steps();
