// The keys CLI's grammar (scripts/keys.ts) refuses wrong input with
// one UsageError line, which the CLI prints with its usage before exiting 2.
import { expect } from "vitest";

/** The one-line message of the UsageError that `parse()` throws; fails the test otherwise. */
export function usageErrorOf(
  parse: () => unknown,
  usageErrorClass: new (...args: never[]) => Error,
  what: string,
): string {
  try {
    parse();
  } catch (err) {
    expect(err).toBeInstanceOf(usageErrorClass);
    const message = (err as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error(`no UsageError for ${what}`);
}
