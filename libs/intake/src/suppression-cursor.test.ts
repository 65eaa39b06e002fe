import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, SuppressionInputError } from './operator-suppression';

// The list's cursor is opaque to the caller and checked when it comes back:
// any recipient the list can hold fits the query parameter the API accepts.
describe('the suppression list cursor', () => {
  it('comes back as the position it was made from, for the longest recipient of wide characters', () => {
    const recipient = '\u{1F4E7}"\\\u0001'.repeat(128);
    const cursor = encodeCursor({ at: 1_700_000_000_000, recipient });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor.length).toBeLessThanOrEqual(8192);
    expect(decodeCursor(cursor)).toEqual({ at: 1_700_000_000_000, recipient });
  });

  it.each(['not-a-cursor', Buffer.from('[1.5,"r"]').toString('base64url'), Buffer.from('[1,""]').toString('base64url'), Buffer.from('{"at":1}').toString('base64url')])(
    '%s is refused as INVALID_REQUEST',
    (cursor) => {
      expect(() => decodeCursor(cursor)).toThrow(SuppressionInputError);
      expect(() => decodeCursor(cursor)).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    },
  );
});
