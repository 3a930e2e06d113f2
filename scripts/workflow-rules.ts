// This project's delivery rules for .github/workflows (docs/release.md), checked on the
// parsed YAML: test/node/workflow-rules.test.ts (npm run lint:workflows, and npm test)
// runs them on the real workflows and on broken variants of them. Each problem is one
// line naming the place.
import { parseDocument } from "yaml";

const WRANGLER_ACTION = "cloudflare/wrangler-action";
/** `${{ <inner> }}`, a GitHub expression (spelt out so it is not a template literal). */
const expression = (inner: string) => `$${"{{"} ${inner} }}`;
const TOKEN = expression("secrets.CLOUDFLARE_API_TOKEN");
const ACCOUNT = expression("secrets.CLOUDFLARE_ACCOUNT_ID");
const SECRET = /\$\{\{[^}]*\bsecrets\./;

type Mapping = Record<string, unknown>;

export interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Mapping;
  env?: Mapping;
}

export interface Job {
  environment?: string | { name?: string };
  env?: Mapping;
  secrets?: unknown;
  steps: Step[];
}

/** A workflow as parsed: what the rules read of it. */
export interface Workflow {
  on: Mapping;
  env?: Mapping;
  jobs: Record<string, Job>;
}

/** A wrangler command line a step runs (through the action or in a script). */
interface Command {
  text: string;
  env: string | undefined;
}

const isMapping = (value: unknown): value is Mapping =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const stepName = (step: Step, index: number) =>
  JSON.stringify(step.name ?? step.id ?? step.uses ?? `step ${index + 1}`);

const usesWranglerAction = (step: Step) => step.uses?.startsWith(`${WRANGLER_ACTION}@`) ?? false;

/** Every wrangler command a step runs: the action's `command` lines, or `wrangler ...` and `npm run deploy:*` in `run`. */
function wranglerCommands(step: Step): Command[] {
  const lines: string[] = [];
  if (usesWranglerAction(step)) {
    // The action runs `deploy` when no command is given; `>-` folds lines into one.
    const command = typeof step.with?.command === "string" ? step.with.command : "deploy";
    lines.push(...command.split("\n"));
  }
  if (typeof step.run === "string") {
    for (const match of step.run.matchAll(/\bwrangler\s+([^\n;&|]+)/g)) lines.push(match[1] ?? "");
    for (const match of step.run.matchAll(
      /\bnpm\s+run\s+(?:-s\s+)?deploy:(staging|production)\b/g,
    )) {
      lines.push(`deploy --env ${match[1]}`);
    }
  }
  return lines
    .map((text) => text.trim())
    .filter(Boolean)
    .map((text) => ({ text, env: /(?:--env|-e)(?:\s+|=)([\w-]+)/.exec(text)?.[1] }));
}

/** Changes which code serves traffic: deploy, versions deploy, rollback, triggers deploy. */
function isDeployCommand(command: Command): boolean {
  return (
    /^(deploy|versions deploy|rollback|triggers deploy)\b/.test(command.text) &&
    !/--dry-run\b/.test(command.text)
  );
}

function isSmokeStep(step: Step): boolean {
  return typeof step.run === "string" && /\bnpm\s+run\s+(?:-s\s+)?smoke(?![\w:-])/.test(step.run);
}

const runsOnFailure = (step: Step) => /\b(failure|always)\(\)/.test(step.if ?? "");

/** Every string in `value` with the path that leads to it. */
function* strings(value: unknown, path: string[]): Generator<[string[], string]> {
  if (typeof value === "string") yield [path, value];
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) yield* strings(item, [...path, String(i)]);
  } else if (isMapping(value)) {
    for (const [key, item] of Object.entries(value)) yield* strings(item, [...path, key]);
  }
}

