import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRawMail } from './parse-raw-mail';

// CI lays shared/ beside the repository clone, so the corpus sits four levels up.
const CORPUS = path.resolve(__dirname, '../../../../shared/corpus/mail');
const files = readdirSync(CORPUS).filter((f) => f.endsWith('.eml')).sort();

describe('parseRawMail over the shared mail corpus', () => {
  it('finds the corpus (an empty list would make every case below vacuous)', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
  });

  it.each(files)('%s parses to a stable 64-hex key within the parse budget', async (file) => {
    const raw = readFileSync(path.join(CORPUS, file));
    const first = await parseRawMail(raw, { mailboxId: 'corpus' });
    const second = await parseRawMail(raw, { mailboxId: 'corpus' });

    expect(first.messageKey).toMatch(/^[0-9a-f]{64}$/);
    expect(second.messageKey).toBe(first.messageKey);
    expect(second.input).toEqual(first.input);
    // The body parse finished inside the budget: no timeout or failure fallback.
    expect(first.input.note).toBeUndefined();
    expect(first.input.sizeBytes).toBe(raw.length);
    expect(first.input.excerpt.length).toBeLessThanOrEqual(500);
    expect(first.input.identity === 'message-id').toBe(first.identityFallbackReason === undefined);
  });

  it('keys corpus mails by Message-ID where they have one, as the raw header says', async () => {
    const raw = readFileSync(path.join(CORPUS, 'spam.eml'));
    const parsed = await parseRawMail(raw, { mailboxId: 'corpus' });
    expect(parsed.input.identity).toBe('message-id');
    expect(parsed.input.messageId).toBe('MXQAHQMRSTRWAEMHJAPA@guide-des-vins-de-bourgogne.fr');
    expect(parsed.input.from).toBe('Matilda Klein <noreply@guide-des-vins-de-bourgogne.fr>');
    expect(parsed.input.excerpt.startsWith('Im Jahre 2007 wurde er als \u201easozialer Penner\u201c beschimpft!')).toBe(true);
  });

  it('decodes an encoded-word subject and reads a text body', async () => {
    const raw = readFileSync(path.join(CORPUS, 'nodemailer.eml'));
    const parsed = await parseRawMail(raw, { mailboxId: 'corpus' });
    expect(parsed.input.subject).toBe('Nodemailer is unicode friendly \u2714 (1476358788189)');
    expect(parsed.input.to).toBe('Andris Reinman <andris+123@kreata.ee>, andris.reinman@gmail.com');
    expect(parsed.input.excerpt).toBe('Hello to myself!');
  });
});
