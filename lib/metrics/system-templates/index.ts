/** Every built-in template, in the order the library shows them (conversation, message, step). */
import { checkTemplates } from "./checks";
import { conversationTemplates } from "./conversation";
import { messageTemplates } from "./message";
import { stepTemplates } from "./step";
import type { SystemTemplate } from "./types";

export type { SystemTemplate } from "./types";

export const systemTemplates: readonly SystemTemplate[] = [...conversationTemplates, ...messageTemplates, ...stepTemplates, ...checkTemplates];
