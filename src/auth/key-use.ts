// What each key did, without a database write on any answer's path: its last use
// (`npm run keys -- list`, to within an hour) and its answers per UTC hour and outcome
// class (the developer platform's usage pages). Both are held in isolate memory and
// written together, after an answer, in one D1 batch handed to waitUntil: a key's
// answers at most once a minute, its last use at most once an hour, per isolate. A slow
// or failing write neither delays nor fails a request; a failed one is tried again a
// minute later. Answers held back by the minute are written by the next answer after it
// (of any key), or by a timer when the minute ends within the time waitUntil gives an
// answer's work. What an isolate holds when it is evicted is lost (docs/platform.md).

import { boundedMap } from "../cache/bounded-map.ts";
import type { Clock } from "../clock.ts";
import {
  AUTH_CACHE_MAX_ENTRIES,
  LAST_USE_INTERVAL_MS,
  USAGE_WAIT_MAX_MS,
  USAGE_WRITE_INTERVAL_MS,
} from "../config.ts";
import {
  addUsageStatement,
  type Outcome,
  outcomeOf,
  recordApiKeyUseStatement,
} from "../db/api-keys.ts";
import { errorText, type Logger } from "../log.ts";

export interface KeyUseRecorder {
  /**
   * Counts an answer of key `keyId` with `status`; the writes it starts (this key's and
   * any other key's that are due) are given to `waitUntil`. Never throws.
   */
  record(
    keyId: number,
    status: number,
    env: Env,
    waitUntil: (work: Promise<unknown>) => void,
  ): void;
}

/** Answers of one hour and outcome, not yet written. */
interface Count {
  hourStart: number;
  outcome: Outcome;
  count: number;
}

/** One key, in one isolate. */
interface KeyUse {
  /** Answers not yet written, by hour and outcome. */
  held: Map<string, Count>;
  /** When this isolate last wrote (or tried to write) the key's answers, and its last use. */
  countsWrittenAt: number;
  lastUseWrittenAt: number;
  /** The latest answer. */
  usedAt: number;
  /** A timer will write the key's answers when its minute ends. */
  timed: boolean;
}

const toSeconds = (ms: number) => Math.floor(ms / 1000);
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createKeyUseRecorder(
  clock: Clock,
  log: Logger,
  options: { maxEntries?: number; sleep?: (ms: number) => Promise<void> } = {},
): KeyUseRecorder {
  const sleep = options.sleep ?? realSleep;
  const keys = boundedMap<number, KeyUse>(options.maxEntries ?? AUTH_CACHE_MAX_ENTRIES);
  /** Keys holding answers: few, since each is written about a minute after its last write. */
  const holding = new Set<number>();

  /** The held answers of every key whose minute has ended, with the last uses due, as one batch. */
  function writeDue(env: Env, now: number): Promise<unknown> | undefined {
    const taken: Array<{
      keyId: number;
      use: KeyUse;
      held: Count[];
      lastUse: number | undefined;
      lastUseWrittenAt: number;
    }> = [];
    for (const keyId of holding) {
      const use = keys.get(keyId);
      if (use === undefined || use.held.size === 0) {
        holding.delete(keyId); // written, or evicted with what it held
        continue;
      }
      if (now - use.countsWrittenAt < USAGE_WRITE_INTERVAL_MS) continue;
      const lastUseDue = now - use.lastUseWrittenAt >= LAST_USE_INTERVAL_MS;
      taken.push({
        keyId,
        use,
        held: [...use.held.values()],
        lastUse: lastUseDue ? toSeconds(use.usedAt) : undefined,
        lastUseWrittenAt: use.lastUseWrittenAt,
      });
      if (lastUseDue) use.lastUseWrittenAt = now;
      use.held.clear();
      use.countsWrittenAt = now;
      holding.delete(keyId);
    }
    if (taken.length === 0) return undefined;
    const failed = (err: unknown) => {
      // Hold it all again: the next write, a minute from now, carries it.
      for (const { keyId, use, held, lastUseWrittenAt } of taken) {
        for (const count of held) hold(use, count.hourStart, count.outcome, count.count);
        use.lastUseWrittenAt = lastUseWrittenAt;
        if (keys.get(keyId) === use) holding.add(keyId);
        log({ level: "warn", msg: "key use write failed", key_id: keyId, error: errorText(err) });
      }
    };
    try {
      const statements = taken.flatMap(({ keyId, held, lastUse }) => [
        ...(lastUse === undefined ? [] : [recordApiKeyUseStatement(env.DB, keyId, lastUse)]),
        ...held.map((count) => addUsageStatement(env.DB, { keyId, ...count })),
      ]);
      return env.DB.batch(statements).catch(failed);
    } catch (err) {
      failed(err);
      return undefined;
    }
  }

  return {
    record(keyId, status, env, waitUntil) {
      const now = clock();
      const use = keys.get(keyId) ?? {
        held: new Map(),
        countsWrittenAt: Number.NEGATIVE_INFINITY,
        lastUseWrittenAt: Number.NEGATIVE_INFINITY,
        usedAt: now,
        timed: false,
      };
      keys.set(keyId, use);
      hold(use, Math.floor(now / 3_600_000) * 3600, outcomeOf(status), 1);
      use.usedAt = now;
      holding.add(keyId);
      const written = writeDue(env, now);
      if (written) waitUntil(written);
      const wait = use.countsWrittenAt + USAGE_WRITE_INTERVAL_MS - now;
      if (use.held.size > 0 && !use.timed && wait <= USAGE_WAIT_MAX_MS) {
        use.timed = true;
        waitUntil(
          sleep(wait).then(() => {
            use.timed = false;
            return writeDue(env, clock());
          }),
        );
      }
    },
  };
}

/** Adds `count` answers of `outcome` in the hour from `hourStart` (unix seconds) to what `use` holds. */
function hold(use: KeyUse, hourStart: number, outcome: Outcome, count: number): void {
  const id = `${hourStart} ${outcome}`;
  const held = use.held.get(id);
  if (held) held.count += count;
  else use.held.set(id, { hourStart, outcome, count });
}
