// The script of the "Quiver: Run Metrics" webview: draws one SVG chart per metric
// of the current run (value against step), from the messages the extension posts
// (see ToView in ../metrics.ts). Bundled by esbuild into dist/metricsView.js and
// loaded with the page's nonce; it loads nothing else. Metric names are written
// with textContent, never as HTML.

import { CHART_BOX, chartGeometry, formatValue, FromView, MetricsData, RunState, Series, ToView } from '../metrics';

declare function acquireVsCodeApi(): { postMessage(message: FromView): void };

const SVG = 'http://www.w3.org/2000/svg';
const vscode = acquireVsCodeApi();

let data = new MetricsData();
let runId: string | undefined;
let drawPending = false;

const title = document.getElementById('run-name') as HTMLElement;
const stateEl = document.getElementById('run-state') as HTMLElement;
const charts = document.getElementById('charts') as HTMLElement;
const empty = document.getElementById('empty') as HTMLElement;

const STATE_TEXT: Record<RunState, string> = {
  running: 'running',
  ok: 'finished',
  failed: 'failed',
  stopped: 'stopped',
  timeout: 'timed out',
};

function setState(state: RunState, message?: string): void {
  stateEl.textContent = STATE_TEXT[state] + (message ? `: ${message}` : '');
  stateEl.className = `state state-${state}`;
  document.body.dataset.runState = state;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    el.setAttribute(k, String(v));
  }
  return el;
}

function chartFor(s: Series): HTMLElement {
  const id = `metric-${encodeURIComponent(s.name)}`;
  let section = document.getElementById(id);
  if (section === null) {
    section = document.createElement('section');
    section.id = id;
    section.className = 'chart';
    section.dataset.metric = s.name;
    const h = document.createElement('h2');
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = s.name;
    const last = document.createElement('span');
    last.className = 'last';
    h.append(name, last);
    section.append(h, svg('svg', { viewBox: `0 0 ${CHART_BOX.width} ${CHART_BOX.height}`, role: 'img' }));
    charts.append(section);
  }
  return section;
}

function draw(): void {
  drawPending = false;
  empty.hidden = data.series.size > 0;
  document.body.dataset.records = String(data.records);
  for (const s of data.series.values()) {
    const section = chartFor(s);
    const g = chartGeometry(s);
    const b = CHART_BOX;
    const plot = svg('svg', { viewBox: `0 0 ${b.width} ${b.height}`, role: 'img' });
    plot.setAttribute('aria-label', `${s.name} against step`);
    const x0 = b.left;
    const x1 = b.width - b.right;
    const y0 = b.top;
    const y1 = b.height - b.bottom;
    plot.append(svg('rect', { class: 'frame', x: x0, y: y0, width: x1 - x0, height: y1 - y0 }));
    const label = (text: string, x: number, y: number, anchor: string): void => {
      const t = svg('text', { x, y, 'text-anchor': anchor, class: 'axis' });
      t.textContent = text;
      plot.append(t);
    };
    label(formatValue(g.maxValue), x0 - 6, y0 + 10, 'end');
    label(formatValue(g.minValue), x0 - 6, y1, 'end');
    label(String(g.minStep), x0, b.height - 8, 'start');
    label(`step ${g.maxStep}`, x1, b.height - 8, 'end');
    for (const x of g.nonFinite) {
      plot.append(svg('line', { class: 'nonfinite', x1: x, x2: x, y1: y0, y2: y1 }));
    }
    plot.append(svg('path', { class: 'curve', d: g.path || 'M0 0', 'data-points': g.points }));
    if (g.points === 1) {
      const m = /^M([\d.-]+) ([\d.-]+)/.exec(g.path);
      if (m) {
        plot.append(svg('circle', { class: 'dot', cx: m[1], cy: m[2], r: 3 }));
      }
    }
    section.replaceChild(plot, section.querySelector('svg') as SVGSVGElement);
    section.dataset.points = String(g.points);
    section.dataset.nonFinite = String(g.nonFinite.length);
    const last = section.querySelector('.last') as HTMLElement;
    last.textContent = `${formatValue(g.last)} at step ${g.maxStep}` + (g.nonFinite.length ? ` · ${g.nonFinite.length} NaN` : '') + (s.thinned ? ` · ${s.steps.length} of ${s.steps.length + s.thinned} points` : '');
  }
}

function scheduleDraw(): void {
  if (!drawPending) {
    drawPending = true;
    setTimeout(draw, 16); // at most one redraw per frame, however many batches arrive
  }
}

window.addEventListener('message', (event: MessageEvent<ToView>) => {
  const m = event.data;
  if (m === null || typeof m !== 'object') {
    return;
  }
  if (m.type === 'reset') {
    runId = m.runId;
    data = new MetricsData();
    charts.replaceChildren();
    title.textContent = m.name;
    document.body.dataset.runId = m.runId;
    setState(m.state);
    scheduleDraw();
  } else if (m.type === 'records' && m.runId === runId && Array.isArray(m.records)) {
    data.add(m.records);
    scheduleDraw();
  } else if (m.type === 'state' && m.runId === runId) {
    setState(m.state, m.message);
  }
});

vscode.postMessage({ type: 'ready' });
