/**
 * State that must be one per server process. Next.js may load a module once per route bundle, so
 * anything shared between routes (running executions, event subscribers, limiters) lives here.
 */
const store = globalThis as typeof globalThis & { __turnscope?: Map<string, unknown> };

export function processSingleton<T>(key: string, init: () => T): T {
  store.__turnscope ??= new Map();
  if (!store.__turnscope.has(key)) store.__turnscope.set(key, init());
  return store.__turnscope.get(key) as T;
}