/** Strict YAML, then the rules; answers the problems, each one line. */
export function checkWorkflows(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  if (files.size === 0) problems.push(".github/workflows has no workflow");
  const workflows = new Map<string, Mapping>();
  for (const [file, text] of files) {
    const doc = parseDocument(text, { strict: true, uniqueKeys: true, prettyErrors: false });
    for (const error of [...doc.errors, ...doc.warnings]) {
      problems.push(`${file}: ${error.message.split("\n")[0]}`);
    }
    const parsed: unknown = doc.toJS();
    if (isMapping(parsed)) workflows.set(file, parsed);
    else problems.push(`${file}: not a workflow (a YAML mapping)`);
  }

  const all: Array<{ step: Step; commands: Command[] }> = [];
  for (const [file, workflow] of workflows) {
    problems.push(...checkWorkflow(file, workflow));
    const jobs = isMapping(workflow.jobs) ? workflow.jobs : {};
    for (const job of Object.values(jobs) as Job[]) {
      for (const step of Array.isArray(job?.steps) ? job.steps : []) {
        all.push({ step, commands: wranglerCommands(step) });
      }
    }
  }

  const runs = (pattern: RegExp) =>
    all.some(({ commands }) => commands.some((c) => pattern.test(c.text)));
  const rule = (ok: boolean, message: string) => {
    if (!ok) problems.push(message);
  };
  rule(
    all.some(({ step }) => typeof step.run === "string" && /\bbash \.ci\/run\b/.test(step.run)),
    "a workflow must run bash .ci/run (the same checks as CI)",
  );
  rule(
    [...workflows.values()].some((w) => isMapping(w.on) && "pull_request" in w.on),
    "a workflow must run on pull requests",
  );
  rule(runs(/^deploy --env staging\b/), "a workflow must deploy staging (deploy --env staging)");
  rule(
    runs(/^versions upload\b(?!.*--preview-alias).*--env production\b/) &&
      runs(/^versions deploy\b.*--env production\b/),
    "a workflow must release production through versions upload and versions deploy --env production",
  );
  rule(runs(/^d1 migrations apply DB --remote --env staging\b/), "staging migrations missing");
  rule(
    runs(/^d1 migrations apply DB --remote --env production\b/),
    "production migrations missing",
  );
  return problems;
}

