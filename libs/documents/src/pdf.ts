import type PDFDocumentType from 'pdfkit';

// pdfkit (megabytes of heap) loads on the first PDF: only the render app makes them.
let pdfkit: Promise<typeof PDFDocumentType> | undefined;
const loadPdfkit = () => (pdfkit ??= import('pdfkit').then((m) => m.default));

/** Metadata written into the PDF; everything comes from the event, nothing from the clock. */
export interface PdfMeta {
  title: string;
  /** The event's time: the PDF's CreationDate and ModDate (and so its file id). */
  createdAt: Date;
  author?: string;
}

const MARGIN = 50;

/**
 * Lays a rendered document template out as a PDF. The template's output is a
 * small line-based markup, so document templates are plain Handlebars files:
 *
 * - `# Title`, `## Heading`: bold headings;
 * - `| a | b | c |`: a table row (columns share the width); a row followed by
 *   `|---|---|` is the bold header row;
 * - `---`: a horizontal rule; an empty line: space; anything else: a paragraph.
 *
 * Deterministic: standard PDF fonts (no subset tags), fixed CreationDate and
 * ModDate, and pdfkit's file id derived from that metadata, so the same input
 * gives the same bytes on every attempt and every machine.
 */
export async function renderPdf(markup: string, meta: PdfMeta): Promise<Buffer> {
  const PDFDocument = await loadPdfkit();
  return new Promise((resolvePdf, reject) => {
    const doc = new PDFDocument({
      size: 'A4',
      margin: MARGIN,
      compress: true,
      info: {
        Title: meta.title,
        Author: meta.author ?? 'singleshot',
        Producer: 'singleshot',
        Creator: 'singleshot',
        CreationDate: meta.createdAt,
        ModDate: meta.createdAt,
      },
    });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolvePdf(Buffer.concat(chunks)));
    doc.on('error', reject);
    layout(doc, markup).then(
      () => doc.end(),
      (err: unknown) => reject(err as Error),
    );
  });
}

/** Lines laid out between two yields to the event loop. */
const LINES_PER_SLICE = 200;

const SEPARATOR = /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/;

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

/**
 * Layout is CPU work: it yields to the event loop every few hundred lines, so
 * a long document never freezes the process it runs in (in `singleshot start`
 * that is also the process that extends delivery leases and answers ingest).
 * The output does not depend on where it yields.
 */
async function layout(doc: PDFKit.PDFDocument, markup: string): Promise<void> {
  const lines = markup.replace(/\r\n?/g, '\n').split('\n');
  const width = doc.page.width - 2 * MARGIN;
  for (let i = 0; i < lines.length; i++) {
    if (i > 0 && i % LINES_PER_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const line = (lines[i] ?? '').trimEnd();
    const next = (lines[i + 1] ?? '').trim();
    if (line.trim() === '') {
      doc.moveDown(0.5);
    } else if (line.startsWith('# ')) {
      doc.font('Helvetica-Bold').fontSize(20).text(line.slice(2).trim(), { width });
      doc.moveDown(0.3);
    } else if (line.startsWith('## ')) {
      doc.font('Helvetica-Bold').fontSize(14).text(line.slice(3).trim(), { width });
      doc.moveDown(0.2);
    } else if (/^-{3,}$/.test(line.trim())) {
      const y = doc.y + 4;
      doc.moveTo(MARGIN, y).lineTo(MARGIN + width, y).lineWidth(0.5).stroke();
      doc.y = y + 6;
    } else if (line.trim().startsWith('|')) {
      if (SEPARATOR.test(line.trim())) continue;
      row(doc, cells(line), width, SEPARATOR.test(next));
    } else {
      doc.font('Helvetica').fontSize(11).text(line, MARGIN, doc.y, { width });
    }
  }
}

function row(doc: PDFKit.PDFDocument, values: string[], width: number, header: boolean): void {
  const columns = Math.max(1, values.length);
  const colWidth = width / columns;
  doc.font(header ? 'Helvetica-Bold' : 'Helvetica').fontSize(10);
  const heights = values.map((v) => doc.heightOfString(v, { width: colWidth - 6 }));
  const height = Math.max(12, ...heights);
  if (doc.y + height > doc.page.height - MARGIN) doc.addPage();
  const top = doc.y;
  values.forEach((value, index) => {
    // Numbers read best right-aligned in a table (amounts, quantities).
    const align = index > 0 && /^[-+]?[\p{Sc}]?\s?[\d.,]+\s?[\p{Sc}A-Z]{0,3}$/u.test(value) ? 'right' : 'left';
    doc.text(value, MARGIN + index * colWidth, top, { width: colWidth - 6, align });
  });
  doc.x = MARGIN;
  doc.y = top + height + 4;
  if (header) {
    doc.moveTo(MARGIN, doc.y - 2).lineTo(MARGIN + width, doc.y - 2).lineWidth(0.5).stroke();
  }
}
