import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkTemplateSyntax } from '@singleshot/templates';
import type { ConfigIssue } from './config-error';
import { formatPath } from './config-error';
import { isRawObject } from './raw';

const ROUTE_TEMPLATE_FILES = ['textFile', 'htmlFile', 'mjmlFile'] as const;

/**
 * Makes every template file path of the routes absolute (against `baseDir`,
 * the config file's folder), in place, and checks each file now: a missing
 * file or a Handlebars syntax error is a config problem at its path, not a
 * failed send hours later. Inline templates are checked too. MJML is compiled
 * (and so checked) at start, see compileRouteTemplates in @singleshot/runtime.
 */
export function resolveTemplateFiles(raw: unknown, baseDir: string): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!isRawObject(raw) || !Array.isArray(raw.routes)) return issues;
  raw.routes.forEach((route, index) => {
    if (!isRawObject(route)) return;
    const template = route.template;
    if (isRawObject(template)) {
      for (const key of ['subject', 'text', 'html'] as const) {
        const source = template[key];
        if (typeof source !== 'string') continue;
        const problem = checkTemplateSyntax(source);
        if (problem) issues.push({ path: formatPath(['routes', index, 'template', key]), message: `invalid template: ${problem}` });
      }
      for (const key of ROUTE_TEMPLATE_FILES) {
        const file = template[key];
        if (typeof file !== 'string' || file === '') continue;
        template[key] = checkFile(resolve(baseDir, file), ['routes', index, 'template', key], issues);
      }
    }
    if (Array.isArray(route.documents)) {
      route.documents.forEach((doc, d) => {
        if (!isRawObject(doc)) return;
        if (typeof doc.template === 'string' && doc.template !== '') {
          doc.template = checkFile(resolve(baseDir, doc.template), ['routes', index, 'documents', d, 'template'], issues);
        }
        for (const key of ['fileName', 'title'] as const) {
          if (typeof doc[key] !== 'string') continue;
          const problem = checkTemplateSyntax(doc[key]);
          if (problem) issues.push({ path: formatPath(['routes', index, 'documents', d, key]), message: `invalid template: ${problem}` });
        }
      });
    }
  });
  return issues;
}

function checkFile(file: string, path: PropertyKey[], issues: ConfigIssue[]): string {
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch (err) {
    issues.push({ path: formatPath(path), message: `cannot read template ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})` });
    return file;
  }
  const problem = checkTemplateSyntax(source);
  if (problem) issues.push({ path: formatPath(path), message: `invalid template ${file}: ${problem}` });
  return file;
}
