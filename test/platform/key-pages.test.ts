// The keys page past 50 keys: active and ended filtered in SQL, pages by keyset (links that
// work without the script, keeping the filter), one batch of D1 a page, another account's
// keys never listed, a hostile cursor responded with the first page.
import { env } from "cloudflare:workers";
import type { HTMLElement } from "node-html-parser";
import { parse } from "node-html-parser";
import { describe, expect, it } from "vitest";
import { KEYS_PAGE_SIZE, MAX_ACTIVE_KEYS } from "../../platform/src/config.ts";
import { Recorder } from "../support/instrumentation.ts";
import { platformWith, send, signUp } from "./helpers.ts";

const recorder = new Recorder();
const counted = platformWith({}, { DB: recorder.d1(env.DB) });

/** An account with 58 ended keys and 5 active ones among the newest, and another account's keys between them. */
async function manyKeys() {
  const { session, account } = await signUp();
  const stranger = await signUp();
  const now = Math.floor(Date.now() / 1000);
  const insert = (accountId: string, label: string, ended: "revoked" | "expired" | null) =>
    env.DB.prepare(
      `INSERT INTO api_keys (account_id, key_hash, prefix, label, scopes, created_at, revoked_at, expires_at)
       VALUES (?1, ?2, 'psk_paged0', ?3, 'pets:read', ?4, ?5, ?6) RETURNING id`,
    ).bind(
      accountId,
      crypto.randomUUID(),
      label,
      now - 86400,
      ended === "revoked" ? now - 60 : null,
      ended === "expired" ? now - 60 : ended === null ? now + 86400 : null,
    );
  const statements = [];
  for (let i = 0; i < 58; i++) {
    statements.push(insert(account.id, `ended ${i}`, i % 20 === 7 ? "expired" : "revoked"));
    if (i % 10 === 0) statements.push(insert(stranger.account.id, `stranger ${i}`, "revoked"));
    // Active keys among the newest: a filter applied after the SQL's LIMIT would show fewer.
    if (i >= 50 && i % 2 === 0) statements.push(insert(account.id, `active ${i}`, null));
  }
  statements.push(insert(account.id, "active last", null));
  await env.DB.batch(statements);
  return { session };
}

interface Listed {
  rows: Array<{ id: number; label: string; status: string }>;
  links: Record<string, { href: string; text: string }>;
  page: HTMLElement;
}

async function keysPage(path: string, session: string, fetch = send): Promise<Listed> {
  const response = await fetch(path, { session });
  const text = await response.text();
  expect(response.status, text).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("text/html; charset=UTF-8");
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  const page = parse(text);
  const rows = page.querySelectorAll("table.keys tbody tr").map((tr) => ({
    id: Number(tr.querySelector("th a")?.getAttribute("href")?.split("/").at(-1)),
    label: tr.querySelector("th a")?.text ?? "",
    status: tr.querySelector(".badge")?.text ?? "",
  }));
  const links = Object.fromEntries(
    page
      .querySelectorAll("nav.pager a")
      .map((a) => [
        a.getAttribute("rel") ?? "",
        { href: a.getAttribute("href") ?? "", text: a.text },
      ]),
  );
  return { rows, links, page };
}

