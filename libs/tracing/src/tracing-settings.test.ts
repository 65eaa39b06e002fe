import { describe, expect, it } from 'vitest';
import { tracingSettings } from './tracing-settings';
import { formatTraceparent, parseTraceparent } from './traceparent';

const off = { enabled: false, sampleRatio: 1 };

describe('tracingSettings', () => {
  it('is off without OTEL_* variables or tracing.enabled', () => {
    expect(tracingSettings({}, off)).toEqual({ enabled: false, why: 'off' });
    expect(tracingSettings({}, undefined)).toEqual({ enabled: false, why: 'off' });
  });

  it('turns on from the standard variables, leaving the endpoint to the exporter', () => {
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, off)).toEqual({ enabled: true, url: undefined, sampleRatio: 1 });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }, off)).toEqual({ enabled: true, url: undefined, sampleRatio: 1 });
  });

  it('turns on from the config, with its endpoint and ratio; the variables win', () => {
    const section = { enabled: true, endpoint: 'http://collector:4318/', sampleRatio: 0.25 };
    expect(tracingSettings({}, section)).toEqual({ enabled: true, url: 'http://collector:4318/v1/traces', sampleRatio: 0.25 });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other:4318/v1/traces', OTEL_TRACES_SAMPLER_ARG: '0.5' }, section)).toEqual({ enabled: true, url: undefined, sampleRatio: 0.5 });
    expect(tracingSettings({ OTEL_TRACES_SAMPLER: 'always_off' }, section)).toMatchObject({ enabled: true, sampleRatio: 0 });
  });

  it('says why it stays off when asked for something it cannot export', () => {
    const on = { enabled: true, sampleRatio: 1 };
    expect(tracingSettings({ OTEL_SDK_DISABLED: 'true' }, on)).toEqual({ enabled: false, why: 'sdk_disabled' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'none' }, on)).toEqual({ enabled: false, why: 'exporter_none' });
    expect(tracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }, on)).toEqual({ enabled: false, why: 'unsupported_exporter', detail: 'zipkin' });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, on)).toEqual({ enabled: false, why: 'unsupported_protocol', detail: 'grpc' });
  });
});

describe('traceparent', () => {
  it('parses valid values and refuses the rest', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true });
    for (const bad of [undefined, '', 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01']) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
    expect(formatTraceparent('4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7', false)).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00');
  });
});
