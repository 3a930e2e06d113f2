// npm run keys -- create|list|rotate|revoke ... [--env staging|production]
// Without --env the local database (the one `npm run dev` uses) is changed, through the
// running `npm run dev` when one serves it (scripts/d1.ts). Each command is one batch.
// Keys are stored only as SHA-256 hashes; `create` and `rotate` print the new key
// once, alone on the last line of standard output. Wrong input: one line, the usage,
// exit code 2. See scripts/key-cli.ts for the grammar and docs/keys.md, "Managing keys".
import { displayPrefix, hashApiKey, issueApiKey } from "../src/auth/keys.ts";
import { AUTH_CACHE_TTL_MS } from "../src/config.ts";
import { D1Error, type D1Target, d1Execute, type Row } from "./d1.ts";
import {
  formatKeyTable,
  type KeyCommand,
  keyTagSecret,
  parseKeyArgs,
  USAGE,
  UsageError,
} from "./key-cli.ts";
import {
  createKeyStatement,
  LIST_KEYS_STATEMENT,
  type ListedKey,
  revokeKeyStatement,
  rotateKeyStatements,
  toListedKey,
} from "./key-statements.ts";

let args: KeyCommand;
/** Issues a key for the target environment (create, rotate). */
let issue: () => Promise<string>;
try {
  args = parseKeyArgs(process.argv.slice(2));
  const secret =
    args.command === "create" || args.command === "rotate"
      ? keyTagSecret(args.env, process.env)
      : "";
  issue = () => issueApiKey(secret);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  console.error(`error: ${err.message}\n\n${USAGE}`);
  process.exit(2);
}
if (args.command === "help") {
  console.log(USAGE);
  process.exit(0);
}

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(1);
}

const target: D1Target = { env: args.env, persistTo: args.persistTo };
const where = args.env ? `${args.env} (remote)` : "local";

/** Runs the statements as one batch; answers each one's rows. Exits 1 when the database refuses. */
async function execute(...statements: string[]): Promise<Row[][]> {
  try {
    return await d1Execute(target, statements);
  } catch (err) {
    if (err instanceof D1Error) fail(err.message);
    throw err;
  }
}

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
    const keys = rowsOf((await execute(LIST_KEYS_STATEMENT))[0]);
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
