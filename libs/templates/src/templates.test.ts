import { describe, expect, it } from 'vitest';
import { renderTemplate } from '@singleshot/core';
import { checkTemplateSyntax, compileTemplate, TemplateError } from './engine';
import { compileMjml } from './mjml';

const ctx = {
  source: 'shop',
  count: 0,
  flag: false,
  data: { orderId: 'o-9', at: '2026-03-04T05:06:07Z', total: 1234.5, cents: 995, tags: ['a', 'b', 'c'], items: [{ sku: 'x', qty: 2, price: 1.1 }, { sku: 'y', qty: 1, price: 0.2 }], name: 'Ada <ada@example.com> & co' },
};

describe('Handlebars templates', () => {
  it('reads the existing {{path}} templates the same way (text, including missing and falsy values)', () => {
    for (const source of ['Order {{data.orderId}} via {{source}}', '{{ data.orderId }}', '{{count}}/{{flag}}', '[{{nope}}][{{data.nope.deeper}}]', '[{{constructor}}][{{data.toString}}][{{__proto__}}]', 'From {{data.name}}']) {
      expect(compileTemplate(source, 'text')(ctx), source).toBe(renderTemplate(source, ctx));
    }
  });

  it('escapes values in HTML by default, and only there', () => {
    expect(compileTemplate('<b>{{data.name}}</b>', 'html')(ctx)).toBe('<b>Ada &lt;ada@example.com&gt; &amp; co</b>');
    expect(compileTemplate('{{data.name}}', 'text')(ctx)).toBe('Ada <ada@example.com> & co');
  });

  it('has helpers for dates, money and lists that do not depend on the machine', () => {
    const t = (s: string) => compileTemplate(s, 'text')(ctx);
    expect(t('{{date data.at}}')).toBe('2026-03-04');
    expect(t('{{date data.at "datetime"}}')).toBe('2026-03-04 05:06 UTC');
    expect(t('{{date data.at "long"}}')).toBe('March 4, 2026');
    expect(t('{{date data.at "long" locale="de-DE" timeZone="Europe/Berlin"}}')).toBe('4. März 2026');
    expect(t('{{money data.total "EUR"}}')).toBe('€1,234.50');
    expect(t('{{money data.total "EUR" locale="de-DE"}}')).toBe('1.234,50\u00a0€');
    expect(t('{{money data.cents "USD" minor=true}}')).toBe('$9.95');
    expect(t('{{list data.tags}}')).toBe('a, b and c');
    expect(t('{{list data.tags " / "}}')).toBe('a / b / c');
    expect(t('{{list data.items field="sku"}}')).toBe('x and y');
    expect(t('{{#each data.items}}{{sku}}={{money (multiply qty price) "EUR"}};{{/each}}')).toBe('x=€2.20;y=€0.20;');
    expect(t('{{money (sum data.items "price") "EUR"}}')).toBe('€1.30');
    expect(t('{{json data.tags}} {{default data.missing "n/a"}}')).toBe('["a","b","c"] n/a');
    expect(t('{{date "not a date"}} {{money "abc" "EUR"}}')).toBe('not a date abc');
  });

  it('{{fields}} prints an object as key: value pairs, nested values as JSON, never [object Object]', () => {
    const t = (s: string) => compileTemplate(s, 'text')(ctx);
    expect(t('{{fields data.items.[0]}}')).toBe('sku: x, qty: 2, price: 1.1');
    expect(t('{{fields data.items.[1] "\n"}}')).toBe('sku: y\nqty: 1\nprice: 0.2');
    expect(t('{{fields data}}')).toBe(
      'orderId: o-9, at: 2026-03-04T05:06:07Z, total: 1234.5, cents: 995, tags: ["a","b","c"], items: [{"sku":"x","qty":2,"price":1.1},{"sku":"y","qty":1,"price":0.2}], name: Ada <ada@example.com> & co',
    );
    expect(t('[{{fields data.missing}}][{{fields data.tags}}][{{fields data.orderId}}][{{fields data.total}}]')).toBe('[][["a","b","c"]][o-9][1234.5]');
  });

  it('reports a syntax error with its line, and a misused helper as a TemplateError', () => {
    expect(checkTemplateSyntax('ok {{a}}')).toBeUndefined();
    expect(checkTemplateSyntax('line 1\n{{#each x}}unclosed')).toMatch(/line 2|Parse error/);
    expect(() => compileTemplate('{{#if}}', 'text')).toThrow(TemplateError);
    expect(() => compileTemplate('{{nohelper a b}}', 'text')(ctx)).toThrow(TemplateError);
  });
});

describe('MJML', () => {
  it('compiles to responsive HTML with the Handlebars expressions intact, then renders escaped', async () => {
    const html = await compileMjml('<mjml><mj-body><mj-section><mj-column><mj-text>Order {{data.orderId}} for {{data.name}}</mj-text></mj-column></mj-section></mj-body></mjml>');
    expect(html).toContain('<!doctype html>');
    expect(html).toContain('@media');
    const out = compileTemplate(html, 'html')(ctx);
    expect(out).toContain('Order o-9 for Ada &lt;ada@example.com&gt; &amp; co');
  });

  it('an invalid MJML document is a TemplateError naming the element', async () => {
    await expect(compileMjml('<mjml><mj-body><mj-sectio></mj-sectio></mj-body></mjml>')).rejects.toThrow(/mj-sectio/);
  });
});
