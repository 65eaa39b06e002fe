import { renderTemplate } from '@singleshot/core';
import type { WhatsappTemplateConfig } from '@singleshot/config';

/** The `whatsapp:` channel prefix Twilio puts on WhatsApp addresses. */
export const WHATSAPP_PREFIX = 'whatsapp:';

/** `+4915…` or `whatsapp:+4915…` → `whatsapp:+4915…` (recipients are checked at fan-out). */
export function whatsappAddress(number: string): string {
  return number.startsWith(WHATSAPP_PREFIX) ? number : `${WHATSAPP_PREFIX}${number}`;
}

/** What one operation puts on the wire: a free-form body, or an approved template with its variables. */
export type WhatsappContent = FreeformContent | TemplateContent;
export interface FreeformContent {
  kind: 'freeform';
  body: string;
}
export interface TemplateContent {
  kind: 'template';
  contentSid: string;
  variables: Record<string, string>;
  template: WhatsappTemplateConfig;
}

/** The parts of an operation the content is made from. */
export interface WhatsappSource {
  route?: string;
  recipient: string;
  text: string;
  subject: string;
  data: Record<string, unknown>;
}

/** The route's own template, else `default`, else none. */
export function templateFor(templates: Readonly<Record<string, WhatsappTemplateConfig>>, route: string | undefined): WhatsappTemplateConfig | undefined {
  return (route !== undefined ? templates[route] : undefined) ?? templates.default;
}

/** The free-form body: the rendered text (the subject when a route renders no text, as for SMS). */
export function freeform(src: WhatsappSource): FreeformContent {
  return { kind: 'freeform', body: src.text || src.subject };
}

/** The template send: each placeholder's value rendered against the operation's `{ data, recipient, route, subject, text }`. */
export function templated(template: WhatsappTemplateConfig, src: WhatsappSource): TemplateContent {
  const context = { data: src.data, recipient: src.recipient, route: src.route ?? '', subject: src.subject, text: src.text };
  const variables = Object.fromEntries(Object.entries(template.variables).map(([k, v]) => [k, renderTemplate(v, context)]));
  return { kind: 'template', contentSid: template.contentSid, variables, template };
}

/**
 * The message body Twilio lists for a template send, when the template's
 * approved text is configured: its `{{1}}` placeholders filled with the
 * variables. Undefined: the body cannot be predicted.
 */
export function expectedTemplateBody(content: TemplateContent): string | undefined {
  const text = content.template.text;
  if (text === undefined) return undefined;
  return text.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (_m, name: string) => content.variables[name] ?? '');
}

/** The form fields of the create call for this content. */
export function contentFields(content: WhatsappContent): Record<string, string> {
  return content.kind === 'freeform' ? { Body: content.body } : { ContentSid: content.contentSid, ContentVariables: JSON.stringify(content.variables) };
}
