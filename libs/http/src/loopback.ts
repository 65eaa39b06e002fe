import { isIP } from 'node:net';

/** `localhost`, 127.0.0.0/8, `::1` and IPv4-mapped loopback. `0.0.0.0` and `::` are every interface, not loopback. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h);
  return false;
}
