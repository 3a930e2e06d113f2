// Every pointer into the documentation names a section that exists: a comment's
// `docs/keys.md, "Managing keys"` (or `README "..."`) and a Markdown link's
// `keys.md#the-tag-secret`, and a Markdown link's file, in every file git tracks.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";

const files = execFileSync("git", ["ls-files"], { encoding: "utf8" }).split("\n").filter(Boolean);
/** This file, whose comments show the forms it checks. */
const self = path.relative(process.cwd(), import.meta.filename);
const text = (file: string) => readFileSync(file, "utf8");

/** The headings of a Markdown file, and the anchors GitHub makes of them. */
function sections(file: string) {
  const headings = [...text(file).matchAll(/^#{1,6} (.+)$/gm)].map((m) => (m[1] as string).trim());
  const anchor = (h: string) =>
    h
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replaceAll(" ", "-");
  return { headings, anchors: headings.map(anchor) };
}

it("every section a file points to exists", () => {
  const dangling: string[] = [];
  const docs = (name: string) => (name === "README" ? "README.md" : name);
  for (const file of files.filter(
    (f) => /\.(ts|md|toml|sql|yml|json)$|^\.ci\//.test(f) && f !== self,
  )) {
    const content = text(file);
    // docs/keys.md, "Managing keys" | docs/api.md "..." | docs/design.md ("...") | README "..."
    // (a link's text is left to the link's own check below)
    for (const m of content.matchAll(/(?<!\[)\b(README|docs\/[\w-]+\.md),? \(?"([^"\n]+)"/g)) {
      const target = docs(m[1] as string);
      if (!files.includes(target) || !sections(target).headings.includes(m[2] as string))
        dangling.push(`${file}: ${m[0]}`);
    }
    if (!file.endsWith(".md")) continue;
    // [text](#anchor), [text](other.md#anchor), relative to the Markdown file
    for (const m of content.matchAll(/\]\(([\w./-]*\.md)?#([\w-]+)\)/g)) {
      const target = m[1] ? path.join(path.dirname(file), m[1]) : file;
      if (!files.includes(target) || !sections(target).anchors.includes(m[2] as string))
        dangling.push(`${file}: ${m[0]}`);
    }
    // [text](../SECURITY.md), [text](packages/client/): a tracked file or folder
    for (const m of content.matchAll(/\]\((?![a-z]+:)([^\s#)]+)[^)]*\)/g)) {
      const target = path.join(path.dirname(file), m[1] as string).replace(/\/$/, "");
      if (!files.includes(target) && !files.some((f) => f.startsWith(`${target}/`)))
        dangling.push(`${file}: ${m[0]}`);
    }
  }
  expect(dangling).toEqual([]);
});
