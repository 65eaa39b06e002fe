import { describe, expect, it } from 'vitest';
import { sendJson } from './send-json';
import { serveHandler } from '@singleshot/test-harness';

describe('sendJson', () => {
  it('answers JSON with its length, uncacheable, and keeps headers set before', async () => {
    const server = await serveHandler((_req, res) => {
      res.setHeader('retry-after', '1');
      sendJson(res, 202, { messageKey: 'k', status: 'accepted', note: 'ünïcode' });
    });
    try {
      const res = await fetch(server.url);
      const text = await res.text();
      expect(res.status).toBe(202);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.headers.get('etag')).toBeNull();
      expect(JSON.parse(text)).toEqual({ messageKey: 'k', status: 'accepted', note: 'ünïcode' });
    } finally {
      await server.close();
    }
  });
});
