/**
 * Control characters (C0, DEL, C1) have no place in a program name or an argument of a command
 * Baton runs: a newline or an escape sequence in argv hides what runs from whoever reads the plan
 * or a log of it, and no agent CLI takes one in a flag.
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** `U+000A`, the first control character of `text`, or undefined. */
export function firstControlCharacter(text: string): string | undefined {
  const match = CONTROL_CHARACTER.exec(text);
  return match === null
    ? undefined
    : `U+${match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The message for an argv element holding one: `contains a control character (U+000A)...`. */
export function controlCharacterProblem(code: string): string {
  return `contains a control character (${code}): a program name or argument cannot hold one; remove it`;
}
