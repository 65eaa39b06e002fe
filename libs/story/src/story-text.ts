import type { Story } from './story-types';

/** How the text story shows a time: ISO 8601 in UTC, to the millisecond (steps are often milliseconds apart). */
function time(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * The story as plain text lines, for `singleshot story KEY`: a header (key,
 * message, routes, trace id), the operations, then every step in order, each
 * naming its operation by the first 12 characters of its key.
 */
export function storyText(story: Story): string[] {
  const lines: string[] = [];
  lines.push(`${story.kind} ${story.key}`);
  if (story.kind === 'operation' && story.messageKey) lines.push(`message   ${story.messageKey}`);
  lines.push(`routes    ${story.routes.join(', ') || '(none)'}`);
  lines.push(`trace id  ${story.traceId ?? '(not traced)'}`);
  lines.push('', 'operations:');
  if (story.operations.length === 0) lines.push('  (none)');
  for (const op of story.operations) {
    lines.push(`  ${op.operationKey.slice(0, 12)}  ${op.status.padEnd(10)} ${op.recipient} (${op.channel}, route ${op.route || '?'})  fence ${op.fence || '-'}  attempts ${op.attempts}${op.replays ? `  replays ${op.replays}` : ''}${op.externalId ? `  ${op.provider} ${op.externalId}` : ''}`);
  }
  lines.push('', 'story:');
  for (const e of story.events) {
    const who = e.operationKey ? e.operationKey.slice(0, 12) : 'message     ';
    const facts = Object.entries(e.detail)
      .filter(([name]) => !['attempt', 'fence'].includes(name) || e.kind === 'claim')
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    lines.push(`  ${time(e.at)}  ${who}  ${e.kind.padEnd(9)} ${e.title}${facts ? `  [${facts}]` : ''}`);
  }
  return lines;
}
