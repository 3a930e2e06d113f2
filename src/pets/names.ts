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

/** The BMP characters that `matches` takes, as the contents of a class of `\\uXXXX` ranges. */
function bmpClass(matches: (character: string) => boolean): string {
  const hex = (cp: number) => `\\u${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  const ranges: string[] = [];
  let start = -1;
  for (let cp = 0; cp <= 0x10000; cp++) {
    const surrogate = cp >= 0xd800 && cp <= 0xdfff;
    const taken = cp < 0x10000 && !surrogate && matches(String.fromCharCode(cp));
    if (taken && start < 0) start = cp;
    if (!taken && start >= 0) {
      ranges.push(start === cp - 1 ? hex(start) : `${hex(start)}-${hex(cp - 1)}`);
      start = -1;
    }
  }
  return ranges.join("");
}

/**
 * The name rules as one JSON Schema pattern that means the same to a validator that
 * reads patterns Unicode-aware (as JSON Schema 2020-12 asks) and to one that does not
 * (draft-07-era ones, such as Postman's): no `\\p{...}`, only BMP escapes, computed from
 * the checks above (so it runs at build time: it tries all 65,536). Any character beyond
 * the BMP counts as an allowed sign, so the pattern lets through what the server refuses
 * beyond the BMP only: unassigned code points and noncharacters there, and names whose
 * only sign is there among invisible or unsigned characters (tags, private use).
 */
export function portableNamePattern(): string {
  const forbidden = bmpClass((c) => CONTROL.test(c) || BIDI_CONTROL.test(c) || UNASSIGNED.test(c));
  const unsigned = bmpClass((c) => !SIGN.test(c));
  // A surrogate only as half of a pair: a lone one is refused, read Unicode-aware or not.
  const pair = "[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]";
  const allowed = `(?:[^${forbidden}\\uD800-\\uDFFF]|${pair})`;
  const sign = `(?:[^${unsigned}\\uD800-\\uDFFF]|${pair})`;
  // Every character allowed (the lookahead), and a sign somewhere.
  return `^(?=${allowed}*$)[\\s\\S]*${sign}`;
}
