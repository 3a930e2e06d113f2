// The name rules (a pet's name; the platform's key labels and display names): one zod
// check list for both workers, and the JSON Schema pattern that states them in the document.
import * as z from "zod/mini";

// By Unicode property: no control characters (Cc: C0, DEL, C1), no bidirectional controls,
// no unassigned code points or noncharacters (Cn holds both); one visible character at
// least (not white space, a control, a format character, another default-ignorable code
// point, nor the blanks U+2800 and U+FFFC), and among the visible ones a letter, number,
// punctuation mark or symbol (a combining mark or private-use characters alone are no name).
const CONTROL = /\p{Cc}/u;
const BIDI_CONTROL = /\p{Bidi_Control}/u;
const UNASSIGNED = /\p{Cn}/u;
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2800\uFFFC]/u;
const SIGN = /(?![\p{Default_Ignorable_Code_Point}\u2800\uFFFC])[\p{L}\p{N}\p{P}\p{S}]/u;

/** The checks of a name of 1 to `max` code points, each refusal with its own message. */
function nameChecks(max: number) {
  return [
    z.refine<string>((s) => s.isWellFormed(), {
      error: "must not contain lone surrogates",
      abort: true,
    }),
    z.refine<string>(
      (s) => {
        const codePoints = [...s].length;
        return codePoints >= 1 && codePoints <= max;
      },
      { error: `must be 1 to ${max} characters long`, abort: true },
    ),
    z.refine<string>((s) => !CONTROL.test(s), {
      error: "must not contain control characters (U+0000-U+001F, U+007F-U+009F)",
      abort: true,
    }),
    z.refine<string>((s) => !BIDI_CONTROL.test(s), {
      error:
        "must not contain bidirectional control characters (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)",
      abort: true,
    }),
    z.refine<string>((s) => !UNASSIGNED.test(s), {
      error:
        "must not contain unassigned code points or noncharacters (such as U+0378, U+FDD0, U+FFFE, U+FFFF)",
      abort: true,
    }),
    z.refine<string>((s) => VISIBLE.test(s), {
      error:
        "must not be blank: it needs a visible character, not only white space or invisible ones",
      abort: true,
    }),
    z.refine<string>((s) => SIGN.test(s), {
      error:
        "needs a letter, number, punctuation mark or symbol: combining marks or private-use characters alone are not a name",
    }),
  ] as const;
}

/** What the rules say, for a schema's description. */
export const NAME_RULES_TEXT =
  "at least one visible letter, number, punctuation mark or symbol (not only white space, format, other default-ignorable characters, combining marks, private-use characters or the blanks U+2800 and U+FFFC); no control characters (U+0000-U+001F, U+007F-U+009F), no bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069), no unassigned code points or noncharacters, no lone surrogates";

/** A name of 1 to `max` code points under the rules; "is required" when absent. */
export function nameSchema(max: number) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
    .check(...nameChecks(max));
}

// The document's pattern. Validators read a pattern in one of two ways: as code points
// (Unicode-aware, as JSON Schema 2020-12 asks: a surrogate pair is one character) or as
// UTF-16 code units (draft-07-era ones, such as Postman's: a pair is two). The pattern below
// means the same to both, in every plane, with `\uXXXX` escapes only (no `\p{...}`, which
// the second kind cannot read). It is computed from the checks above at build time.

type Ranges = Array<[number, number]>;

/** The code points (surrogates aside) that `takes`, as ranges, none across U+FFFF/U+10000. */
function codePointRanges(takes: (character: string) => boolean): Ranges {
  const ranges: Ranges = [];
  let start = -1;
  for (let cp = 0; cp <= 0x110000; cp++) {
    const surrogate = cp >= 0xd800 && cp <= 0xdfff;
    const taken = cp <= 0x10ffff && !surrogate && takes(String.fromCodePoint(cp));
    if (taken && start < 0) start = cp;
    if (start >= 0 && (!taken || cp === 0x10000)) {
      ranges.push([start, cp - 1]);
      start = taken ? cp : -1;
    }
  }
  return ranges;
}

