import type { HelperOptions } from 'handlebars';

/**
 * Template helpers for dates, money and lists. Deterministic: no "now", no
 * process locale or time zone (the defaults are `en-US` and `UTC`), so the same
 * event renders the same text on every machine and every retry.
 */

type Hash = Record<string, unknown>;

function hashOf(args: unknown[]): Hash {
  const last = args[args.length - 1] as HelperOptions | undefined;
  return (last && typeof last === 'object' && 'hash' in last ? (last.hash as Hash) : {}) ?? {};
}

function positional(args: unknown[]): unknown[] {
  return args.slice(0, -1);
}

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function toDate(value: unknown): Date | undefined {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value;
  if (typeof value === 'number' || (typeof value === 'string' && value.trim() !== '')) {
    const d = new Date(typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}

/**
 * `{{date value}}` → `2026-12-01`; `{{date value "datetime"}}` → `2026-12-01 09:30 UTC`;
 * `"iso"` → ISO 8601; `"long"` → `December 1, 2026` (Intl, `locale=` and `timeZone=` apply).
 * An unparseable value renders as it is (a visible mistake beats a blank).
 */
export function dateHelper(...args: unknown[]): string {
  const [value, format] = positional(args);
  const hash = hashOf(args);
  const d = toDate(value);
  if (!d) return value === undefined || value === null ? '' : String(value);
  const timeZone = str(hash.timeZone, 'UTC');
  const locale = str(hash.locale, 'en-US');
  switch (str(format, 'date')) {
    case 'iso':
      return d.toISOString();
    case 'datetime':
      if (timeZone === 'UTC') return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)} UTC`;
      return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(d);
    case 'long':
      return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone }).format(d);
    default:
      if (timeZone === 'UTC') return d.toISOString().slice(0, 10);
      return new Intl.DateTimeFormat('en-CA', { timeZone }).format(d);
  }
}

/**
 * `{{money 1234.5 "EUR"}}` → `€1,234.50`; `locale="de-DE"` → `1.234,50 €`;
 * `minor=true` reads the amount in minor units (cents). A non-number renders as it is.
 */
export function moneyHelper(...args: unknown[]): string {
  const [amount, currency] = positional(args);
  const hash = hashOf(args);
  const n = typeof amount === 'number' ? amount : typeof amount === 'string' && amount.trim() !== '' ? Number(amount) : NaN;
  if (!Number.isFinite(n)) return amount === undefined || amount === null ? '' : String(amount);
  const code = str(currency, str(hash.currency, 'USD')).toUpperCase();
  const format = new Intl.NumberFormat(str(hash.locale, 'en-US'), { style: 'currency', currency: code });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(hash.minor === true ? n / 10 ** digits : n);
}

/** `{{list items}}` → `a, b and c`; `{{list items ", "}}` → `a, b, c`; `field="name"` picks a property of each item. */
export function listHelper(...args: unknown[]): string {
  const [items, separator] = positional(args);
  const hash = hashOf(args);
  if (!Array.isArray(items)) return items === undefined || items === null ? '' : String(items);
  const field = typeof hash.field === 'string' ? hash.field : undefined;
  const parts = items.map((item) =>
    String(field && item && typeof item === 'object' ? ((item as Record<string, unknown>)[field] ?? '') : (item ?? '')),
  );
  if (typeof separator === 'string') return parts.join(separator);
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/** `{{sum items "total"}}`: the sum of one numeric property over a list (or of the list's numbers). */
export function sumHelper(...args: unknown[]): number {
  const [items, field] = positional(args);
  if (!Array.isArray(items)) return 0;
  let total = 0;
  for (const item of items) {
    const v = typeof field === 'string' && item && typeof item === 'object' ? (item as Record<string, unknown>)[field] : item;
    const n = typeof v === 'number' ? v : Number(v);
    if (Number.isFinite(n)) total += n;
  }
  // Cents added as floats drift (0.1 + 0.2); money has at most 4 decimals in practice.
  return Math.round(total * 1e4) / 1e4;
}

/** `{{multiply quantity price}}`, rounded like `sum`. */
export function multiplyHelper(...args: unknown[]): number {
  const [a, b] = positional(args).map(Number);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return 0;
  return Math.round((a as number) * (b as number) * 1e4) / 1e4;
}

/** `{{json value}}`: the value as JSON (what a `{{path}}` to an object rendered before Handlebars). */
export function jsonHelper(...args: unknown[]): string {
  const [value] = positional(args);
  return value === undefined ? '' : JSON.stringify(value);
}

/**
 * `{{fields data}}` → `orderId: o-9, total: 17`: an object's top-level entries
 * as `key: value`, strings as they are, anything else as JSON (so a nested
 * object never reads `[object Object]`). `{{fields data "\n"}}` puts one per
 * line. A value that is not an object renders as `{{json}}` would.
 */
export function fieldsHelper(...args: unknown[]): string {
  const [value, separator] = positional(args);
  if (value === undefined || value === null) return '';
  if (typeof value !== 'object' || Array.isArray(value)) return typeof value === 'string' ? value : JSON.stringify(value);
  return Object.entries(value as Record<string, unknown>)
    .map(([key, v]) => `${key}: ${typeof v === 'string' ? v : (JSON.stringify(v) ?? '')}`)
    .join(typeof separator === 'string' ? separator : ', ');
}

/** `{{default value "fallback"}}`: the fallback when the value is missing or empty. */
export function defaultHelper(...args: unknown[]): unknown {
  const [value, fallback] = positional(args);
  return value === undefined || value === null || value === '' ? fallback : value;
}

export const HELPERS = {
  date: dateHelper,
  money: moneyHelper,
  list: listHelper,
  sum: sumHelper,
  multiply: multiplyHelper,
  json: jsonHelper,
  fields: fieldsHelper,
  default: defaultHelper,
} as const;
