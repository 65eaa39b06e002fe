import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { arr, DEPLOY, loadYaml, obj, ROOT, runTool, str, which } from './deploy-files';
import { dashboardQueries, familyName, metricNames, substituteGrafanaVariables, variableMetricNames } from './promql';

/**
 * deploy/prometheus and deploy/grafana: the alert rules (promtool check and
 * unit tests), the dashboard's queries and the list of metrics both use.
 */
const tmp = mkdtempSync(join(tmpdir(), 'singleshot-monitoring-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const file = (path: string) => join(DEPLOY, path);
const read = (path: string) => readFileSync(file(path), 'utf8');

/** promtool from Debian's `prometheus` package; its absence is a failure, not a skip. */
function promtool(args: string[]): { status: number | null; output: string } {
  if (!which('promtool')) {
    throw new Error('promtool is not installed: `npm run setup` installs it (the prometheus package, tools/system-packages.txt)');
  }
  return runTool('promtool', args);
}

function writeTemp(name: string, content: string): string {
  const path = join(tmp, name);
  writeFileSync(path, content);
  return path;
}

describe('Prometheus alert rules', () => {
  const rules = arr(obj(loadYaml(file('prometheus/rules.yml'))).groups).flatMap((g) => arr(obj(g).rules)).map(obj);
  const alerts = rules.filter((r) => r.alert);

  it('`promtool check rules` accepts rules.yml', () => {
    const result = promtool(['check', 'rules', file('prometheus/rules.yml')]);
    expect(result.status, result.output).toBe(0);
  });

  it('`promtool test rules` passes: each alert fires, and stays quiet, where it should', () => {
    const result = promtool(['test', 'rules', file('prometheus/rules.test.yml')]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain('SUCCESS');
  });

  it('`promtool check config` accepts prometheus.yml with its rule file', () => {
    const result = promtool(['check', 'config', file('prometheus/prometheus.yml')]);
    expect(result.status, result.output).toBe(0);
  });

  it('has the alerts the deployment is paged by', () => {
    const byName = new Map(alerts.map((a) => [String(a.alert), a]));
    const required: Record<string, RegExp> = {
      SingleshotDLQNotEmpty: /singleshot_dlq_depth\) > 0$/,
      SingleshotLockConflictsSurging: /singleshot_lock_conflicts_total/,
      SingleshotDuplicatesSurging: /singleshot_duplicates_suppressed_total/,
      SingleshotInDoubtGrowing: /singleshot_operations_in_doubt/,
      SingleshotQueueWaitGrowing: /singleshot_queue_jobs\{state="waiting"\}/,
      SingleshotNoSendsWhileEventsArrive: /singleshot_events_received_total[\s\S]*unless[\s\S]*singleshot_deliveries_total\{result="sent"\}/,
      SingleshotProviderBreakerOpen: /singleshot_provider_breaker_state\) == 2$/,
      SingleshotImapPollLag: /singleshot_imap_poll_lag_seconds/,
    };
    for (const [name, expr] of Object.entries(required)) expect(String(byName.get(name)?.expr).trim(), name).toMatch(expr);
    expect(byName.get('SingleshotDLQNotEmpty')?.for).toBe('5m');
  });

  it('every alert has a severity, a summary, a description and a runbook section in deploy/README.md', () => {
    const anchors = new Set(
      read('README.md')
        .split('\n')
        .filter((line) => line.startsWith('#'))
        .map((line) => line.replace(/^#+\s*/, '').toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-')),
    );
    for (const alert of alerts) {
      const name = String(alert.alert);
      expect(['critical', 'warning'], name).toContain(obj(alert.labels).severity);
      const annotations = obj(alert.annotations);
      for (const key of ['summary', 'description']) expect(str(annotations[key])?.length ?? 0, `${name} ${key}`).toBeGreaterThan(10);
      const runbook = str(annotations.runbook) ?? '';
      expect(runbook, name).toBe(`deploy/README.md#${name.toLowerCase()}`);
      expect(anchors.has(name.toLowerCase()), `README section for ${name}`).toBe(true);
    }
  });

  it('rules.test.yml has a firing case and a quiet case for every alert', () => {
    const cases = arr(obj(loadYaml(file('prometheus/rules.test.yml'))).tests).flatMap((t) => arr(obj(t).alert_rule_test)).map(obj);
    for (const alert of alerts) {
      const mine = cases.filter((c) => c.alertname === alert.alert);
      expect(mine.some((c) => arr(c.exp_alerts).length > 0), `${String(alert.alert)} fires`).toBe(true);
      expect(mine.some((c) => arr(c.exp_alerts).length === 0), `${String(alert.alert)} stays quiet`).toBe(true);
    }
  });
});

describe('Grafana dashboard', () => {
  const dashboard: unknown = JSON.parse(read('grafana/dashboards/singleshot.json'));
  const queries = dashboardQueries(dashboard);
  const panels = arr(obj(dashboard).panels).map(obj);

  it('parses, with unique panel ids, the provisioned datasource everywhere and a layout within 24 columns', () => {
    expect(obj(dashboard).uid).toBe('singleshot-overview');
    const ids = panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const boxes = panels.map((p) => obj(p.gridPos)).map((g) => ({ x: Number(g.x), y: Number(g.y), w: Number(g.w), h: Number(g.h) }));
    boxes.forEach((a, i) => {
      expect(a.x >= 0 && a.w > 0 && a.h > 0 && a.x + a.w <= 24, `panel ${String(ids[i])} gridPos`).toBe(true);
      boxes.slice(i + 1).forEach((b, j) => {
        const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
        expect(overlap, `panels ${String(ids[i])} and ${String(ids[i + j + 1])} overlap`).toBe(false);
      });
    });
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      expect(obj(panel.datasource).uid, String(panel.title)).toBe('singleshot-prometheus');
      expect(arr(panel.targets).length, String(panel.title)).toBeGreaterThan(0);
      for (const target of arr(panel.targets)) expect(obj(obj(target).datasource).uid).toBe('singleshot-prometheus');
    }
  });

  it('shows arrivals vs sends, duplicates by stage, DLQ, in-doubt, latency percentiles, queue depths and provider health', () => {
    const panelUses = (pattern: RegExp) => panels.some((p) => arr(p.targets).some((t) => pattern.test(str(obj(t).expr) ?? '')));
    const samePanel = (a: RegExp, b: RegExp) => panels.some((p) => {
      const exprs = arr(p.targets).map((t) => str(obj(t).expr) ?? '');
      return exprs.some((e) => a.test(e)) && exprs.some((e) => b.test(e));
    });
    expect(samePanel(/singleshot_events_received_total/, /singleshot_deliveries_total\{result="sent"/)).toBe(true);
    expect(panelUses(/sum by \(stage\) \(rate\(singleshot_duplicates_suppressed_total/)).toBe(true);
    expect(panelUses(/singleshot_dlq_depth/)).toBe(true);
    expect(panelUses(/singleshot_operations_in_doubt/) && panelUses(/singleshot_in_doubt_total/)).toBe(true);
    for (const histogram of ['singleshot_end_to_end_seconds', 'singleshot_delivery_duration_seconds']) {
      for (const q of ['0.5', '0.95', '0.99']) expect(panelUses(new RegExp(`histogram_quantile\\(${q}, .*${histogram}_bucket`)), `${histogram} p${q}`).toBe(true);
    }
    expect(panelUses(/by \(queue, state\) \(singleshot_queue_jobs\)/)).toBe(true);
    expect(panelUses(/by \(channel, provider, result\) \(rate\(singleshot_deliveries_total/)).toBe(true);
    expect(panelUses(/singleshot_provider_breaker_state/)).toBe(true);
  });

  it('every query is valid PromQL (checked by promtool as recording rules)', () => {
    const recording = queries.map((q, i) => {
      const expr = substituteGrafanaVariables(q.expr);
      expect(expr, q.where).not.toContain('$');
      return { record: `dashboard:query_${i}`, expr };
    });
    const path = writeTemp('dashboard-queries.yml', stringify({ groups: [{ name: 'dashboard', rules: recording }] }));
    const result = promtool(['check', 'rules', path]);
    expect(result.status, result.output).toBe(0);
    expect(result.output).toContain(`SUCCESS: ${recording.length} rules found`);
  });
});

describe('deploy/metrics-used.txt', () => {
  const listed = read('metrics-used.txt').split('\n').filter(Boolean);
  const families = new Set(listed);

  it('the name extractor finds selected metrics, not functions, labels, keywords or durations', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, provider) (rate(x_seconds_bucket{channel=~"$channel", a="b{c}"}[$__rate_interval]))) ' +
          '/ on (provider) group_left y unless z offset 5m > bool 1e3 or vector(0)',
      ),
    ).toEqual(['x_seconds_bucket', 'y', 'z']);
    expect(familyName('x_seconds_bucket', new Set(['x_seconds']))).toBe('x_seconds');
    expect(familyName('jobs_count', new Set(['x_seconds']))).toBe('jobs_count');
  });

  it('lists exactly the metrics the alert rules and the dashboard use, once each', () => {
    expect(new Set(listed).size).toBe(listed.length);
    for (const name of listed) expect(name).toMatch(/^singleshot_[a-z0-9_]+$/);
    const rulesYaml = arr(obj(loadYaml(file('prometheus/rules.yml'))).groups).flatMap((g) => arr(obj(g).rules)).map(obj);
    // Series the rules record themselves (`record:`) are not exported metrics.
    const recorded = new Set(rulesYaml.filter((r) => r.record).map((r) => String(r.record)));
    const used = new Set(
      [
        ...rulesYaml.flatMap((r) => metricNames(String(r.expr))).filter((name) => !recorded.has(name)),
        ...dashboardQueries(JSON.parse(read('grafana/dashboards/singleshot.json'))).flatMap((q) => metricNames(q.expr)),
        ...variableMetricNames(JSON.parse(read('grafana/dashboards/singleshot.json'))),
      ].map((name) => familyName(name, families)),
    );
    expect([...used].sort()).toEqual([...listed].sort());
  });

  it('docs/operations.md describes every metric the alerts and the dashboard use', () => {
    const page = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const documented = new Set([...page.matchAll(/`(singleshot_[a-z0-9_]+)[`{]/g)].map((m) => m[1]));
    expect(listed.filter((name) => !documented.has(name))).toEqual([]);
  });
});
