/**
 * `{{path.to.value}}` templates. Missing values render as the empty string:
 * a notification with a blank field beats a dropped one. No code execution.
 */
export function renderTemplate(template: string, context: Record<string, unknown>): string {
  return template.replace(/\{\{\s*([A-Za-z0-9_.$-]+)\s*\}\}/g, (_m, path: string) => {
    let value: unknown = context;
    for (const part of path.split('.')) {
      // Own properties only: `{{constructor}}` or `{{data.toString}}` would
      // otherwise render function source or the prototype instead of ''.
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return '';
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined || value === null) return '';
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  });
}
