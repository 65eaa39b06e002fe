import { z } from 'zod';
import { configSchema } from './schema';

/**
 * The configuration reference (docs/configuration.md), generated from the zod
 * schema so the page cannot drift from what the loader accepts: every field's
 * type and default come from the schema, its text from the field's
 * `.meta({ description })`. `npm run docs:config` writes the page;
 * config-reference.test.ts fails when the page on disk differs.
 */

/** One row of a reference table. */
export interface ConfigReferenceRow {
  path: string;
  type: string;
  default: string;
  description: string;
}

/** One table: a top-level section, or one variant of a discriminated union (`type`, `from`, …) inside it. */
export interface ConfigReferenceTable {
  title: string;
  description: string;
  rows: ConfigReferenceRow[];
}

interface JsonNode {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
  keyName?: string;
  properties?: Record<string, JsonNode>;
  required?: string[];
  additionalProperties?: JsonNode | boolean;
  items?: JsonNode;
  anyOf?: JsonNode[];
  oneOf?: JsonNode[];
}

const SAFE_MAX = Number.MAX_SAFE_INTEGER;

const variantsOf = (node: JsonNode): JsonNode[] | undefined => node.anyOf ?? node.oneOf;

/** The key (`type`, `from`, …) whose constant tells the variants of a union of objects apart, and each variant's value. */
function discriminator(node: JsonNode): { key: string; values: string[] } | undefined {
  const variants = variantsOf(node);
  const first = variants?.[0]?.properties;
  if (!variants || !first) return undefined;
  for (const key of Object.keys(first)) {
    const values = variants.map((v) => v.properties?.[key]?.const);
    if (values.every((t): t is string => typeof t === 'string')) return { key, values };
  }
  return undefined;
}

const isMap = (node: JsonNode): node is JsonNode & { additionalProperties: JsonNode } =>
  node.type === 'object' && !node.properties && typeof node.additionalProperties === 'object';

function typeOf(node: JsonNode): string {
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((v) => JSON.stringify(v)).join(' | ');
  const tags = discriminator(node);
  if (tags) return `object (${tags.key}: ${tags.values.join(' | ')})`;
  const variants = variantsOf(node);
  if (variants) return variants.map(typeOf).join(' | ');
  if (node.type === 'integer' || node.type === 'number') {
    const lo = node.minimum;
    const hi = node.maximum !== undefined && node.maximum < SAFE_MAX ? node.maximum : undefined;
    if (lo !== undefined && hi !== undefined) return `${node.type} ${lo}–${hi}`;
    if (lo !== undefined) return `${node.type} ≥ ${lo}`;
    return node.type;
  }
  if (node.type === 'string') return node.format === 'uri' ? 'URL' : node.format === 'email' ? 'email address' : 'string';
  if (node.type === 'array') return node.items ? `${typeOf(node.items)}[]` : 'array';
  if (isMap(node)) return `map of ${node.keyName ?? 'name'} → ${typeOf(node.additionalProperties)}`;
  return node.type ?? 'any';
}

function defaultOf(node: JsonNode, required: boolean): string {
  if (node.default === undefined) return required ? 'required' : '—';
  if (typeof node.default === 'object' && node.default !== null && Object.keys(node.default).length === 0 && !Array.isArray(node.default)) return '—';
  return `\`${JSON.stringify(node.default).replace(/,/g, ', ')}\``;
}

/** Walks one object's fields into rows; nested objects add their own rows, unions of objects their own tables. */
function walk(node: JsonNode, path: string, rows: ConfigReferenceRow[], tables: ConfigReferenceTable[]): void {
  const required = new Set(node.required ?? []);
  for (const [name, field] of Object.entries(node.properties ?? {})) {
    const fieldPath = path ? `${path}.${name}` : name;
    rows.push({ path: fieldPath, type: typeOf(field), default: defaultOf(field, required.has(name)), description: field.description ?? '' });
    descend(field, fieldPath, rows, tables);
  }
}

function descend(field: JsonNode, path: string, rows: ConfigReferenceRow[], tables: ConfigReferenceTable[]): void {
  if (field.type === 'object' && field.properties) walk(field, path, rows, tables);
  else if (isMap(field)) descend(field.additionalProperties, `${path}.<${field.keyName ?? 'name'}>`, rows, tables);
  else if (field.type === 'array' && field.items) descend(field.items, `${path}[]`, rows, tables);
  else {
    const tags = discriminator(field);
    if (!tags) return;
    for (const variant of variantsOf(field) ?? []) {
      const value = String(variant.properties?.[tags.key]?.const);
      const table: ConfigReferenceTable = { title: `\`${path}\` with \`${tags.key}: ${value}\``, description: variant.description ?? '', rows: [] };
      tables.push(table);
      walk(variant, path, table.rows, tables);
    }
  }
}

/** Every table of the reference, in the schema's order: each section, then the variants found in it. */
export function configReferenceTables(): ConfigReferenceTable[] {
  const root = z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as JsonNode;
  const tables: ConfigReferenceTable[] = [];
  for (const [name, section] of Object.entries(root.properties ?? {})) {
    const table: ConfigReferenceTable = { title: `\`${name}\``, description: section.description ?? '', rows: [] };
    const nested: ConfigReferenceTable[] = [];
    if (section.type === 'object' && section.properties) walk(section, name, table.rows, nested);
    else descend(section, name, table.rows, nested);
    const leaf = !table.rows.length && !nested.length;
    if (leaf) table.rows.push({ path: name, type: typeOf(section), default: defaultOf(section, (root.required ?? []).includes(name)), description: section.description ?? '' });
    tables.push({ ...table, description: leaf ? '' : table.description }, ...nested);
  }
  // A union used in several places (a source's `id` in every source type) is shown once.
  const seen = new Set<string>();
  return tables.filter((t) => {
    const key = JSON.stringify([t.title, t.rows]);
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function renderTable(table: ConfigReferenceTable): string {
  const lines = [`### ${table.title}`, ''];
  if (table.description) lines.push(table.description, '');
  if (table.rows.length) {
    lines.push('| path | type | default | description |', '|---|---|---|---|');
    for (const row of table.rows) lines.push(`| \`${cell(row.path)}\` | ${cell(row.type)} | ${cell(row.default)} | ${cell(row.description)} |`);
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * docs/configuration.md: the hand-written introduction (tools/gen-config-docs.intro.md)
 * followed by the generated tables.
 */
export function renderConfigDocs(intro: string): string {
  const notice = '<!-- Generated by `npm run docs:config` from libs/config/src/*schema*.ts and tools/gen-config-docs.intro.md; do not edit by hand. -->';
  return [notice, '', intro.trimEnd(), '', '## Reference', '', ...configReferenceTables().map(renderTable)].join('\n').trimEnd() + '\n';
}
