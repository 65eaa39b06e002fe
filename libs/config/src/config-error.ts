import { ValidationError } from '@singleshot/core';

/** One problem in a config, located by dotted path (`providers.webhook[0].url`). */
export interface ConfigIssue {
  path: string;
  message: string;
}

/**
 * The config cannot be used. Lists every problem at once (fixing one typo per
 * restart is miserable) and never includes a secret's value: messages name
 * paths and rules, not the input.
 */
export class ConfigError extends ValidationError {
  readonly issues: ConfigIssue[];
  readonly source: string;

  constructor(source: string, issues: ConfigIssue[]) {
    const lines = issues.map((issue) => `  - ${issue.path ? `${issue.path}: ` : ''}${issue.message}`);
    const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
    super(`invalid config (${source}): ${count}\n${lines.join('\n')}`, issues, 'INVALID_CONFIG');
    this.issues = issues;
    this.source = source;
  }
}

const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

/** `['providers', 'webhook', 0, 'url']` → `providers.webhook[0].url`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (typeof part === 'string' && PLAIN_KEY.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}
