import type { SESv2Client, SESv2ClientConfig } from '@aws-sdk/client-sesv2';
import { RetryableError, SingleshotError, externalCode, parseRetryAfter } from '@singleshot/core';
import { errorCode, errorFor } from './classify';
import { classifySdkTransport, classifySesError } from './classify-native';
import { startDeadline } from './deadline';
import { InFlight } from './in-flight';
import { resolveOptions } from './provider-options';
import { listUnsubscribeHeaders } from './list-unsubscribe';
import { OPERATION_HEADER } from './smtp-provider';
import type { CallContext, Provider, ProviderDeps, SendRequest, SendResult, SesProviderConfig, SesProviderOptions } from './provider';

/** The SES message tag that carries the operation key into event publishing (SNS, Firehose, CloudWatch). */
export const SES_OPERATION_TAG = 'singleshot-operation';

type SesSdk = typeof import('@aws-sdk/client-sesv2');

// The SES SDK (megabytes of heap) loads when an `ses` provider is configured, not in every process.
let sesSdk: Promise<SesSdk> | undefined;
const loadSesSdk = () => (sesSdk ??= import('@aws-sdk/client-sesv2'));

/**
 * `type: ses`: Amazon SES v2 `SendEmail` with the official SDK. Region,
 * endpoint and credentials come from the entry or the SDK's standard chain.
 * The SDK's own retries are off (`maxAttempts: 1`): the delivery chain
 * decides retries and fallback, with the operation's attempt budget.
 *
 * Every message carries the operation key as the `singleshot-operation` tag
 * and in the `X-Singleshot-Operation` header; `MessageId` is the external id.
 * SES takes no idempotency key and has no API to look a message up, so there
 * is no `lookup`: an in-doubt send stays pinned to SES (never handed to the
 * fallback unreconciled) and the channel's `inDoubtPolicy` decides; the tag
 * lets an operator find the message in the configuration set's events.
 *
 * The SDK's HTTP stack does not say whether a failed request was written, so
 * only failures before any connection (refused, DNS) count as "not sent"
 * (`classifySdkTransport`); resets, timeouts and aborts are in doubt.
 */
export class SesProvider implements Provider {
  readonly type = 'ses' as const;
  readonly name: string;
  private readonly options: SesProviderConfig;
  private readonly connection: Promise<{ sdk: SesSdk; client: SESv2Client }>;
  private readonly inFlight: InFlight;

  constructor(input: SesProviderOptions, _deps: ProviderDeps = {}) {
    this.options = resolveOptions(input);
    this.name = this.options.name;
    this.inFlight = new InFlight(this.name);
    const { region, endpoint, credentials, timeoutMs } = this.options;
    const config: SESv2ClientConfig = {
      maxAttempts: 1,
      requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs },
      ...(region ? { region } : {}),
      ...(endpoint ? { endpoint } : {}),
      ...(credentials
        ? {
            credentials: {
              accessKeyId: credentials.accessKeyId,
              secretAccessKey: credentials.secretAccessKey as string,
              ...(credentials.sessionToken ? { sessionToken: credentials.sessionToken } : {}),
            },
          }
        : {}),
    };
    this.connection = loadSesSdk().then((sdk) => ({ sdk, client: new sdk.SESv2Client(config) }));
    // A failed load is reported by the first send (as nothing sent, in ready()).
    this.connection.catch(() => undefined);
  }

  async send(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    return this.inFlight.run(() => this.call(req, ctx));
  }

  async close(): Promise<void> {
    if (await this.inFlight.close()) (await this.connection.catch(() => undefined))?.client.destroy();
  }

  private async call(req: SendRequest, ctx: CallContext): Promise<SendResult> {
    const deadline = startDeadline(ctx, this.options.timeoutMs);
    try {
      // Resolved first, so a missing region or credential chain is "nothing sent", not in doubt.
      const { sdk, client } = await this.ready();
      const command = new sdk.SendEmailCommand({
        FromEmailAddress: this.options.from,
        Destination: { ToAddresses: [req.recipient] },
        Content: {
          Simple: {
            Subject: { Data: req.subject, Charset: 'UTF-8' },
            Body: { Text: { Data: req.text, Charset: 'UTF-8' } },
            Headers: [{ Name: OPERATION_HEADER, Value: req.operationKey }, ...(req.listUnsubscribe ? listUnsubscribeHeaders(req.listUnsubscribe).map((h) => ({ Name: h.name, Value: h.value })) : [])],
          },
        },
        EmailTags: [{ Name: SES_OPERATION_TAG, Value: req.operationKey }],
        ...(this.options.configurationSetName ? { ConfigurationSetName: this.options.configurationSetName } : {}),
      });
      const out = await client.send(command, { abortSignal: deadline.signal });
      if (out.MessageId) return { externalId: out.MessageId, detail: `HTTP ${out.$metadata.httpStatusCode ?? 200}` };
      throw errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: SendEmail answered without a MessageId`, 'NO_PROVIDER_ID');
    } catch (err) {
      throw this.classify(err, deadline.reason());
    } finally {
      deadline.dispose();
    }
  }

  private async ready(): Promise<{ sdk: SesSdk; client: SESv2Client }> {
    try {
      const connected = await this.connection;
      await connected.client.config.region();
      await connected.client.config.credentials();
      return connected;
    } catch (err) {
      throw new RetryableError(`${this.name}: no region or credentials (${err instanceof Error ? err.name : 'error'})`, 'AWS_CONFIG_UNAVAILABLE', { safeToFallback: true, cause: err });
    }
  }

  private classify(err: unknown, deadlineReason: Error | undefined): Error {
    if (err instanceof SingleshotError) return err;
    // Our deadline or the caller's abort: the request may have been written.
    if (deadlineReason) return errorFor({ outcome: 'in_doubt', safeToFallback: false }, `${this.name}: ${deadlineReason.message}`, errorCode(deadlineReason) ?? 'DEADLINE', { cause: err });
    const e = err as { name?: string; $metadata?: { httpStatusCode?: number }; $fault?: string; message?: string };
    const status = e?.$metadata?.httpStatusCode;
    const message = e?.message ?? String(err);
    if (status !== undefined || e?.$fault !== undefined) {
      const verdict = classifySesError(e.name, status);
      const code = e.name && e.name !== 'Error' && e.name !== 'Unknown' ? externalCode(e.name) : (`HTTP_${status ?? 'UNKNOWN'}` as const);
      const headers = (err as { $response?: { headers?: Record<string, string> } }).$response?.headers;
      return errorFor(verdict, `${this.name}: SES ${status ?? ''} ${e.name ?? ''}: ${message}`, code, {
        cause: err,
        retryAfterMs: verdict.outcome === 'retry' ? parseRetryAfter(headers?.['retry-after']) : undefined,
      });
    }
    const transport = errorCode(err) ?? (e?.name ? externalCode(e.name) : 'UNKNOWN');
    return errorFor(classifySdkTransport(errorCode(err)), `${this.name}: SendEmail failed (${transport}: ${message})`, transport, { cause: err });
  }
}
