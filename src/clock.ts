/** Milliseconds since the epoch. Injected so tests can stand on either side of a date. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
