import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { renderPdf } from './pdf';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const markup = '# Purchase order PO-7\n## Lines\n| Item | Qty | Price |\n|---|---|---|\n| Bolt | 4 | €1.20 |\n---\nTotal €4.80\n\nThanks';

describe('renderPdf', () => {
  it('is deterministic: the same input gives the same bytes, with the event time as CreationDate', async () => {
    const meta = { title: 'PO-7', createdAt: new Date('2026-03-04T05:06:07Z') };
    const a = await renderPdf(markup, meta);
    const b = await renderPdf(markup, meta);
    expect(a.subarray(0, 5).toString()).toBe('%PDF-');
    expect(sha(a)).toBe(sha(b));
    expect(a.toString('latin1')).toContain('D:20260304050607Z');
  });

  it('different content or a different event time gives different bytes', async () => {
    const meta = { title: 'PO-7', createdAt: new Date('2026-03-04T05:06:07Z') };
    const base = sha(await renderPdf(markup, meta));
    expect(sha(await renderPdf(`${markup}!`, meta))).not.toBe(base);
    expect(sha(await renderPdf(markup, { ...meta, createdAt: new Date('2026-03-04T05:06:08Z') }))).not.toBe(base);
  });

  it('yields to the event loop while laying out a long document (other work in the process keeps running)', async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => `| item ${i} | ${i} |`).join('\n');
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 0);
    try {
      await renderPdf(`# long\n${rows}`, { title: 'long', createdAt: new Date(0) });
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
  });
});
