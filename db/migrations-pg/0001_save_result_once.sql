-- Saving one cell of a queued run (db/repositories/executions.ts insertResultOnce) in one round trip
-- instead of seven (BEGIN, lock, look, insert, count, read the count, COMMIT): a queued run saves every
-- cell this way, from several processes at once. Each statement of a plpgsql function takes a fresh
-- snapshot under READ COMMITTED, so the look for an existing result sees every result committed before
-- the execution's row lock was granted: two processes can never store one cell twice, and nothing is
-- stored after a cancel commits. The execution's row is locked before the result gets its id, so one
-- execution's results commit in id order (what SSE resumption by Last-Event-ID relies on).
-- Returns the new result's id and created_at and the cells counted so far, or no row when nothing was
-- saved. `p_cache_key` (optional) stores the verdict in judge_cache in the same transaction.
CREATE OR REPLACE FUNCTION turnscope_save_result_once(
  p_execution_id integer, p_pipeline_node_id integer, p_dataset_id integer, p_entity_type text, p_entity_id integer,
  p_conversation_id integer, p_message_id integer, p_step_id integer, p_result text, p_score double precision,
  p_status text, p_error text, p_raw_output text, p_execution_time integer, p_model_name text,
  p_input_tokens integer, p_output_tokens integer, p_cached boolean,
  p_error_entry text, p_max_errors integer,
  p_cache_key text, p_cache_model text, p_cache_response text, p_cache_input_tokens integer, p_cache_output_tokens integer,
  p_now text)
RETURNS TABLE (id integer, created_at text, counted integer) AS $$
DECLARE
  current_status text;
  new_id integer;
  new_created_at text;
BEGIN
  IF p_cache_key IS NOT NULL THEN
    INSERT INTO judge_cache AS c (key, model, response, input_tokens, output_tokens)
      VALUES (p_cache_key, p_cache_model, p_cache_response::json, p_cache_input_tokens, p_cache_output_tokens)
      ON CONFLICT (key) DO UPDATE SET response = EXCLUDED.response, input_tokens = EXCLUDED.input_tokens,
        output_tokens = EXCLUDED.output_tokens, last_used_at = p_now;
  END IF;
  SELECT e.status INTO current_status FROM pipeline_executions e WHERE e.id = p_execution_id FOR UPDATE;
  IF current_status IS NULL OR current_status NOT IN ('pending', 'processing') THEN
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM evaluation_results r WHERE r.execution_id = p_execution_id AND r.pipeline_node_id = p_pipeline_node_id
             AND r.entity_type = p_entity_type AND r.entity_id = p_entity_id) THEN
    RETURN;
  END IF;
  INSERT INTO evaluation_results AS r (execution_id, pipeline_node_id, dataset_id, entity_type, entity_id, conversation_id,
      message_id, step_id, result, score, status, error, raw_output, execution_time, model_name, input_tokens, output_tokens, cached)
    VALUES (p_execution_id, p_pipeline_node_id, p_dataset_id, p_entity_type, p_entity_id, p_conversation_id,
      p_message_id, p_step_id, p_result::json, p_score, p_status, p_error, p_raw_output, p_execution_time, p_model_name,
      p_input_tokens, p_output_tokens, p_cached)
    RETURNING r.id, r.created_at INTO new_id, new_created_at;
  IF p_status = 'failed' THEN
    -- The same capped append as the other result writes: the error's JSON text spliced in as written.
    UPDATE pipeline_executions e SET failed_evaluations = e.failed_evaluations + 1,
      errors = CASE WHEN json_array_length(e.errors) < p_max_errors
        THEN (left(e.errors::text, -1) || CASE WHEN json_array_length(e.errors) = 0 THEN '' ELSE ',' END || p_error_entry || ']')::json
        ELSE e.errors END
      WHERE e.id = p_execution_id;
  ELSIF p_status = 'skipped' THEN
    UPDATE pipeline_executions e SET skipped_evaluations = e.skipped_evaluations + 1 WHERE e.id = p_execution_id;
  ELSE
    UPDATE pipeline_executions e SET successful_evaluations = e.successful_evaluations + 1 WHERE e.id = p_execution_id;
  END IF;
  RETURN QUERY SELECT new_id, new_created_at,
    (SELECT e.successful_evaluations + e.failed_evaluations + e.skipped_evaluations FROM pipeline_executions e WHERE e.id = p_execution_id);
END
$$ LANGUAGE plpgsql;
