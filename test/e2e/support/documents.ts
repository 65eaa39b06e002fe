import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import type { SmtpSink } from '@singleshot/test-harness';

/** Test fixtures for documents: a purchase-order template, events with N recipients, the emails' attachments. */
export const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export const PO_TEMPLATE = `# Purchase order {{data.orderId}}
Date: {{date data.placedAt}}
Supplier: {{data.supplier}}
---
| SKU | Item | Qty | Price | Total |
|---|---|---|---|---|
{{#each data.items}}| {{sku}} | {{name}} | {{qty}} | {{money price @root.data.currency}} | {{money (multiply qty price) @root.data.currency}} |
{{/each}}{{#each data.pages}}{{#each @root.data.items}}| {{sku}} | {{name}} | {{qty}} | {{money price @root.data.currency}} | {{money (multiply qty price) @root.data.currency}} |
{{/each}}{{/each}}---
Total: {{money data.total data.currency}}
`;

export function templateDir(): { dir: string; template: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ss-docs-e2e-'));
  const template = join(dir, 'purchase-order.hbs');
  writeFileSync(template, PO_TEMPLATE);
  return { dir, template, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const recipients = (tag: string, n = 10) => Array.from({ length: n }, (_, i) => `buyer${i}-${tag}@example.test`);

/** An order event; `pages` repeats the item rows (a large, slow document). */
export function orderEvent(id: string, to: string[], pages = 0): Record<string, unknown> {
  return {
    id,
    source: 'shop',
    type: 'order.created',
    recipients: to,
    data: {
      orderId: id,
      placedAt: '2026-11-30T10:00:00Z',
      supplier: 'Bolts & Nuts Ltd',
      currency: 'EUR',
      items: [
        { sku: 'B-1', name: 'Bolt M6', qty: 100, price: 0.12 },
        { sku: 'N-1', name: 'Nut M6', qty: 100, price: 0.05 },
      ],
      pages: Array.from({ length: pages }, (_, i) => i),
      total: 17,
    },
  };
}

/** The PDF attachments the sink took for one recipient (parsed from the raw MIME). */
export async function attachmentsFor(sink: SmtpSink, recipient: string): Promise<{ fileName: string; checksum: string; html: boolean }[]> {
  const out: { fileName: string; checksum: string; html: boolean }[] = [];
  for (const message of sink.taken().filter((m) => m.envelope.to.includes(recipient))) {
    const mail = await simpleParser(message.raw);
    for (const a of mail.attachments) out.push({ fileName: a.filename ?? '', checksum: sha(a.content), html: typeof mail.html === 'string' });
  }
  return out;
}
