import Handlebars from 'handlebars';
import { HELPERS } from './helpers';

/** A compiled template: context in, text out. Never throws for missing values (they render empty). */
export type CompiledTemplate = (context: Record<string, unknown>) => string;

/** What a template is for: `text` renders values as they are, `html` escapes them. */
export type TemplateKind = 'text' | 'html';

/** A template that does not parse or render; `code` is stable for callers. */
export class TemplateError extends Error {
  readonly code = 'TEMPLATE_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

// One isolated Handlebars environment with our helpers: nothing registered
// globally, so no other code in the process can change how templates render.
const env = Handlebars.create();
for (const [name, fn] of Object.entries(HELPERS)) env.registerHelper(name, fn as Handlebars.HelperDelegate);

function firstLine(message: string): string {
  return message.split('\n').find((line) => line.trim() !== '') ?? message;
}

/**
 * Parses a template without rendering it. Returns the parser's problem (with
 * its line) or undefined. Used at config load so a typo stops the start.
 */
export function checkTemplateSyntax(source: string): string | undefined {
  try {
    env.parse(source);
    return undefined;
  } catch (err) {
    return firstLine((err as Error).message);
  }
}

/**
 * Compiles a template once. `html` escapes every `{{value}}` (`{{{value}}}`
 * for trusted markup); `text` does not, since a subject or a text body is not
 * markup. Missing values render as the empty string; prototype properties are
 * never reachable (Handlebars' default since 4.6).
 */
export function compileTemplate(source: string, kind: TemplateKind): CompiledTemplate {
  const problem = checkTemplateSyntax(source);
  if (problem) throw new TemplateError(problem);
  const template = env.compile(source, { noEscape: kind === 'text', strict: false });
  return (context) => {
    try {
      return template(context);
    } catch (err) {
      // A helper used wrongly (e.g. an unknown helper with arguments): a render error, not a crash.
      throw new TemplateError(firstLine((err as Error).message));
    }
  };
}
