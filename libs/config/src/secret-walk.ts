import { isRawObject, type RawObject } from './raw';

/**
 * Visits every entry of raw (unvalidated) config input whose key is one of
 * `keys` and whose value is a non-empty string, at any depth (objects and
 * arrays), with its path. Secret indirections (`<key>File`, `<key>Env`) share
 * this walk, so both find the same entries the same way.
 */
export function walkSecretKeys<T>(
  raw: unknown,
  keys: Readonly<Record<string, T>>,
  visit: (node: RawObject, key: string, value: string, spec: T, path: PropertyKey[]) => void,
): void {
  const walk = (node: unknown, path: PropertyKey[]): void => {
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, [...path, index]));
      return;
    }
    if (!isRawObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      const spec = Object.hasOwn(keys, key) ? keys[key] : undefined;
      if (spec === undefined || typeof value !== 'string' || value === '') {
        walk(value, [...path, key]);
        continue;
      }
      visit(node, key, value, spec, path);
    }
  };
  walk(raw, []);
}
