/** Left-aligned columns, two spaces apart. */
export function printTable(rows: string[][]): void {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  for (const row of rows) console.log('  ' + row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd());
}

export function formatTime(ms: number | undefined): string {
  return ms === undefined || Number.isNaN(ms) ? '' : new Date(ms).toISOString();
}
