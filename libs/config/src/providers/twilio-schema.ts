import { z } from 'zod';
import { E164 } from '@singleshot/core';
import { httpUrl, identifier, nonEmpty, positiveInt } from '../primitives';

/** `type: twilio-sms`: Twilio Programmable Messaging (`POST /2010-04-01/Accounts/{sid}/Messages.json`). */
export const twilioSmsProviderSchema = z
  .strictObject({
    type: z.literal('twilio-sms'),
    name: identifier,
    accountSid: z.string().regex(/^AC[0-9a-fA-F]{32}$/, 'must be an account SID (AC + 32 hex digits)'),
    /** Auth token of the account (or `authTokenFile`). */
    authToken: z.string().optional(),
    authTokenFile: nonEmpty.optional(),
    /** Sender number in E.164, or give `messagingServiceSid`. */
    from: z.string().regex(E164, 'must be an E.164 number (+14155550100)').optional(),
    messagingServiceSid: z.string().regex(/^MG[0-9a-fA-F]{32}$/, 'must be a messaging service SID (MG + 32 hex digits)').optional(),
    /** API origin override (a test server); default `https://api.twilio.com`. */
    endpoint: httpUrl.optional(),
    timeoutMs: positiveInt.default(10_000),
  })
  .superRefine((p, ctx) => {
    if (p.authToken === undefined) ctx.addIssue({ code: 'custom', path: ['authToken'], message: 'required: give authToken or authTokenFile' });
    if ((p.from === undefined) === (p.messagingServiceSid === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'give exactly one of from and messagingServiceSid' });
    }
  });

export type TwilioSmsProviderConfig = z.output<typeof twilioSmsProviderSchema>;
