/**
 * The Prometheus text exposition format, version 0.0.4 (what every Prometheus, VictoriaMetrics,
 * Grafana Agent and OpenTelemetry collector scrapes): one `# HELP` and `# TYPE` line per family,
 * then its samples. Label values and help texts escaped as the format says.
 */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'gauge' | 'counter' | 'histogram';

export type Labels = Readonly<Record<string, string>>;

/** Writes metric families one after another; `text()` is the exposition. */
export class MetricsText {
  private readonly lines: string[] = [];

  /** Starts a family: its name (`[a-zA-Z_:][a-zA-Z0-9_:]*`), what it means, its type. */
  family(name: string, type: MetricType, help: string): this {
    this.lines.push(`# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`);
    this.lines.push(`# TYPE ${name} ${type}`);
    return this;
  }

  /** One sample of the family just started (a histogram's: `<name>_bucket`, `_sum`, `_count`). */
  sample(name: string, value: number, labels: Labels = {}): this {
    this.lines.push(`${name}${labelText(labels)} ${numberText(value)}`);
    return this;
  }

  /**
   * A histogram without labels from per-bucket counts (`counts[i]`: observations at most
   * `bounds[i]` and above the bound before; the last: above every bound), their sum and count.
   */
  histogram(name: string, bounds: readonly number[], counts: readonly number[], sum: number): this {
    let cumulative = 0;
    bounds.forEach((bound, i) => {
      cumulative += counts[i] ?? 0;
      this.sample(`${name}_bucket`, cumulative, { le: numberText(bound) });
    });
    cumulative += counts[bounds.length] ?? 0;
    this.sample(`${name}_bucket`, cumulative, { le: '+Inf' });
    this.sample(`${name}_sum`, sum);
    return this.sample(`${name}_count`, cumulative);
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels);
  if (pairs.length === 0) return '';
  const inner = pairs.map(
    ([key, value]) => `${key}="${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return `{${inner.join(',')}}`;
}

function numberText(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
