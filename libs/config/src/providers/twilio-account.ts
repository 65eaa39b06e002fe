import { z } from 'zod';
import { nonEmpty } from '../primitives';

/** The Twilio account fields every Twilio provider (SMS, WhatsApp) takes, defined once. */
export const twilioAccountFields = {
  accountSid: z
    .string()
    .regex(/^AC[0-9a-fA-F]{32}$/, 'must be an account SID (AC + 32 hex digits)')
    .describe('Account SID (`AC` + 32 hex digits).'),
  authToken: z.string().optional().describe('Auth token of the account (or `authTokenFile`).'),
  authTokenFile: nonEmpty.optional().describe('A file holding the auth token.'),
};
