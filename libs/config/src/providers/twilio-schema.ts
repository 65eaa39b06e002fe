import { z } from 'zod';
import { E164 } from '@singleshot/core';
import { httpUrl, identifier, positiveInt } from '../primitives';
import { twilioAccountFields } from './twilio-account';

/** `type: twilio-sms`: Twilio Programmable Messaging (`POST /2010-04-01/Accounts/{sid}/Messages.json`). */
export const twilioSmsProviderSchema = z
  .strictObject({
    type: z.literal('twilio-sms').describe('Twilio Messages API; the message `sid` is the external id.'),
    name: identifier.describe('Unique within the channel; a metric label.'),
    ...twilioAccountFields,
    from: z
      .string()
      .regex(E164, 'must be an E.164 number (+14155550100)')
      .optional()
      .describe('Sender number in E.164; or give `messagingServiceSid`.'),
    messagingServiceSid: z
      .string()
      .regex(/^MG[0-9a-fA-F]{32}$/, 'must be a messaging service SID (MG + 32 hex digits)')
      .optional()
      .describe('Messaging service SID (`MG` + 32 hex digits), instead of `from`.'),
    statusCallbackUrl: httpUrl
      .optional()
      .describe('Where Twilio posts status callbacks: ingest\'s public `/v1/feedback/twilio` URL (the same as `feedback.twilio.publicUrl`). Each message asks for `<statusCallbackUrl>?op=<operation key>`; without it no delivery feedback is asked for.'),
    endpoint: httpUrl.optional().describe('API origin override; default `https://api.twilio.com`.'),
    timeoutMs: positiveInt.default(10_000).describe('Upper bound of one call.'),
  })
  .superRefine((p, ctx) => {
    if (p.authToken === undefined) ctx.addIssue({ code: 'custom', path: ['authToken'], message: 'required: give authToken or authTokenFile' });
    if ((p.from === undefined) === (p.messagingServiceSid === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'give exactly one of from and messagingServiceSid' });
    }
  })
  .describe('Recipients must be E.164 numbers (`+14155550100`), checked at fan-out.');

export type TwilioSmsProviderConfig = z.output<typeof twilioSmsProviderSchema>;
