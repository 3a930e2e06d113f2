// Structured logs: one JSON object per line, which Workers Logs indexes.
export type LogLine = Record<string, string | number | boolean | undefined>;
export type Logger = (line: LogLine) => void;

/** Writes one JSON object per line; Workers Logs indexes its fields. Never given secrets. */
export const consoleLogger: Logger = (line) => console.log(JSON.stringify(line));

/** Something thrown, as one log field: `Name: message` for an Error, else its text. */
export function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** The line of a fault (a response the service did not mean to give), with its cause. */
export function faultLine(requestId: string, err: unknown): LogLine {
  return {
    level: "error",
    msg: "unhandled error",
    request_id: requestId,
    error: errorText(err),
    cause: err instanceof Error && err.cause instanceof Error ? errorText(err.cause) : undefined,
  };
}
