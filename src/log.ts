// Structured logs: one JSON object per line, which Workers Logs indexes.
export type LogLine = Record<string, string | number | boolean | undefined>;
export type Logger = (line: LogLine) => void;

/** Writes one JSON object per line; Workers Logs indexes its fields. Never given secrets. */
export const consoleLogger: Logger = (line) => console.log(JSON.stringify(line));

/** Something thrown, as one log field: `Name: message` for an Error, else its text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
