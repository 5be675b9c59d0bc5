/**
 * What a format adapter gives back: the upload in the Turnscope shape and what it learned on the way.
 * In a file of its own so the adapters and the detection in index.ts both import it without a cycle.
 */
import type { ImportFormat, ImportIssue, NotImported } from "@/lib/schemas/imports";
import type { RecordsRead } from "./records-summary";
import type { ConversationSource } from "./source-paths";

export type Normalised = {
  /** Absent when no adapter matched: the data goes to validation as it is, and the errors say why. */
  format?: ImportFormat;
  /** The upload in the Turnscope shape, still unvalidated. */
  data: unknown;
  /** Where each conversation sits in the file, when that differs from the Turnscope shape. */
  sources?: ConversationSource[];
  /** Errors the adapter found itself (CSV rows with the wrong number of fields). */
  errors?: ImportIssue[];
  /** Whole-file adapters: how the file's records became conversations (see records-summary.ts). */
  records?: RecordsRead;
  /** Text the adapter knowingly does not store (a second copy in another shape), per field path. */
  notImported?: NotImported[];
  /** Keys whose values say which thing, not what was said (ids, timestamps of the format), for text accounting. */
  structural?: readonly string[];
};
