// npm run keys -- create|list|rotate|revoke ... [--env staging|production]: one batch per
// command, local through a running `npm run dev` (scripts/d1.ts); a new key is printed once,
// alone on the last line. Grammar: scripts/key-cli.ts; docs/keys.md, "Managing keys".
import { displayPrefix, hashApiKey, issueApiKey } from "../src/auth/keys.ts";
import { AUTH_CACHE_TTL_MS } from "../src/config.ts";
import { type ListedKey, toListedKey } from "../src/db/listed-keys.ts";
import { type D1Target, d1ExecuteOrExit, type Row } from "./d1.ts";
import { formatKeyTable, keyTagSecret, parseKeyArgs, USAGE } from "./key-cli.ts";
import {
  createKeyStatement,
  LIST_KEYS_STATEMENT,
  revokeKeyStatement,
  rotateKeyStatements,
  toOwnedKey,
} from "./key-statements.ts";
import { commandLineOrExit } from "./operator-cli.ts";

/** The command, and the tag secret its new keys get (create, rotate; a UsageError without one). */
const { secret, ...args } = commandLineOrExit(() => {
  const command = parseKeyArgs(process.argv.slice(2));
  const issues = command.command === "create" || command.command === "rotate";
  return { ...command, secret: issues ? keyTagSecret(command.env, process.env) : "" };
}, USAGE);
/** Issues a key for the target environment (create, rotate). */
const issue = () => issueApiKey(secret);

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(1);
}

const target: D1Target = { env: args.env, persistTo: args.persistTo };
const where = args.env ? `${args.env} (remote)` : "local";

const execute = (...statements: string[]) => d1ExecuteOrExit(target, statements);

const rowsOf = (rows: Row[] | undefined) => (rows ?? []).map(toListedKey);
const describeKey = (k: ListedKey) =>
  `id ${k.id} ("${k.label}", ${k.scopes.join(" ")}, ${k.expiresAt ? `expires ${k.expiresAt}` : "never expires"})`;

const now = Math.floor(Date.now() / 1000);

switch (args.command) {
  case "create": {
    const key = await issue();
    const [stored] = await execute(
      createKeyStatement({
        keyHash: await hashApiKey(key),
        prefix: displayPrefix(key),
        label: args.label,
        scopes: args.scopes,
        // Counted by the database from the moment it stores the key.
        expiresInSeconds: args.expiresInSeconds,
      }),
    );
    const [created] = rowsOf(stored);
    if (!created) fail(`the key was not stored in ${where}`);
    console.log(`Created key ${describeKey(created)} in ${where}. It is shown only once:`);
    console.log(key);
    break;
  }
  case "list": {
    const keys = ((await execute(LIST_KEYS_STATEMENT))[0] ?? []).map(toOwnedKey);
    console.log(args.json ? JSON.stringify(keys, null, 2) : formatKeyTable(keys, new Date()));
    break;
  }
  case "rotate": {
    const key = await issue();
    const [inserted, expired] = await execute(
      ...rotateKeyStatements({
        oldId: args.id,
        keyHash: await hashApiKey(key),
        prefix: displayPrefix(key),
        graceSeconds: args.graceSeconds,
        expiresInSeconds: args.expiresInSeconds,
      }),
    );
    const [created] = rowsOf(inserted);
    const [old] = rowsOf(expired);
    if (!created || !old)
      fail(`no active key with id ${args.id} in ${where} (see \`npm run keys -- list\`)`);
    console.log(`Rotated key id ${old.id} in ${where}: it stops working at ${old.expiresAt}.`);
    console.log(`New key ${describeKey(created)}. It is shown only once:`);
    console.log(key);
    break;
  }
  case "revoke": {
    const [revoked] = await execute(revokeKeyStatement(args.id, now));
    if (!revoked?.length) fail(`no active key with id ${args.id} in ${where}`);
    console.log(
      `Revoked key id ${args.id} in ${where}; it is refused everywhere within ${AUTH_CACHE_TTL_MS / 1000} seconds of the D1 read replicas having the change (docs/keys.md, "Revocation bound").`,
    );
    break;
  }
}
