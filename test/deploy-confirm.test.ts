// `npm run deploy:production` asks before deploying (scripts/deploy-confirm.ts): a person
// types "production"; --yes skips the question; unattended without --yes it refuses.
import { describe, expect, it } from "vitest";
import { confirmed, decide, UsageError } from "../scripts/deploy-confirm.ts";

describe("npm run deploy:production", () => {
  it("asks on a terminal, and only the environment's name is a yes", () => {
    const decision = decide([], true);
    expect(decision.action).toBe("ask");
    expect(decision.action === "ask" && decision.question).toMatch(/Type "production" to go on/);
    expect(confirmed("production")).toBe(true);
    expect(confirmed("  production\n")).toBe(true);
    for (const answer of ["", "y", "yes", "Production", "staging", "prod"]) {
      expect(confirmed(answer), answer).toBe(false);
    }
  });

  it("--yes (or -y) deploys without asking; without a terminal and --yes it refuses, saying how to go on", () => {
    expect(decide(["--yes"], false)).toEqual({ action: "deploy" });
    expect(decide(["-y"], true)).toEqual({ action: "deploy" });
    expect(decide([], false)).toEqual({
      action: "refuse",
      message: expect.stringMatching(/no terminal to ask on: nothing was deployed\. Pass --yes/),
    });
  });

  it("refuses unknown arguments", () => {
    expect(() => decide(["--force"], true)).toThrow(UsageError);
    expect(() => decide(["--env", "staging"], false)).toThrow('unknown argument "--env"');
  });
});
