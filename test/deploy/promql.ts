import { arr, obj, str } from './deploy-files';

/**
 * Just enough PromQL lexing to list the metric names an expression selects:
 * enough for the expressions in deploy/, not a parser. Words followed by `(`
 * are functions or aggregations; grouping lists (`by (queue)`), label
 * matchers (`{…}`), ranges (`[5m]`) and strings are removed first.
 */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    const start = match.index;
    const before = start > 0 ? stripped.charAt(start - 1) : '';
    if (/[0-9.]/.test(before)) continue; // the exponent or unit of a number literal (1e3, 5m)
    if (/^\s*\(/.test(stripped.slice(start + word.length))) continue;
    if (KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names].sort();
}

const HISTOGRAM_SERIES = /_(bucket|sum|count)$/;

/**
 * Maps series names to the metric family that exports them: `x_bucket`,
 * `x_sum`, `x_count` → `x` when `x` is a known family (a histogram), else
 * the name itself.
 */
export function familyName(series: string, families: ReadonlySet<string>): string {
  if (families.has(series)) return series;
  const base = series.replace(HISTOGRAM_SERIES, '');
  return base !== series && families.has(base) ? base : series;
}

/** Grafana's built-in and dashboard variables, replaced by values PromQL accepts. */
export function substituteGrafanaVariables(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, '5m')
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, '.*');
}

export interface DashboardQuery {
  where: string;
  expr: string;
}

/** Every PromQL expression in a dashboard: panel targets (rows included) and query variables. */
export function dashboardQueries(dashboard: unknown): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  const visit = (panels: unknown[]) => {
    for (const panel of panels) {
      const title = str(obj(panel).title) ?? `panel ${String(obj(panel).id)}`;
      for (const target of arr(obj(panel).targets)) {
        const expr = str(obj(target).expr);
        if (expr !== undefined) out.push({ where: `${title} / ${str(obj(target).refId) ?? '?'}`, expr });
      }
      visit(arr(obj(panel).panels));
    }
  };
  visit(arr(obj(dashboard).panels));
  return out;
}

/** Metric names used by query variables (`label_values(metric, label)`, `query_result(expr)`). */
export function variableMetricNames(dashboard: unknown): string[] {
  const names: string[] = [];
  for (const variable of arr(obj(obj(dashboard).templating).list)) {
    if (str(obj(variable).type) !== 'query') continue;
    const query = str(obj(obj(variable).query).query) ?? str(obj(variable).query) ?? '';
    const labelValues = /^label_values\(\s*([^,)]+)/.exec(query);
    if (labelValues?.[1]) names.push(...metricNames(labelValues[1]));
    const queryResult = /^query_result\((.*)\)$/.exec(query);
    if (queryResult?.[1]) names.push(...metricNames(queryResult[1]));
  }
  return names;
}
