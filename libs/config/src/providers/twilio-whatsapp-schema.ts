import { z } from 'zod';
import { WHATSAPP_RECIPIENT } from '@singleshot/core';
import { httpUrl, identifier, positiveInt } from '../primitives';
import { twilioAccountFields } from './twilio-account';

/** An approved WhatsApp template (a Twilio Content resource) and how its placeholders are filled. */
export const whatsappTemplateSchema = z
  .strictObject({
    contentSid: z
      .string()
      .regex(/^HX[0-9a-fA-F]{32}$/, 'must be a content SID (HX + 32 hex digits)')
      .describe('The approved template\'s Content SID (`HX` + 32 hex digits), sent as `ContentSid`.'),
    variables: z
      .record(z.string().min(1), z.string())
      .default({})
      .meta({
        description: 'Placeholder → value template (`"1": "{{data.name}}"`), rendered against the operation\'s `{ data, recipient, route, subject, text }` (`text`: the route\'s rendered text) and sent as the `ContentVariables` JSON.',
        keyName: 'placeholder',
      }),
    text: z
      .string()
      .min(1)
      .optional()
      .describe('The approved template\'s text with its `{{1}}` placeholders, as Twilio shows it. Used only by lookups, to recognize a copy of an in-doubt template send in the recipient\'s message list; without it such a copy cannot be told from other messages.'),
  })
  .describe('One approved template.');

/** `type: twilio-whatsapp`: WhatsApp through Twilio's Messages API (`POST /2010-04-01/Accounts/{sid}/Messages.json`). */
export const twilioWhatsappProviderSchema = z
  .strictObject({
    type: z.literal('twilio-whatsapp').describe('WhatsApp through Twilio\'s Messages API; the message `sid` is the external id.'),
    name: identifier.describe('Unique within the channel; a metric label.'),
    ...twilioAccountFields,
    from: z
      .string()
      .regex(WHATSAPP_RECIPIENT, 'must be a WhatsApp sender: whatsapp:+14155550100 (or the bare E.164 number)')
      .describe('The WhatsApp sender, `whatsapp:+14155550100` (a bare E.164 number gets the prefix).'),
    sessionWindow: z
      .enum(['template-only', 'check'])
      .default('template-only')
      .describe('`template-only`: every message is the route\'s approved template (no session is assumed). `check`: the recipient\'s last inbound message is read first; inside the 24-hour customer service window the rendered text goes as a free-form `Body`, outside it the template.'),
    templates: z
      .record(identifier, whatsappTemplateSchema)
      .default({})
      .meta({ description: 'Approved templates by route name, `default` for routes without their own. Outside the session window (always, with `template-only`) a route without one is refused with `WHATSAPP_OUTSIDE_SESSION`, a definite failure the chain falls back from.', keyName: 'route' }),
    statusCallbackUrl: httpUrl
      .optional()
      .describe('Where Twilio posts status callbacks: ingest\'s public `/v1/feedback/twilio` URL (the same as `feedback.twilio.publicUrl`). Each message asks for `<statusCallbackUrl>?op=<operation key>`.'),
    endpoint: httpUrl.default('https://api.twilio.com').describe('API origin; a test server or proxy.'),
    timeoutMs: positiveInt.default(10_000).describe('Upper bound of one call.'),
  })
  .superRefine((p, ctx) => {
    if (p.authToken === undefined) ctx.addIssue({ code: 'custom', path: ['authToken'], message: 'required: give authToken or authTokenFile' });
  })
  .describe('Recipients are E.164 numbers, bare or as `whatsapp:+…`, checked at fan-out.');

export type TwilioWhatsappProviderConfig = z.output<typeof twilioWhatsappProviderSchema>;
export type WhatsappTemplateConfig = z.output<typeof whatsappTemplateSchema>;

