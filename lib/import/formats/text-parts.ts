import { isRecord } from "../issues";

/**
 * The text of a message's content as chat formats write it: a string as it is, or a list of parts whose
 * `text` fields are joined by newlines (parts without text, such as images, left out); anything else "".
 */
export const partsText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : ""))
          .filter(Boolean)
          .join("\n")
      : "";
