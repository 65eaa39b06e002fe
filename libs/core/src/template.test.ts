import { describe, expect, it } from 'vitest';
import { renderTemplate } from './template';

const context = {
  source: 'shop',
  count: 0,
  flag: false,
  data: { orderId: 'o-9', customer: { name: 'Ada', tags: ['a', 'b'] }, nothing: null },
  recipients: ['a@example.com'],
};

describe('renderTemplate', () => {
  it('renders top-level and nested paths', () => {
    expect(renderTemplate('Order {{data.orderId}} for {{data.customer.name}} via {{source}}', context)).toBe('Order o-9 for Ada via shop');
  });

  it('allows spaces inside the braces', () => {
    expect(renderTemplate('{{ data.orderId }}', context)).toBe('o-9');
  });

  it('renders falsy values as text, not as missing', () => {
    expect(renderTemplate('{{count}}/{{flag}}', context)).toBe('0/false');
  });

  it('renders missing, null and paths through primitives as the empty string', () => {
    expect(renderTemplate('[{{nope}}][{{data.nope.deeper}}][{{data.nothing}}][{{source.length.x}}]', context)).toBe('[][][][]');
  });

  it('renders objects and arrays as JSON', () => {
    expect(renderTemplate('{{data.customer}}', context)).toBe('{"name":"Ada","tags":["a","b"]}');
    expect(renderTemplate('{{recipients}}', context)).toBe('["a@example.com"]');
  });

  it('treats inherited properties as missing (no prototype or function text leaks)', () => {
    expect(renderTemplate('[{{constructor}}][{{data.toString}}][{{__proto__}}][{{data.constructor.name}}]', context)).toBe('[][][][]');
    expect(renderTemplate('[{{source.length}}]', context)).toBe('[]');
  });

  it('leaves text without placeholders and malformed placeholders alone', () => {
    expect(renderTemplate('plain {text} {{ }} {{a b}}', context)).toBe('plain {text} {{ }} {{a b}}');
  });

  it('does not evaluate rendered values as templates again', () => {
    expect(renderTemplate('{{x}}', { x: '{{source}}', source: 'shop' })).toBe('{{source}}');
  });
});

describe('renderTemplate with arrays', () => {
  it('indexes arrays by position', () => {
    expect(renderTemplate('{{recipients.0}}|{{recipients.1}}', context)).toBe('a@example.com|');
  });
});
