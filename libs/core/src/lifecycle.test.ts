import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LIFECYCLE_EVENTS, TRANSITIONS, stateDiagram, transitionOf } from './lifecycle';
import { TERMINAL_STATUSES } from './types';

const PROTOCOL = fileURLToPath(new URL('../../../docs/protocol.md', import.meta.url));
const BEGIN = '<!-- state diagram: generated from TRANSITIONS in libs/core/src/lifecycle.ts by npm run docs:states -->';
const END = '<!-- end of state diagram -->';

describe('the transition table', () => {
  it('has one row per status, step and condition', () => {
    const seen = TRANSITIONS.map((t) => `${t.from}|${t.event}|${t.when ?? ''}`);
    expect(seen.length).toBe(new Set(seen).size);
  });

  it('uses every step', () => {
    expect(LIFECYCLE_EVENTS.filter((e) => !TRANSITIONS.some((t) => t.event === e))).toEqual([]);
  });

  it('leaves a terminal status only by a replay (a claim of a sent one journals a duplicate and stays)', () => {
    const leaving = TRANSITIONS.filter((t) => t.from !== 'absent' && TERMINAL_STATUSES.includes(t.from) && t.to !== t.from);
    expect(leaving.every((t) => t.event === 'replay')).toBe(true);
    expect(transitionOf('cancelled', 'replay')).toBeUndefined();
    expect(transitionOf('sent', 'replay')).toBeUndefined();
  });

  it('docs/protocol.md draws the table as it is (npm run docs:states writes it)', () => {
    const page = readFileSync(PROTOCOL, 'utf8');
    const start = page.indexOf(BEGIN);
    const end = page.indexOf(END);
    expect(start).toBeGreaterThan(0);
    expect(page.slice(start + BEGIN.length, end).trim()).toBe(stateDiagram());
  });
});
