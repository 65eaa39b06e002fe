import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020';

/**
 * Checks an OpenAPI 3.1 document (with @seriousme/openapi-schema-validator,
 * against the official 3.1 meta-schema) and live answers against it (with
 * Ajv's JSON Schema 2020-12 validator, the dialect of 3.1 schemas).
 */
export async function documentProblems(doc: object): Promise<unknown[]> {
  const result = await new Validator().validate(doc as Record<string, unknown>);
  return result.valid ? [] : [result.errors];
}

type Doc = { paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>> };

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The document's path template a request URL falls under (`/a/{key}` for `/a/1?x`), or undefined. */
export function templateFinder(doc: object): (url: string) => string | undefined {
  const templates = Object.keys((doc as Doc).paths).map((template) => ({
    template,
    re: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  return (url) => {
    const path = new URL(url, 'http://x').pathname;
    // The most specific template wins (a literal segment over a parameter).
    return templates.filter((t) => t.re.test(path)).sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0]?.template;
  };
}

export function answerChecker(doc: object) {
  // OpenAPI keywords (`example`, `contentMediaType`) are not validation keywords: strict off.
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const templateOf = templateFinder(doc);
  /** Problems of one live answer: undocumented path, method, status or media type, or a body off its schema. */
  return (method: string, url: string, status: number, contentType: string | null, body: unknown): string[] => {
    const template = templateOf(url);
    if (!template) return [`${method} ${new URL(url, 'http://x').pathname}: no such path in the document`];
    const match = { template };
    const operation = (doc as Doc).paths[match.template]?.[method.toLowerCase()];
    if (!operation) return [`${method} ${match.template}: method not documented`];
    const key = operation.responses?.[String(status)] ? String(status) : 'default';
    const response = operation.responses?.[key];
    if (!response) return [`${method} ${match.template}: status ${status} not documented`];
    if (!response.content) return [];
    const media = (contentType ?? '').split(';')[0]?.trim() ?? '';
    if (!response.content[media]) return [`${method} ${match.template} ${status}: media type "${media}" not documented`];
    if (!response.content[media]?.schema) return [];
    const ref = `openapi#/${pointer('paths', match.template, method.toLowerCase(), 'responses', key, 'content', media, 'schema')}`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${method} ${match.template} ${status}: ${e.instancePath || '(body)'} ${e.message ?? ''}`);
  };
}
