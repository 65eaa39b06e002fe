import { ValidationError } from '@singleshot/core';
import { HttpProvider } from './http-provider';
import { LogProvider } from './log-provider';
import { SendgridProvider } from './sendgrid-provider';
import { SesProvider } from './ses-provider';
import { SlackProvider } from './slack-provider';
import { SmtpProvider } from './smtp-provider';
import { TwilioSmsProvider } from './twilio-sms-provider';
import { TwilioWhatsappProvider } from './twilio-whatsapp-provider';
import type { Provider, ProviderDeps, ProviderOptions } from './provider';

/**
 * Builds a provider from its (already validated) config entry. Throws
 * ValidationError (code INVALID_PROVIDER_CONFIG) for options no send could
 * work with (a URL that is not http(s), a `from` without an address), so a bad
 * config stops the process at start instead of filling the DLQ.
 */
export function createProvider(options: ProviderOptions, deps: ProviderDeps = {}): Provider {
  switch (options.type) {
    case 'http':
      return new HttpProvider(options, deps);
    case 'smtp':
      return new SmtpProvider(options, deps);
    case 'log':
      return new LogProvider(options);
    case 'ses':
      return new SesProvider(options, deps);
    case 'sendgrid':
      return new SendgridProvider(options, deps);
    case 'twilio-sms':
      return new TwilioSmsProvider(options, deps);
    case 'twilio-whatsapp':
      return new TwilioWhatsappProvider(options, deps);
    case 'slack':
      return new SlackProvider(options, deps);
    default: {
      const type = (options as { type?: unknown }).type;
      throw new ValidationError(`unknown provider type: ${String(type)}`, { type }, 'INVALID_PROVIDER_CONFIG');
    }
  }
}