function checkWorkflow(file: string, workflow: Mapping): string[] {
  const problems: string[] = [];
  const on = isMapping(workflow.on) ? workflow.on : {};
  const push = isMapping(on.push) ? on.push : {};
  const tagsOnly =
    Object.keys(on).length === 1 && "tags" in push && !("branches" in push) && !("paths" in push);

  if ("pull_request_target" in on)
    problems.push(`${file}: pull_request_target would expose secrets`);

  // Secrets reach a step only through its env (or the pinned wrangler action's inputs).
  const jobs = isMapping(workflow.jobs) ? workflow.jobs : {};
  for (const [path, value] of strings(workflow, [])) {
    if (!SECRET.test(value)) continue;
    const [top, , place, index, field] = path;
    const step =
      top === "jobs" && place === "steps"
        ? (jobs[path[1] as string] as Job).steps?.[Number(index)]
        : undefined;
    const allowed =
      step !== undefined &&
      path.length === 6 &&
      (field === "env" || (field === "with" && usesWranglerAction(step)));
    if (!allowed) {
      problems.push(
        `${file}: a secret at ${path.join(".")}: secrets reach steps only through the step's env (or the wrangler action's with)`,
      );
    }
  }

  for (const [jobId, rawJob] of Object.entries(jobs)) {
    const job = (isMapping(rawJob) ? rawJob : {}) as Job & Mapping;
    if (job.secrets !== undefined) {
      problems.push(
        `${file}: job ${jobId} passes secrets to a reusable workflow: give each step only the one it needs, through env`,
      );
    }
    const steps = Array.isArray(job.steps) ? job.steps : [];
    const { environment } = job;
    const production =
      (typeof environment === "string" ? environment : environment?.name) === "production";
    const where = (step: Step, index: number) =>
      `${file}: job ${jobId}, step ${stepName(step, index)}`;
    let uploadedProduction = false;
    let firstProductionDeploy = true;
    let rollbackOnFailure = false;

    for (const [index, step] of steps.entries()) {
      const at = where(step, index);
      const commands = wranglerCommands(step);
      if (usesWranglerAction(step)) {
        if (step.uses !== `${WRANGLER_ACTION}@v4`) {
          problems.push(`${at}: use ${WRANGLER_ACTION}@v4 (found ${step.uses})`);
        }
        if (step.with?.apiToken !== TOKEN || step.with?.accountId !== ACCOUNT) {
          problems.push(
            `${at}: every wrangler-action step passes secrets.CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID`,
          );
        }
      }

      for (const command of commands) {
        const upload = /^versions upload\b/.test(command.text);
        if (upload && /--preview-alias\b/.test(command.text) && command.env !== "staging") {
          problems.push(`${at}: previews go to --env staging only`);
        }
        if (upload && command.env !== "staging" && command.env !== "production") {
          problems.push(`${at}: versions upload names --env staging or --env production`);
        }
        const touchesProduction =
          command.env === "production" && (isDeployCommand(command) || upload);
        if (!touchesProduction) continue;
        if (!tagsOnly) problems.push(`${at}: production deploys only from tags (on: push: tags)`);
        if (!production) problems.push(`${at}: production deploy needs environment production`);
        if (/^deploy\b/.test(command.text)) {
          problems.push(
            `${at}: production deploys go through versions (versions upload, then versions deploy), never deploy --env production`,
          );
        }
        if (upload) uploadedProduction = true;
        if (/^versions deploy\b/.test(command.text)) {
          if (!uploadedProduction) {
            problems.push(
              `${at}: versions deploy --env production before versions upload --env production`,
            );
          }
          if (firstProductionDeploy && !splitsTraffic(command.text)) {
            problems.push(
              `${at}: the first versions deploy of a release sends a small share to the new version (NEW@10% OLD@90%), not all traffic`,
            );
          }
          firstProductionDeploy = false;
        }
      }

      if (isSmokeStep(step)) {
        const key = step.env?.SMOKE_API_KEY;
        if (typeof key !== "string" || !/^\$\{\{\s*secrets\.\w+\s*\}\}$/.test(key)) {
          problems.push(
            `${at}: a smoke step reads its key from env SMOKE_API_KEY: \${{ secrets.NAME }}`,
          );
        }
        if (production && /--write\b/.test(step.run ?? "")) {
          problems.push(`${at}: the smoke test in production is read-only (no --write)`);
        }
      }

      if (!commands.some(isDeployCommand)) continue;
      if (commands.some((c) => /^rollback\b/.test(c.text)) && /\bfailure\(\)/.test(step.if ?? "")) {
        rollbackOnFailure = true;
      }
      // The next step that deploys or smoke-tests must be a smoke test that runs when this
      // deploy ran (a deploy that runs on failure needs a smoke test that does too).
      const next = steps
        .slice(index + 1)
        .find((s) => isSmokeStep(s) || wranglerCommands(s).some(isDeployCommand));
      if (next === undefined || !isSmokeStep(next)) {
        problems.push(
          `${at}: a deploy step must be followed by a smoke step (npm run smoke) before the job ends or deploys again`,
        );
      } else if (runsOnFailure(step) && !runsOnFailure(next)) {
        problems.push(
          `${where(next, steps.indexOf(next))}: the smoke step after a step that runs on failure needs if: failure() (or always()) too`,
        );
      }
    }
    const changesTraffic = steps.some((s) =>
      wranglerCommands(s).some(
        (c) => /^(deploy|versions deploy)\b/.test(c.text) && !/--dry-run\b/.test(c.text),
      ),
    );
    if (changesTraffic && !rollbackOnFailure) {
      problems.push(
        `${file}: job ${jobId} deploys without a rollback step (wrangler rollback, if: failure())`,
      );
    }
  }
  return problems;
}

/** `versions deploy A@10% B@90%`: more than one version, or one below 100%. */
function splitsTraffic(command: string): boolean {
  const shares = [...command.matchAll(/\S+@(\d+(?:\.\d+)?)%/g)].map((m) => Number(m[1]));
  return shares.length > 1 || (shares.length === 1 && (shares[0] as number) < 100);
}
