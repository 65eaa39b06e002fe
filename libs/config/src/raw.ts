/** Helpers for walking config input before it is validated (anything may be anywhere). */

export type RawObject = Record<string, unknown>;

export function isRawObject(value: unknown): value is RawObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The object at `key` of `parent`, created when absent. Returns undefined when
 * something that is not an object sits there: validation reports that one.
 */
export function ensureSection(parent: RawObject, key: string): RawObject | undefined {
  const existing = parent[key];
  if (existing === undefined || existing === null) {
    const created: RawObject = {};
    parent[key] = created;
    return created;
  }
  return isRawObject(existing) ? existing : undefined;
}
