// Structured logs: one JSON object per line, which Workers Logs indexes.
export type LogLine = Record<string, string | number | boolean | undefined>;
export type Logger = (line: LogLine) => void;

/** Writes one JSON object per line; Workers Logs indexes its fields. Never given secrets. */
export const consoleLogger: Logger = (line) => console.log(JSON.stringify(line));
