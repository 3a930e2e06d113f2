// What each key did, counted per UTC hour, operation, status and Error code, and its last use:
// written after its responses, never on their path (docs/platform.md, "Usage").

import type { Clock } from "../clock.ts";
import { AUTH_CACHE_MAX_ENTRIES, USAGE_WRITE_INTERVAL_MS } from "../config.ts";
import { addUsageStatement, recordApiKeyUseStatement, type UsageCount } from "../db/api-keys.ts";
import { errorText, type Logger } from "../log.ts";

/** What is counted of a response. */
type ResponseKind = Pick<UsageCount, "operation" | "status" | "code">;

export interface KeyUseRecorder {
  /** Counts a response of key `keyId`; the write it may start goes to `waitUntil`. Never throws. */
  record(
    keyId: number,
    response: ResponseKind,
    env: Env,
    waitUntil: (work: Promise<unknown>) => void,
  ): void;
}

/** One key, in one isolate. */
interface KeyUse {
  /** Responses not yet written, by hour, operation, status and code. */
  held: Map<string, UsageCount>;
  /** When this isolate last took the key's responses to write them. */
  writtenAt: number;
  /** The latest response. */
  usedAt: number;
  /** The live timer (0: none) and when it writes; a timer that is not the live one stops. */
  timer: number;
  timerAt: number;
}

const HOUR_MS = 3_600_000;
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createKeyUseRecorder(
  clock: Clock,
  log: Logger,
  options: { sleep?: (ms: number) => Promise<void> } = {},
): KeyUseRecorder {
  const sleep = options.sleep ?? realSleep;
  const interval = USAGE_WRITE_INTERVAL_MS;
  // Not a bounded map: a key holding responses is never dropped (its timer takes them within
  // the interval); keys with nothing held are swept once the map grows past the cap.
  const keys = new Map<number, KeyUse>();
  let timers = 0;

  /** Writes what `use` holds in one batch; false when the write failed (it holds them again). */
  async function write(keyId: number, use: KeyUse, env: Env): Promise<boolean> {
    use.timer = 0; // responses from now on start a timer of their own
    if (use.held.size === 0) return true;
    const held = [...use.held.values()];
    use.held.clear();
    use.writtenAt = clock();
    try {
      await env.DB.batch([
        recordApiKeyUseStatement(env.DB, keyId, Math.floor(use.usedAt / 1000)),
        ...held.map((count) => addUsageStatement(env.DB, count)),
      ]);
      return true;
    } catch (err) {
      for (const count of held) hold(use, count);
      log({ level: "warn", msg: "key use write failed", key_id: keyId, error: errorText(err) });
      return false;
    }
  }

  /** The live timer `token` of `use`: writes once the interval has ended, and once more after a failure. */
  async function run(keyId: number, use: KeyUse, env: Env, token: number): Promise<void> {
    const due = () => use.writtenAt + interval;
    for (let attempt = 0; attempt < 2; attempt++) {
      // After the response, and never sooner than the interval (a timer may wake a little early).
      let naps = 0;
      do await sleep(Math.max(0, due() - clock()));
      while (++naps < 3 && clock() < due());
      if (use.timer !== token) return; // replaced by a newer timer, which writes
      if (clock() < due()) break; // a clock that does not move: the next response's timer writes
      if (await write(keyId, use, env)) return;
      if (use.timer !== 0) return; // a newer timer writes what failed with what came since
      use.timer = token;
      use.timerAt = due();
    }
    if (use.timer === token) use.timer = 0;
  }

  /** Forgets the keys that hold nothing and whose interval has ended. */
  function sweep(now: number): void {
    for (const [keyId, use] of keys) {
      if (use.held.size === 0 && use.timer === 0 && now - use.writtenAt >= interval) {
        keys.delete(keyId);
      }
    }
  }

  return {
    record(keyId, response, env, waitUntil) {
      const now = clock();
      let use = keys.get(keyId);
      if (use === undefined) {
        if (keys.size >= AUTH_CACHE_MAX_ENTRIES) sweep(now);
        use = {
          held: new Map(),
          writtenAt: Number.NEGATIVE_INFINITY,
          usedAt: now,
          timer: 0,
          timerAt: now,
        };
        keys.set(keyId, use);
      }
      hold(use, { keyId, hourStart: Math.floor(now / HOUR_MS) * 3600, ...response, count: 1 });
      use.usedAt = now;
      // One live timer per key; one that should have written long ago was lost with its request.
      if (use.timer === 0 || now > use.timerAt + interval) {
        use.timer = ++timers;
        use.timerAt = Math.max(now, use.writtenAt + interval);
        waitUntil(run(keyId, use, env, use.timer));
      }
    },
  };
}

/** Adds `count` to what `use` holds. */
function hold(use: KeyUse, count: UsageCount): void {
  const id = `${count.hourStart} ${count.operation} ${count.status} ${count.code}`;
  const held = use.held.get(id);
  if (held) held.count += count.count;
  else use.held.set(id, { ...count });
}
