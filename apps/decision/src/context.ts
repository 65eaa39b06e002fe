import type { IngestInput } from '@singleshot/core';
import type { RouteConfig } from '@singleshot/config';

/** The template context of a message (events: source, type, id, data, recipients; mail: mail.*, owner). */
export function templateContext(input: IngestInput, owner: string | undefined): Record<string, unknown> {
  if (input.kind === 'event') {
    return { source: input.source, type: input.type, id: input.eventId, data: input.data, recipients: input.recipients ?? [] };
  }
  return {
    source: 'mail',
    owner,
    mail: {
      from: input.from,
      to: input.to,
      subject: input.subject,
      date: input.date,
      excerpt: input.excerpt,
      mailbox: input.mailboxId,
      identity: input.identity,
      note: input.note,
    },
  };
}

/** The recipients a route names for a message, before normalization. */
export function recipientsOf(route: RouteConfig, input: IngestInput, owner: string | undefined): string[] {
  if (route.recipients === 'event') return input.kind === 'event' ? (input.recipients ?? []) : [];
  if (route.recipients === 'owner') return owner ? [owner] : [];
  return route.recipients;
}
