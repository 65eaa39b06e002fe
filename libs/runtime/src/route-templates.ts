import { readFile } from 'node:fs/promises';
import { ConfigError, formatPath, type Config, type ConfigIssue } from '@singleshot/config';
import { compileMjml, compileTemplate, type CompiledTemplate } from '@singleshot/templates';

/** A notification's rendered content. `html` only when the route has an HTML body. */
export interface RenderedMessage {
  subject: string;
  text: string;
  html?: string;
}

/** A route's document templates, compiled. */
export interface DocumentTemplates {
  body: CompiledTemplate;
  fileName: CompiledTemplate;
  title: CompiledTemplate;
}

/** Every route's templates, compiled once per process. */
export interface RouteTemplates {
  /** Renders a route's subject, text and HTML; throws TemplateError when a helper fails. */
  message(route: string, context: Record<string, unknown>): RenderedMessage;
  /** A route's document templates, or undefined when the route has no such document. */
  document(route: string, name: string): DocumentTemplates | undefined;
}

/**
 * Reads and compiles every route's template files and inline templates once
 * (Handlebars; MJML to HTML first). Paths were made absolute and checked for
 * syntax at config load; this step adds MJML, and reports every problem as
 * one ConfigError by path, so a broken template stops the start.
 */
export async function compileRouteTemplates(config: Pick<Config, 'routes'>, source = 'config'): Promise<RouteTemplates> {
  const issues: ConfigIssue[] = [];
  const messages = new Map<string, { subject: CompiledTemplate; text: CompiledTemplate; html?: CompiledTemplate }>();
  const documents = new Map<string, DocumentTemplates>();

  const compile = async (path: PropertyKey[], load: () => Promise<string> | string, kind: 'text' | 'html', mjml = false): Promise<CompiledTemplate | undefined> => {
    try {
      const raw = await load();
      return compileTemplate(mjml ? await compileMjml(raw) : raw, kind);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      issues.push({ path: formatPath(path), message: code && code !== 'TEMPLATE_INVALID' ? `cannot read template (${code})` : `invalid template: ${(err as Error).message}` });
      return undefined;
    }
  };

  for (const [index, route] of config.routes.entries()) {
    const t = route.template;
    const at = (key: string): PropertyKey[] => ['routes', index, 'template', key];
    const subject = await compile(at('subject'), () => t.subject, 'text');
    const text = t.textFile ? await compile(at('textFile'), () => readFile(t.textFile as string, 'utf8'), 'text') : await compile(at('text'), () => t.text, 'text');
    let html: CompiledTemplate | undefined;
    if (t.html !== undefined) html = await compile(at('html'), () => t.html as string, 'html');
    else if (t.htmlFile) html = await compile(at('htmlFile'), () => readFile(t.htmlFile as string, 'utf8'), 'html');
    else if (t.mjmlFile) html = await compile(at('mjmlFile'), () => readFile(t.mjmlFile as string, 'utf8'), 'html', true);
    if (subject && text) messages.set(route.name, { subject, text, ...(html ? { html } : {}) });

    for (const [d, doc] of route.documents.entries()) {
      const dp = (key: string): PropertyKey[] => ['routes', index, 'documents', d, key];
      const body = await compile(dp('template'), () => readFile(doc.template, 'utf8'), 'text');
      const fileName = await compile(dp('fileName'), () => doc.fileName ?? `${doc.name}.pdf`, 'text');
      const title = await compile(dp('title'), () => doc.title ?? doc.fileName ?? doc.name, 'text');
      if (body && fileName && title) documents.set(`${route.name}\n${doc.name}`, { body, fileName, title });
    }
  }
  if (issues.length > 0) throw new ConfigError(source, issues);

  return {
    message(route, context) {
      const m = messages.get(route);
      if (!m) return { subject: '', text: '' };
      return { subject: m.subject(context), text: m.text(context), ...(m.html ? { html: m.html(context) } : {}) };
    },
    document: (route, name) => documents.get(`${route}\n${name}`),
  };
}

/**
 * Route templates from inline sources only, compiled synchronously (tests and
 * tools that build routes in code). Routes with template files need
 * compileRouteTemplates.
 */
export function inlineRouteTemplates(routes: Pick<Config, 'routes'>['routes']): RouteTemplates {
  const compiled = new Map(
    routes.map((route) => [
      route.name,
      {
        subject: compileTemplate(route.template.subject, 'text'),
        text: compileTemplate(route.template.text, 'text'),
        html: route.template.html !== undefined ? compileTemplate(route.template.html, 'html') : undefined,
      },
    ]),
  );
  return {
    message(route, context) {
      const m = compiled.get(route);
      if (!m) return { subject: '', text: '' };
      return { subject: m.subject(context), text: m.text(context), ...(m.html ? { html: m.html(context) } : {}) };
    },
    document: () => undefined,
  };
}
