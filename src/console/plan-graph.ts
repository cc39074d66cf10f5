import type { StepStatus } from '../core/run-state.js';
import { consolePath, html, type SafeHtml } from './html.js';

/** Plans with more steps are shown as a table only: a graph that large says nothing. */
export const GRAPH_MAX_STEPS = 300;

const NODE_W = 170;
const NODE_H = 34;
const GAP_X = 60;
const GAP_Y = 14;
const PAD = 10;
const TITLE_CHARS = 22;

interface GraphNode {
  stepId: string;
  title: string;
  status: StepStatus;
  dependsOn: readonly string[];
  /** Shown after the status: a fan-out's progress over its items (`12/40 done, 2 running`). */
  note?: string;
}

/**
 * The plan as a left-to-right dependency graph, drawn on the server as SVG: each step in the column
 * of its longest chain of dependencies, an edge from each dependency, coloured by status (CSS
 * classes, no inline style), each node a link to its step page. Text goes through `html`.
 */
export function planGraphSvg(runId: string, nodes: readonly GraphNode[]): SafeHtml {
  const depth = new Map<string, number>();
  const byId = new Map(nodes.map((node) => [node.stepId, node]));
  // Plans are checked acyclic; steps come in plan order, dependencies possibly later: resolve lazily.
  const depthOf = (id: string, seen = new Set<string>()): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    if (seen.has(id)) return 0;
    seen.add(id);
    const node = byId.get(id);
    const value = node ? Math.max(-1, ...node.dependsOn.map((dep) => depthOf(dep, seen))) + 1 : 0;
    depth.set(id, value);
    return value;
  };
  const columns: GraphNode[][] = [];
  for (const node of nodes) {
    const column = depthOf(node.stepId);
    const list = columns[column] ?? [];
    list.push(node);
    columns[column] = list;
  }
  const place = new Map<string, { x: number; y: number }>();
  columns.forEach((column, c) => {
    column.forEach((node, r) => {
      place.set(node.stepId, { x: PAD + c * (NODE_W + GAP_X), y: PAD + r * (NODE_H + GAP_Y) });
    });
  });
  const rows = Math.max(1, ...columns.map((column) => column?.length ?? 0));
  const width = PAD * 2 + columns.length * (NODE_W + GAP_X) - GAP_X;
  const height = PAD * 2 + rows * (NODE_H + GAP_Y) - GAP_Y;
  const edges = nodes.flatMap((node) =>
    node.dependsOn.map((dep) => {
      const from = place.get(dep);
      const to = place.get(node.stepId)!;
      if (!from) return html``;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      return html`<path class="edge" d="M${x1} ${y1} C${mid} ${y1} ${mid} ${y2} ${x2} ${y2}"/>`;
    }),
  );
  const boxes = nodes.map((node) => {
    const { x, y } = place.get(node.stepId)!;
    const title = node.title.length > TITLE_CHARS ? `${node.title.slice(0, TITLE_CHARS - 1)}…` : node.title;
    return html`<a href="${consolePath('runs', runId, 'steps', node.stepId)}" class="node status-${node.status}" data-step="${node.stepId}"><title>${node.stepId}: ${node.title} (${node.status}${node.note === undefined ? '' : `, ${node.note}`})</title><rect x="${x}" y="${y}" width="${NODE_W}" height="${NODE_H}" rx="5"/><text x="${x + 8}" y="${y + 14}">${title}</text><text class="sub" x="${x + 8}" y="${y + 28}">${node.note === undefined ? node.status : `${node.status} · ${node.note}`}</text></a>`;
  });
  return html`<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="plan graph">${edges}${boxes}</svg>`;
}
