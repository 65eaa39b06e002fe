import type mjml2htmlType from 'mjml';
import { TemplateError } from './engine';

// mjml is the largest package we ship, in heap and in time to load: loaded on
// the first MJML template, so a process without one never pays it.
let mjml: Promise<typeof mjml2htmlType> | undefined;
const loadMjml = () => (mjml ??= import('mjml').then((m) => m.default));

/**
 * Compiles MJML to responsive HTML once, at start. Handlebars expressions pass
 * through MJML untouched (they are text to it) and are compiled afterwards, so
 * a route's MJML is one HTML template per process, not one MJML run per send.
 * Validation is strict: an MJML error is a config error, never a broken mail.
 */
export async function compileMjml(source: string): Promise<string> {
  const mjml2html = await loadMjml();
  let result: Awaited<ReturnType<typeof mjml2html>>;
  try {
    result = await mjml2html(source, { validationLevel: 'strict', keepComments: false });
  } catch (err) {
    const errors = (err as { errors?: { formattedMessage?: string; message?: string }[] }).errors;
    const first = errors?.[0];
    throw new TemplateError(first?.formattedMessage ?? first?.message ?? (err as Error).message.split('\n')[0] ?? 'invalid MJML');
  }
  if (result.errors.length > 0) {
    const first = result.errors[0];
    throw new TemplateError(first?.formattedMessage ?? first?.message ?? 'invalid MJML');
  }
  return result.html;
}
