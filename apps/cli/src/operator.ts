import { hostname, userInfo } from 'node:os';

/**
 * Who runs an operator command, for the journal: `user@host` (the user's
 * name may be unreadable in a container without a passwd entry).
 */
export function operatorName(): string {
  try {
    return `${userInfo().username}@${hostname()}`;
  } catch {
    return `unknown@${hostname()}`;
  }
}
