import { describe, expect, it } from 'vitest';
import { eventBodySchema, plainEventBody } from './event-body';

const long = (n: number) => 'x'.repeat(n);
// Bodies as JSON text (what ingest parses), at and past every limit of the schema.
const corpus: string[] = [
  '{"id":"e1","source":"shop","type":"order.created"}',
  '{"id":"e1","source":"shop","type":"order.created","recipients":["a@example.com","  b@example.com  "],"data":{"orderId":"o-1","n":[1,2,{"x":null}]}}',
  '{"source":"shop","type":"t"}',
  '{"source":"shop","type":"t","extra":1,"more":{"a":1}}',
  '{"id":"","source":"shop","type":"t"}',
  `{"id":"${long(512)}","source":"shop","type":"t"}`,
  `{"id":"${long(513)}","source":"shop","type":"t"}`,
  '{"id":null,"source":"shop","type":"t"}',
  '{"id":7,"source":"shop","type":"t"}',
  '{"source":"","type":"t"}',
  `{"source":"${long(200)}","type":"t"}`,
  `{"source":"${long(201)}","type":"t"}`,
  '{"source":"mail","type":"t"}',
  '{"source":"Mail","type":"t"}',
  '{"source":"shop"}',
  '{"source":"shop","type":""}',
  `{"source":"shop","type":"${long(200)}"}`,
  `{"source":"shop","type":"${long(201)}"}`,
  '{"source":"shop","type":["t"]}',
  // Astral characters: two UTF-16 units, one code point (zod's measure).
  `{"source":"${'😀'.repeat(100)}","type":"t"}`,
  `{"source":"${'😀'.repeat(100)}x","type":"t"}`,
  `{"source":"${'😀'.repeat(201)}","type":"t"}`,
  `{"source":"shop","type":"t","recipients":["${'😀'.repeat(256)}"]}`,
  '{"source":"shop","type":"t","recipients":[]}',
  '{"source":"shop","type":"t","recipients":["   "]}',
  '{"source":"shop","type":"t","recipients":["\\u00a0a\\t\\n"]}',
  `{"source":"shop","type":"t","recipients":["  ${long(512)}  "]}`,
  `{"source":"shop","type":"t","recipients":["${long(513)}"]}`,
  '{"source":"shop","type":"t","recipients":[1]}',
  '{"source":"shop","type":"t","recipients":"a@example.com"}',
  '{"source":"shop","type":"t","recipients":null}',
  `{"source":"shop","type":"t","recipients":[${Array.from({ length: 1000 }, (_, i) => `"r${i}"`).join(',')}]}`,
  `{"source":"shop","type":"t","recipients":[${Array.from({ length: 1001 }, (_, i) => `"r${i}"`).join(',')}]}`,
  '{"source":"shop","type":"t","data":{}}',
  '{"source":"shop","type":"t","data":{"2":"b","1":"a","z":"c"}}',
  '{"source":"shop","type":"t","data":null}',
  '{"source":"shop","type":"t","data":[]}',
  '{"source":"shop","type":"t","data":"x"}',
  '{"source":"shop","type":"t","data":{"__proto__":{"polluted":true},"a":1}}',
  '{"__proto__":{"source":"shop","type":"t"}}',
  '{"__proto__":{"x":1},"source":"shop","type":"t"}',
  '[]',
  '"string"',
  'null',
  '42',
  '{}',
];

describe('plainEventBody', () => {
  it('accepts only what the schema accepts, and gives exactly what it outputs', () => {
    let taken = 0;
    for (const text of corpus) {
      const plain = plainEventBody(JSON.parse(text));
      const schema = eventBodySchema.safeParse(JSON.parse(text));
      if (plain === undefined) {
        // Valid bodies it leaves to the schema: a record with its own `__proto__`
        // key, and strings past a limit in UTF-16 units (zod counts code points).
        if (schema.success) expect(text, 'a valid body the fast check refused').toMatch(/"data":\{"__proto__"|😀/);
        continue;
      }
      taken++;
      expect(schema.success, text).toBe(true);
      expect(plain, text).toEqual(schema.data);
      expect(JSON.stringify(plain), text).toBe(JSON.stringify(schema.data));
    }
    expect(taken).toBe(corpus.filter((t) => eventBodySchema.safeParse(JSON.parse(t)).success).length - 2);
  });

  it('takes the usual producer body', () => {
    const body = { id: 'b-1', source: 'bench', type: 'order.created', recipients: ['r0@bench.example', 'r1@bench.example'], data: { orderId: 'b-1' } };
    expect(plainEventBody(JSON.parse(JSON.stringify(body)))).toEqual(body);
  });

  it('leaves bodies it cannot vouch for to the schema (its error details come from there)', () => {
    for (const text of ['{"source":"mail","type":"t"}', '{"source":"shop","type":"t","data":{"__proto__":{"p":1}}}', '{"source":"shop","type":"t","recipients":["  "]}']) {
      expect(plainEventBody(JSON.parse(text)), text).toBeUndefined();
    }
  });
});
