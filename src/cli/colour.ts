/**
 * Colours of the terminal output: on a TTY only, never in --json. `NO_COLOR` (any non-empty value)
 * turns them off whatever else is set; `FORCE_COLOR` turns them on where they would be off (a pipe,
 * `less -R`), except `FORCE_COLOR=0` or `false`, which turns them off.
 */
export function useColour(
  stream: { isTTY?: boolean },
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  return stream.isTTY === true && env.TERM !== 'dumb';
}

const SGR = { red: 31, green: 32, yellow: 33, cyan: 36, dim: 2 } as const;
type Paint = keyof typeof SGR;

/** How each run and step status is drawn: done green, needs a human red, in motion yellow. */
const STATUS_PAINT: Record<string, Paint> = {
  succeeded: 'green',
  degraded: 'yellow',
  skipped: 'dim',
  running: 'yellow',
  ready: 'yellow',
  retry_wait: 'yellow',
  waiting: 'cyan',
  pending: 'dim',
  blocked: 'red',
  failed: 'red',
  cancelled: 'dim',
  awaiting_approval: 'cyan',
};

/** Paints text when `on`; off, it is returned as it is. */
export type Painter = (paint: Paint, text: string) => string;

export function painter(on: boolean): Painter {
  return on ? (paint, text) => `\x1b[${SGR[paint]}m${text}\x1b[0m` : (_paint, text) => text;
}

/** A status word (`succeeded`, `blocked`, …) in its colour. */
export function paintStatus(paint: Painter, status: string): string {
  const colour = STATUS_PAINT[status];
  return colour ? paint(colour, status) : status;
}
