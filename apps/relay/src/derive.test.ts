import { describe, expect, it } from 'vitest';
import { parseConfig, type SourceMapping } from '@singleshot/config';
import { atPath, deriveEvent } from './derive';

/** A source's mapping as the config loader fills it in (defaults included). */
function mappingOf(entry: Record<string, unknown>): SourceMapping {
  const config = parseConfig({ sources: [{ type: 'rabbitmq', name: 'q', url: 'amqp://127.0.0.1:5999', queue: 'orders', source: 'shop', ...entry }] });
  return config.sources[0] as SourceMapping;
}

describe('deriveEvent', () => {
  it('takes id, type, recipients and data from the default paths', () => {
    const body = Buffer.from(JSON.stringify({ id: 'e-1', type: 'order.created', recipients: [' a@example.com '], data: { n: 1 } }));
    expect(deriveEvent(mappingOf({}), { body })).toEqual({ ok: true, event: { id: 'e-1', source: 'shop', type: 'order.created', recipients: ['a@example.com'], data: { n: 1 } } });
  });

  it('takes the id from a header, an AMQP property or a nested path, and an integer id as its digits', () => {
    const body = JSON.stringify({ type: 't', order: { id: 42 } });
    expect(deriveEvent(mappingOf({ id: { from: 'header', name: 'X-Event-Id' } }), { body, headers: { 'x-event-id': 'h-1' } })).toMatchObject({ ok: true, event: { id: 'h-1' } });
    expect(deriveEvent(mappingOf({ id: { from: 'property' } }), { body, properties: { messageId: 'p-1' } })).toMatchObject({ ok: true, event: { id: 'p-1' } });
    expect(deriveEvent(mappingOf({ id: { from: 'json', path: '$.order.id' } }), { body })).toMatchObject({ ok: true, event: { id: '42' } });
  });

  it('takes the id from a Kafka record key, and a record without a key has none', () => {
    const config = parseConfig({ sources: [{ type: 'kafka', name: 'k', brokers: ['127.0.0.1:9092'], topic: 'orders', source: 'shop', id: { from: 'key' } }] });
    const mapping = config.sources[0] as SourceMapping;
    const body = JSON.stringify({ id: 'in-body', type: 't' });
    expect(deriveEvent(mapping, { body, key: Buffer.from('ev-1001') })).toMatchObject({ ok: true, event: { id: 'ev-1001' } });
    expect(deriveEvent(mapping, { body, key: null })).toEqual({ ok: false, problem: 'no event id at the record key' });
  });

  it('falls back to the origin\'s id, and never invents one', () => {
    const body = JSON.stringify({ type: 't' });
    expect(deriveEvent(mappingOf({}), { body, fallbackId: 'nats-1' })).toMatchObject({ ok: true, event: { id: 'nats-1' } });
    expect(deriveEvent(mappingOf({}), { body })).toEqual({ ok: false, problem: 'no event id at $.id in the body' });
  });

  it('maps a fixed type, other paths, and the whole body as data', () => {
    const body = JSON.stringify({ ref: 'r-1', to: ['b@example.com'], amount: 3 });
    const mapping = mappingOf({ id: { from: 'json', path: '$.ref' }, mapping: { typeValue: 'payment.received', recipients: '$.to', data: '$' } });
    expect(deriveEvent(mapping, { body })).toEqual({ ok: true, event: { id: 'r-1', source: 'shop', type: 'payment.received', recipients: ['b@example.com'], data: { ref: 'r-1', to: ['b@example.com'], amount: 3 } } });
  });

  it('calls poison what can never be an event', () => {
    const m = mappingOf({});
    expect(deriveEvent(m, { body: Buffer.from('{not json') })).toEqual({ ok: false, problem: 'the body is not valid JSON' });
    expect(deriveEvent(m, { body: JSON.stringify({ id: 'x', type: '' }) })).toMatchObject({ ok: false });
    expect(deriveEvent(m, { body: JSON.stringify({ id: 'x', type: 't', recipients: 'a@example.com' }) })).toMatchObject({ ok: false });
    expect(deriveEvent(m, { body: JSON.stringify({ id: 'x', type: 't', data: [1] }) })).toMatchObject({ ok: false });
    expect(deriveEvent(m, { body: JSON.stringify({ id: 'x'.repeat(513), type: 't' }) })).toMatchObject({ ok: false });
  });

  it('reads only own keys along a path', () => {
    expect(atPath({ a: { b: 1 } }, '$.a.b')).toBe(1);
    expect(atPath({ a: [1] }, '$.a.0')).toBeUndefined();
    expect(atPath({}, '$.constructor')).toBeUndefined();
  });
});

describe('sources: config', () => {
  it('refuses an id place the source type does not have, both type and typeValue, and duplicate names', () => {
    const base = { type: 'redis-streams', name: 's', url: 'redis://127.0.0.1:6390', stream: 'x', source: 'shop' };
    expect(() => parseConfig({ sources: [{ ...base, id: { from: 'property' } }] })).toThrow(/sources\[0\]\.id\.from: a redis-streams source takes the id from json or field/);
    expect(() => parseConfig({ sources: [{ ...base, mapping: { type: '$.t', typeValue: 't' } }] })).toThrow(/typeValue/);
    expect(() => parseConfig({ sources: [base, base] })).toThrow(/duplicate source name/);
    expect(() => parseConfig({ sources: [{ ...base, source: 'mail' }] })).toThrow(/reserved/);
    expect(() => parseConfig({ sources: [{ ...base, mapping: { data: 'data' } }] })).toThrow(/JSON path/);
  });
});