describe("the keys page past 50 keys", () => {
  it("filters active and ended keys in SQL and pages the ended ones by 50, with links that keep the filter", async () => {
    const { session } = await manyKeys();
    const active = await keysPage("/keys", session);
    expect(active.rows.map((r) => r.label)).toEqual([
      "active last",
      "active 56",
      "active 54",
      "active 52",
      "active 50",
    ]);
    expect(active.rows.every((r) => r.status === "Active")).toBe(true);
    expect(active.links).toEqual({});
    expect(active.page.querySelector("nav.pager")).toBeNull();
    expect(active.page.querySelector("#key-count")?.text).toBe("5 of 10 active keys");
    expect(active.page.querySelectorAll("nav.tabs a").map((a) => a.text)).toEqual([
      "Active 5",
      "Ended 58",
    ]);

    const first = await keysPage("/keys?show=ended", session);
    expect(first.rows).toHaveLength(KEYS_PAGE_SIZE);
    expect(first.rows.map((r) => r.label)).toEqual(
      Array.from({ length: 50 }, (_, i) => `ended ${57 - i}`),
    );
    expect(new Set(first.rows.map((r) => r.status))).toEqual(new Set(["Revoked", "Expired"]));
    const last = first.rows.at(-1)?.id;
    expect(first.links).toEqual({
      next: { href: `/keys?show=ended&before=${last}#keys`, text: "Older ended keys" },
    });
    expect(first.page.querySelector("nav.pager")?.getAttribute("aria-label")).toBe(
      "Pages of ended keys",
    );
    // The fragment names the list, where the browser then moves the focus.
    expect(first.page.querySelector("section#keys")).not.toBeNull();

    const second = await keysPage(first.links.next?.href.replace("#keys", "") ?? "", session);
    expect(second.rows.map((r) => r.label)).toEqual(
      Array.from({ length: 8 }, (_, i) => `ended ${7 - i}`),
    );
    expect(second.links).toEqual({
      prev: {
        href: `/keys?show=ended&after=${second.rows[0]?.id}#keys`,
        text: "Newer ended keys",
      },
    });
    const ids = [...first.rows, ...second.rows].map((r) => r.id);
    expect(new Set(ids).size).toBe(58);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    // Back: the same first page, with only its link to older keys.
    const back = await keysPage(second.links.prev?.href.replace("#keys", "") ?? "", session);
    expect(back.rows).toEqual(first.rows);
    expect(back.links).toEqual(first.links);
  });

  it("never lists another account's keys, on any page, nor names its keys as successors", async () => {
    const { session } = await manyKeys();
    const other = await signUp();
    const pages = [
      await keysPage("/keys", session),
      await keysPage("/keys?show=ended", session),
      await keysPage("/keys?show=ended&before=999999999", session),
      await keysPage("/keys?show=ended&after=1", session),
    ];
    for (const { rows, page } of pages) {
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.filter((r) => r.label.startsWith("stranger"))).toEqual([]);
      expect(page.text).not.toContain("stranger");
    }
    // The other account sees none of them, whatever cursor it sends.
    for (const path of ["/keys", "/keys?show=ended", "/keys?show=ended&after=1"]) {
      const { rows } = await keysPage(path, other.session);
      expect(rows).toEqual([]);
    }
    // A successor of another account (a row no rotation makes) is not shown.
    const [mine] = pages[1]?.rows ?? [];
    const theirs = await env.DB.prepare(
      "SELECT id FROM api_keys WHERE label = 'stranger 0' ORDER BY id DESC",
    ).first<{ id: number }>();
    await env.DB.prepare("UPDATE api_keys SET replaced_by = ?2 WHERE id = ?1")
      .bind(mine?.id, theirs?.id)
      .run();
    const shown = await keysPage("/keys?show=ended", session);
    expect(shown.page.querySelector("table.keys tbody tr")?.text).not.toMatch(/\bby\b/);
  });

  it("shows a replaced key's successor even when it is on another page or tab", async () => {
    const { session } = await manyKeys();
    const { rows: ended } = await keysPage("/keys?show=ended", session);
    const { rows: active } = await keysPage("/keys", session);
    const [old, successor] = [ended.at(-1), active[0]];
    await env.DB.prepare("UPDATE api_keys SET replaced_by = ?2 WHERE id = ?1")
      .bind(old?.id, successor?.id)
      .run();
    const { page } = await keysPage("/keys?show=ended", session);
    const link = page.querySelectorAll("table.keys tbody tr").at(-1)?.querySelector(".when a");
    expect([link?.getAttribute("href"), link?.text]).toEqual([
      `/keys/${successor?.id}`,
      "psk_paged0…",
    ]);
  });

  it("responds to a hostile or stale cursor with the first page, or an empty page that leads there; never a 500", async () => {
    const { session } = await manyKeys();
    const first = await keysPage("/keys?show=ended", session);
    for (const cursor of [
      "before=abc",
      "before=-1",
      "before=0",
      "before=1e3",
      "before=99999999999999999999",
      "before=1%20OR%201%3D1",
      "after=%27%3B--",
      "before[]=5",
      `before=${"9".repeat(5000)}`,
    ]) {
      const page = await keysPage(`/keys?show=ended&${cursor}`, session);
      expect(page.rows, cursor).toEqual(first.rows);
    }
    // A cursor past the oldest key: nothing here, and a link to the newest.
    const empty = await keysPage("/keys?show=ended&before=1", session);
    expect(empty.rows).toEqual([]);
    const lead = empty.page.querySelector("#keys p a");
    expect([lead?.text, lead?.getAttribute("href")]).toEqual([
      "see the newest ones",
      "/keys?show=ended#keys",
    ]);
    // An unknown filter is the active one.
    const odd = await keysPage("/keys?show=%3Cscript%3E", session);
    expect(odd.rows.every((r) => r.status === "Active")).toBe(true);
  });

  it("reads a page in one D1 batch after the session's read, the listing at most 51 of the filter's rows (and the active ones it passes), at any depth", async () => {
    const { session } = await manyKeys();
    const first = await keysPage("/keys?show=ended", session);
    for (const [path, most] of [
      ["/keys?show=ended", KEYS_PAGE_SIZE + 1 + MAX_ACTIVE_KEYS],
      // Its 8 rows, and the index's next entry that ends the range.
      [first.links.next?.href.replace("#keys", "") ?? "", 8 + 1],
      // Active keys come from the account's unrevoked keys alone: 5 active, 3 expired.
      ["/keys", 8 + 1],
    ] as const) {
      recorder.reset();
      await keysPage(path, session, counted);
      const trips = recorder.finished();
      expect(
        trips.map((t) => t.what.match(/FROM (\w+)/)?.[1]),
        path,
      ).toEqual(["sessions", "api_keys"]);
      const [listing, summary] = trips[1]?.statements ?? [];
      expect(listing?.sql).toMatch(/ORDER BY id DESC\s+LIMIT/);
      expect(listing?.rowsRead, path).toBeLessThanOrEqual(most);
      expect(summary?.sql).toMatch(/count\(\*\)/);
    }
  });
});
