// The state-change check's refusals (platform/src/request.ts) say what was expected and what
// came: the platform's own Origin, and the request's (quoted, cut at 80 characters) or "missing".
import { describe, expect, it } from "vitest";
import { expectError, ORIGIN, send, signUp } from "./helpers.ts";

describe("a refused Origin is named in the response", () => {
  it("quoted whole up to 80 characters, cut with … past them, and 'missing' when there is none", async () => {
    const { session } = await signUp();
    const eighty = `https://${"a".repeat(64)}.example`;
    expect(eighty).toHaveLength(80);
    const cases: Array<[string | null, string]> = [
      [eighty, JSON.stringify(eighty)],
      [`${eighty}x`, JSON.stringify(`${eighty}…`)],
      [null, "missing"],
    ];
    for (const [origin, shown] of cases) {
      const response = await send("/api/sign-out", { json: {}, origin, session });
      const body = await expectError(response, 403, "cross_origin_request");
      expect(body.message).toBe(
        `Requests that change something must come from the platform's own pages (Origin ${ORIGIN}); this one's Origin is ${shown}.`,
      );
    }
    // The session was never ended: nothing was read past the check.
    expect((await send("/api/account", { session })).status).toBe(200);
  });
});
