/**
 * The console's one escape: every value put into a page goes through `html` (text and attribute
 * values alike, always double-quoted), unless it is itself `SafeHtml` made by `html`. Nothing else
 * writes markup from data, so a plan name, a step id, an instruction, an input, an output, a log
 * line or an error message can only ever be text.
 */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Text as HTML text or as a double-quoted attribute value. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Part = SafeHtml | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof SafeHtml) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** A template whose every interpolation is escaped (arrays are joined, `SafeHtml` kept as is). */
export function html(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += render(value) + strings[index + 1]!;
  });
  return new SafeHtml(out);
}

/** A path of the console with each segment encoded, e.g. `path('runs', id, 'steps', step)`. */
export function consolePath(...segments: (string | number)[]): string {
  return `/${segments.map((s) => encodeURIComponent(String(s))).join('/')}`;
}
