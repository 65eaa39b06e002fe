import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctx, request } from '@singleshot/test-fault-matrix';
import { startFakeSendgrid, startFakeSes, startSmtpSink, type FakeProviderApi, type SmtpSink } from '@singleshot/test-harness';
import { listUnsubscribeHeaders } from './list-unsubscribe';
import { SendgridProvider } from './sendgrid-provider';
import { SesProvider } from './ses-provider';
import { SmtpProvider } from './smtp-provider';

const lu = { url: 'https://notify.example.test/v1/unsubscribe/abc.def', mailto: 'unsubscribe@example.test' };

describe('List-Unsubscribe (RFC 8058) on every email provider', () => {
  let sink: SmtpSink;
  let ses: FakeProviderApi;
  let sendgrid: FakeProviderApi;
  beforeAll(async () => {
    [sink, ses, sendgrid] = await Promise.all([startSmtpSink(), startFakeSes(), startFakeSendgrid()]);
  });
  afterAll(async () => {
    await Promise.all([sink.close(), ses.close(), sendgrid.close()]);
  });

  it('formats the URL first, the mailto second, and the one-click POST header', () => {
    expect(listUnsubscribeHeaders(lu)).toEqual([
      { name: 'List-Unsubscribe', value: '<https://notify.example.test/v1/unsubscribe/abc.def>, <mailto:unsubscribe@example.test?subject=unsubscribe>' },
      { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
    ]);
    expect(listUnsubscribeHeaders({ url: lu.url })[0]).toEqual({ name: 'List-Unsubscribe', value: `<${lu.url}>` });
  });

  it('smtp: both headers in the message, none without listUnsubscribe', async () => {
    const provider = new SmtpProvider({ name: 'relay', type: 'smtp', host: '127.0.0.1', port: sink.port, secure: false, from: 'shop@example.test' });
    try {
      await provider.send({ ...request('a@example.test'), listUnsubscribe: lu }, ctx());
      await provider.send(request('b@example.test'), ctx());
      const [withIt, without] = sink.messages;
      expect(withIt?.headers.get('list-unsubscribe')).toEqual([listUnsubscribeHeaders(lu)[0]?.value]);
      expect(withIt?.headers.get('list-unsubscribe-post')).toEqual(['List-Unsubscribe=One-Click']);
      expect(without?.headers.has('list-unsubscribe')).toBe(false);
      expect(without?.headers.has('list-unsubscribe-post')).toBe(false);
    } finally {
      await provider.close();
    }
  });

  it('ses: both headers in Content.Simple.Headers', async () => {
    const provider = new SesProvider({ type: 'ses', name: 'ses', region: 'eu-west-1', endpoint: ses.origin, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, from: 'orders@example.test' });
    try {
      const req = { ...request('c@example.test'), listUnsubscribe: lu };
      await provider.send(req, ctx());
      const body = ses.requests.at(-1)?.body as { Content: { Simple: { Headers: unknown } } };
      expect(body.Content.Simple.Headers).toEqual([
        { Name: 'X-Singleshot-Operation', Value: req.operationKey },
        ...listUnsubscribeHeaders(lu).map((h) => ({ Name: h.name, Value: h.value })),
      ]);
    } finally {
      await provider.close();
    }
  });

  it('sendgrid: both headers in headers', async () => {
    const provider = new SendgridProvider({ type: 'sendgrid', name: 'sendgrid', apiKey: 'SG.test', from: 'orders@example.test', endpoint: sendgrid.origin });
    try {
      const req = { ...request('d@example.test'), listUnsubscribe: lu };
      await provider.send(req, ctx());
      const body = sendgrid.requests.at(-1)?.body as { headers: Record<string, string> };
      expect(body.headers).toEqual({
        'X-Singleshot-Operation': req.operationKey,
        'List-Unsubscribe': listUnsubscribeHeaders(lu)[0]?.value,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      });
    } finally {
      await provider.close();
    }
  });
});