/** A code point as `\uXXXX` (a surrogate pair beyond the BMP; a lone surrogate as itself). */
function unicodeEscape(cp: number): string {
  const units = String.fromCodePoint(cp).split("");
  return units
    .map((u) => `\\u${u.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)
    .join("");
}

/** BMP ranges (or surrogates) as the contents of a class, a range of one or two as members. */
function classContents(ranges: Ranges): string {
  return ranges
    .map(([from, to]) => (to - from < 2 ? [from, to] : [from, -1, to]))
    .flatMap((points) => [...new Set(points)].map((cp) => (cp < 0 ? "-" : unicodeEscape(cp))))
    .join("");
}

/**
 * Astral ranges for a reader of code units: a lead surrogate, then a class of trail
 * surrogates (leads in a row with the same trails share a class of leads). A reader of code
 * points never matches these: to it, a lead surrogate in the pattern is a lone one.
 */
function surrogatePairs(ranges: Ranges): string {
  const trails = new Map<number, Ranges>();
  const lead = (cp: number) => 0xd800 + ((cp - 0x10000) >> 10);
  const trail = (cp: number) => 0xdc00 + ((cp - 0x10000) & 0x3ff);
  for (const [from, to] of ranges) {
    for (let cp = from; cp <= to; cp = (cp | 0x3ff) + 1) {
      const last = Math.min(to, cp | 0x3ff);
      trails.set(lead(cp), [...(trails.get(lead(cp)) ?? []), [trail(cp), trail(last)]]);
    }
  }
  const groups: Array<{ first: number; last: number; trails: string }> = [];
  for (const [unit, list] of trails) {
    const contents = classContents(list);
    const previous = groups.at(-1);
    if (previous?.trails === contents && previous.last === unit - 1) previous.last = unit;
    else groups.push({ first: unit, last: unit, trails: contents });
  }
  const leads = (first: number, last: number) =>
    first === last ? unicodeEscape(first) : `[${classContents([[first, last]])}]`;
  return groups.map(({ first, last, trails }) => `${leads(first, last)}[${trails}]`).join("|");
}

/** Ranges to a node of the tree below: more makes the pattern shorter, fewer makes it faster. */
const FAN_OUT = 8;

/**
 * Astral ranges for a reader of code points, in (floor, ceiling]. No class can hold a range
 * of astral code points that both readers parse (`[\uD83D\uDE00-\uD83D\uDE4F]` runs backwards
 * to a reader of code units), but one from U+0000 up to one can: `[^\u0000-X]` is every code
 * point above X, so `(?![^\u0000-Y])[^\u0000-X]` is the range X+1..Y. A tree of such bounds,
 * FAN_OUT to a node, tries a few of them for a code point rather than all. (`[\u0000-Y]`
 * would read the same, but V8 then checks for lone surrogates: about fifty times slower.)
 */
function codePointTree(ranges: Ranges, floor: number, ceiling: number): string {
  const above = (cp: number) => `[^\\u0000-${unicodeEscape(cp)}]`;
  const notAbove = (cp: number) => (cp === ceiling ? "" : `(?!${above(cp)})`);
  if (ranges.length <= FAN_OUT) {
    // A range of up to four is shorter as the members of a class.
    const short = ranges.filter(([from, to]) => to - from < 4);
    const branches = ranges
      .filter(([from, to]) => to - from >= 4)
      .map(([from, to]) => `${notAbove(to)}${above(from - 1)}`);
    const members = short.flatMap(([from, to]) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i),
    );
    if (members.length > 0) branches.push(`[${members.map(unicodeEscape).join("")}]`);
    return branches.join("|");
  }
  const size = FAN_OUT ** Math.ceil(Math.log(ranges.length) / Math.log(FAN_OUT) - 1);
  const branches: string[] = [];
  for (let at = 0, low = floor; at < ranges.length; at += size) {
    const node = ranges.slice(at, at + size);
    const high = node.at(-1)?.[1] ?? ceiling;
    // Only one node holds a code point: above the last node's highest, up to its own.
    const bounds = `${low === floor ? "" : `(?=${above(low)})`}${notAbove(high)}`;
    branches.push(`${bounds}(?:${codePointTree(node, low, high)})`);
    low = high;
  }
  return branches.join("|");
}

/**
 * One character that `takes`, for either reader: a class of BMP ranges; the tree, behind a
 * lookahead a reader of code units never passes (`[^\u0000-\uFFFF]` holds no code unit); and
 * the surrogate pairs, behind one a reader of code points never passes (two lone surrogates
 * in a row are a pair to it). Surrogates are in none of them: a lone one is refused.
 */
function portableClass(takes: (character: string) => boolean): string {
  const ranges = codePointRanges(takes);
  const astral = ranges.filter(([from]) => from > 0xffff);
  const bmp = `[${classContents(ranges.filter(([from]) => from <= 0xffff))}]`;
  const tree = `(?=[^\\u0000-\\uFFFF])(?:${codePointTree(astral, 0xffff, 0x10ffff)})`;
  const pairs = `(?=[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])(?:${surrogatePairs(astral)})`;
  return `(?:${bmp}|${tree}|${pairs})`;
}

/**
 * Any astral code point, to a reader that sees code points but not escaped pairs (Python's
 * `re`: to it, `\uDBFF\uDFFF` is two lone surrogates, not U+10FFFF); to the two readers
 * above, nothing. Such a reader cannot tell astral code points apart: it takes them all.
 */
const ASTRAL_UNPAIRED = "(?=[^\\u0000-\\uDBFF\\uDFFF])[^\\u0000-\\uFFFF]";

/**
 * The name rules as a JSON Schema pattern (minLength and maxLength count the code points):
 * every character allowed, and not every one unsigned. A sign is visible, so a name with
 * one is not blank: the blank check needs no part of its own. The end is `(?![\s\S])`, not
 * `$`, which Python's and Java's readers also find before a final line feed.
 */
export function portableNamePattern(): string {
  const allowed = (c: string) => !CONTROL.test(c) && !BIDI_CONTROL.test(c) && !UNASSIGNED.test(c);
  const unsigned = (c: string) => allowed(c) && !SIGN.test(c);
  const end = "(?![\\s\\S])";
  return `^(?!${portableClass(unsigned)}*${end})(?:${portableClass(allowed)}|${ASTRAL_UNPAIRED})*${end}`;
}
