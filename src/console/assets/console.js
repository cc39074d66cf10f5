// The console's only script (no framework, nothing downloaded): live updates of the page from the
// event log (Server-Sent Events), the run timeline drawn from its data, and live attempt logs.
// Every text from the server is set with textContent or comes escaped in server-made HTML.
(() => {
  const page = document.getElementById('page');
  if (!page) return;
  const liveState = document.getElementById('live-state');
  const SVG = 'http://www.w3.org/2000/svg';

  // --- live page updates -------------------------------------------------------------------
  let timer = null;
  let busy = false;
  let again = false;

  function schedule(delay = 150) {
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      refresh();
    }, delay);
  }

  /** Someone is typing in a form of the page: do not swap it away under them. */
  function editing() {
    const active = document.activeElement;
    return active && page.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
  }

  async function refresh() {
    if (busy) {
      again = true;
      return;
    }
    if (editing()) {
      schedule(1000);
      return;
    }
    busy = true;
    try {
      const response = await fetch(location.href, {
        headers: { 'X-Baton-Fragment': '1' },
        credentials: 'same-origin',
      });
      if (!response.ok) {
        if (response.status === 401) setLive('signed out');
        return;
      }
      const text = await response.text();
      const oldLog = page.querySelector('pre[data-log-stream]');
      page.innerHTML = text;
      const newLog = page.querySelector('pre[data-log-stream]');
      if (oldLog && newLog && oldLog.dataset.logStream === newLog.dataset.logStream)
        newLog.replaceWith(oldLog);
      page.dispatchEvent(new CustomEvent('baton:refreshed'));
      document.documentElement.dataset.refreshes = String(
        Number(document.documentElement.dataset.refreshes || 0) + 1,
      );
      init();
    } catch {
      setLive('offline');
    } finally {
      busy = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  }

  function setLive(text) {
    if (!liveState) return;
    liveState.hidden = false;
    liveState.textContent = text;
  }

  function connect() {
    const url = page.dataset.live;
    if (!url || typeof EventSource === 'undefined') return;
    const source = new EventSource(url);
    source.onopen = () => setLive('live');
    source.onerror = () => setLive('reconnecting');
    source.onmessage = () => schedule();
  }

  // --- timeline ------------------------------------------------------------------------------
  function el(name, attributes, text) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function duration(ms) {
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
    if (ms < 3600000) return `${Math.floor(ms / 60000)} m ${Math.round((ms % 60000) / 1000)} s`;
    return `${Math.floor(ms / 3600000)} h ${Math.round((ms % 3600000) / 60000)} m`;
  }

  async function drawTimeline(box) {
    const started = performance.now();
    const response = await fetch(box.dataset.src, { credentials: 'same-origin' });
    if (!response.ok) return;
    const data = await response.json();
    const LABEL = 150;
    const ROW = 22;
    const TOP = 24;
    const width = Math.max(600, box.clientWidth || 900);
    const rows = data.steps.length + 1;
    const height = TOP + rows * ROW + 6;
    const span = Math.max(1, data.end);
    const x = (t) => LABEL + (t / span) * (width - LABEL - 12);
    const svg = el('svg', {
      class: 'gantt',
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': 'timeline',
    });
    const rowY = (index) => TOP + (index + 1) * ROW;
    for (let i = 0; i <= 4; i++) {
      const t = (span * i) / 4;
      svg.append(el('line', { class: 'tick', x1: x(t), x2: x(t), y1: TOP - 6, y2: height }));
      svg.append(
        el(
          'text',
          {
            class: 'tick-label',
            x: x(t),
            y: 12,
            'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle',
          },
          `+${duration(t)}`,
        ),
      );
    }
    svg.append(el('text', { class: 'row-label', x: 4, y: rowY(-1) + 15 }, 'run'));
    data.steps.forEach((id, i) => {
      if (i % 2 === 0) svg.append(el('rect', { class: 'band', x: 0, y: rowY(i), width, height: ROW }));
      svg.append(
        el(
          'text',
          { class: 'row-label', x: 4, y: rowY(i) + 15 },
          id.length > 20 ? `${id.slice(0, 19)}…` : id,
        ),
      );
    });
    const fragment = document.createDocumentFragment();
    for (const [row, at, length, kind, attempt, fallback] of data.spans) {
      const wait = kind === 'wait';
      const rect = el('rect', {
        class: `span k-${kind}${fallback ? ' k-fallback' : ''}`,
        x: x(at),
        y: rowY(row) + (wait ? 9 : 4),
        width: Math.max(1.5, x(at + length) - x(at)),
        height: wait ? 4 : ROW - 8,
        'data-kind': kind,
      });
      const what = wait
        ? `wait before attempt ${attempt}`
        : `attempt ${attempt}${fallback ? ' (fallback)' : ''}: ${kind}`;
      rect.append(
        el('title', {}, `${data.steps[row] ?? 'run'} · ${what} · ${duration(length)} at +${duration(at)}`),
      );
      fragment.append(rect);
    }
    for (const [row, at, kind, label] of data.marks) {
      const cx = x(at);
      const cy = rowY(row) + ROW / 2;
      const mark = el('path', {
        class: `mark m-${kind}`,
        d: `M${cx} ${cy - 6} l5 6 l-5 6 l-5 -6 z`,
        'data-kind': kind,
      });
      mark.append(el('title', {}, `${data.steps[row] ?? 'run'} · ${label} at +${duration(at)}`));
      fragment.append(mark);
    }
    svg.append(fragment);
    box.replaceChildren(svg);
    box.dataset.drawn = String(data.spans.length);
    window.__batonTimelineMs = performance.now() - started;
  }

  // --- live attempt log -----------------------------------------------------------------------
  function followLog(pre) {
    if (pre.dataset.started) return;
    pre.dataset.started = '1';
    const source = new EventSource(pre.dataset.logStream);
    source.onmessage = (event) => {
      const text = JSON.parse(event.data);
      const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.append(document.createTextNode(text));
      if (atBottom) pre.scrollTop = pre.scrollHeight;
    };
    source.addEventListener('end', () => {
      source.close();
      pre.dataset.ended = '1';
      schedule();
    });
  }

  function init() {
    for (const box of page.querySelectorAll('[data-timeline], #timeline[data-src]'))
      drawTimeline(box).catch(() => {});
    for (const pre of page.querySelectorAll('pre[data-log-stream]')) followLog(pre);
  }

  init();
  connect();
})();
