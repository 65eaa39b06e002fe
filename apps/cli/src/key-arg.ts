import { InvalidArgumentError } from 'commander';

/** Every key the stores are addressed by (operation, message, document): a hex SHA-256. */
const KEY = /^[0-9a-f]{64}$/i;

/**
 * A commander argument parser for a store key. Anything else is refused before
 * Redis is asked, with what a key looks like: commander prints the message
 * (no stack trace) and exits non-zero.
 *
 * @param what what the command takes, e.g. `an operation or message key`.
 */
export function keyArgument(what: string): (value: string) => string {
  return (value) => {
    const trimmed = value.trim();
    if (!KEY.test(trimmed)) {
      throw new InvalidArgumentError(
        `"${value}" is not ${what}: a key is 64 hex characters (e.g. the messageKey ingest answered)`,
      );
    }
    return trimmed.toLowerCase();
  };
}
