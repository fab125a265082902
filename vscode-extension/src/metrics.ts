// The data of the Run Metrics chart: the steps a run logged (quiver/runMetrics),
// one series per metric, and the SVG geometry of each chart. Pure, and shared by
// the extension (which keeps the current run's series) and the webview script
// (which draws them).

/** A logged step as the server sends it; a value that was not finite (NaN, inf) is null. */
export interface MetricsRecord {
  step: number;
  values: Record<string, number | null>;
}

export interface RunMetricsParams {
  uri: string;
  runId: string;
  records: MetricsRecord[];
}

export type RunState = 'running' | 'ok' | 'failed' | 'stopped' | 'timeout';

/** One metric: steps and values, in the order logged. A null value is a step where it was not finite. */
export interface Series {
  name: string;
  steps: number[];
  values: Array<number | null>;
  /** Points dropped to keep the series within its bound (the chart shows every other one of the old points). */
  thinned: number;
}

/** Points kept per metric; beyond it the older points are thinned out (every other one goes). */
export const MAX_POINTS = 2000;
/** Metrics drawn per run; the names beyond it are ignored (and counted). */
export const MAX_SERIES = 32;

/** A run's metrics: its series by name, in the order they first appeared. */
export class MetricsData {
  readonly series = new Map<string, Series>();
  records = 0;
  ignoredNames = 0;

  constructor(private readonly maxPoints = MAX_POINTS) {}

  add(records: readonly MetricsRecord[]): void {
    for (const r of records) {
      if (r === null || typeof r !== 'object' || typeof r.step !== 'number' || !Number.isFinite(r.step) || r.values === null || typeof r.values !== 'object') {
        continue; // not a record: skip it rather than break the chart
      }
      this.records += 1;
      for (const [name, raw] of Object.entries(r.values)) {
        const value = typeof raw === 'number' && Number.isFinite(raw) ? raw : null;
        let s = this.series.get(name);
        if (s === undefined) {
          if (this.series.size >= MAX_SERIES) {
            this.ignoredNames += 1;
            continue;
          }
          s = { name, steps: [], values: [], thinned: 0 };
          this.series.set(name, s);
        }
        s.steps.push(r.step);
        s.values.push(value);
        if (s.steps.length > this.maxPoints) {
          thin(s);
        }
      }
    }
  }

  /** Everything, to send to a webview that (re)loads. */
  snapshot(): MetricsRecord[] {
    const byStep: MetricsRecord[] = [];
    for (const s of this.series.values()) {
      for (let i = 0; i < s.steps.length; i++) {
        byStep.push({ step: s.steps[i], values: { [s.name]: s.values[i] } });
      }
    }
    return byStep;
  }
}

/** Drops every other point of the series, keeping the last: the curve keeps its shape with half the points. */
function thin(s: Series): void {
  const steps: number[] = [];
  const values: Array<number | null> = [];
  const n = s.steps.length;
  for (let i = 0; i < n; i++) {
    if ((n - 1 - i) % 2 === 0) {
      steps.push(s.steps[i]);
      values.push(s.values[i]);
    }
  }
  s.thinned += n - steps.length;
  s.steps = steps;
  s.values = values;
}

export interface ChartGeometry {
  /** SVG path data of the curve: `M x y L x y …`, broken where a value is not finite. */
  path: string;
  /** Points drawn (finite values). */
  points: number;
  /** x positions of the steps whose value was not finite (drawn as marks). */
  nonFinite: number[];
  minStep: number;
  maxStep: number;
  minValue: number | undefined;
  maxValue: number | undefined;
  last: number | null | undefined;
}

export interface Box {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export const CHART_BOX: Box = { width: 640, height: 220, left: 64, right: 12, top: 10, bottom: 26 };

function round(v: number): string {
  return (Math.round(v * 10) / 10).toString();
}

/** Scales a series into the box: x by step, y by value (a flat series sits in the middle). */
export function chartGeometry(s: Series, box: Box = CHART_BOX): ChartGeometry {
  const n = s.steps.length;
  let minStep = Infinity;
  let maxStep = -Infinity;
  let minValue = Infinity;
  let maxValue = -Infinity;
  for (let i = 0; i < n; i++) {
    minStep = Math.min(minStep, s.steps[i]);
    maxStep = Math.max(maxStep, s.steps[i]);
    const v = s.values[i];
    if (v !== null) {
      minValue = Math.min(minValue, v);
      maxValue = Math.max(maxValue, v);
    }
  }
  const plotW = box.width - box.left - box.right;
  const plotH = box.height - box.top - box.bottom;
  const x = (step: number): number => (maxStep > minStep ? box.left + ((step - minStep) / (maxStep - minStep)) * plotW : box.left + plotW / 2);
  const y = (v: number): number => (maxValue > minValue ? box.top + (1 - (v - minValue) / (maxValue - minValue)) * plotH : box.top + plotH / 2);
  let path = '';
  let points = 0;
  let penDown = false;
  const nonFinite: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = s.values[i];
    if (v === null) {
      nonFinite.push(x(s.steps[i]));
      penDown = false;
      continue;
    }
    path += `${penDown ? 'L' : 'M'}${round(x(s.steps[i]))} ${round(y(v))} `;
    penDown = true;
    points += 1;
  }
  return {
    path: path.trim(),
    points,
    nonFinite,
    minStep: n > 0 ? minStep : 0,
    maxStep: n > 0 ? maxStep : 0,
    minValue: points > 0 ? minValue : undefined,
    maxValue: points > 0 ? maxValue : undefined,
    last: n > 0 ? s.values[n - 1] : undefined,
  };
}

/** A value for an axis label or the latest value: short, and `NaN` for a value that was not finite. */
export function formatValue(v: number | null | undefined): string {
  if (v === null) {
    return 'NaN';
  }
  if (v === undefined) {
    return '–';
  }
  if (v === 0) {
    return '0';
  }
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) {
    return v.toExponential(2);
  }
  return Number(v.toPrecision(4)).toString();
}

/** What the extension posts to the webview. */
export type ToView =
  | { type: 'reset'; name: string; state: RunState; runId: string }
  | { type: 'records'; runId: string; records: MetricsRecord[] }
  | { type: 'state'; runId: string; state: RunState; message?: string };

/** What the webview posts back. */
export type FromView = { type: 'ready' };

/** Where the current run's chart goes: the webview panel, when there is one. */
export interface ChartPorts {
  /** Posts to the panel (dropped when it is not open). */
  post(message: ToView): void;
  /** Opens the panel (it then posts `ready`, answered with `snapshot`). */
  open(): void;
}

/**
 * The run the chart shows: the one started last. Its records are kept (bounded, see
 * MetricsData) so that a panel opened or reloaded later shows the whole run. The
 * panel opens by itself when the run's first record arrives, once per run.
 */
export class CurrentRunMetrics {
  runId: string | undefined;
  name = '';
  state: RunState = 'running';
  message: string | undefined;
  data = new MetricsData();
  private autoOpened = false;

  constructor(private readonly ports: ChartPorts, private readonly displayName: (uri: string) => string) {}

  started(p: { uri: string; runId: string }): void {
    if (p.runId === this.runId) {
      return;
    }
    this.runId = p.runId;
    this.name = this.displayName(p.uri);
    this.state = 'running';
    this.message = undefined;
    this.data = new MetricsData();
    this.autoOpened = false;
    this.ports.post({ type: 'reset', runId: p.runId, name: this.name, state: this.state });
  }

  metrics(p: RunMetricsParams): void {
    if (p.runId !== this.runId || !Array.isArray(p.records)) {
      return; // another run's (an older one still going): the chart follows the newest
    }
    const before = this.data.records;
    this.data.add(p.records);
    if (this.data.records === before) {
      return;
    }
    this.ports.post({ type: 'records', runId: p.runId, records: p.records });
    if (!this.autoOpened) {
      this.autoOpened = true;
      this.ports.open();
    }
  }

  finished(p: { runId: string; status: string; message?: string }): void {
    if (p.runId !== this.runId) {
      return;
    }
    this.state = (['ok', 'failed', 'stopped', 'timeout'].includes(p.status) ? p.status : 'failed') as RunState;
    this.message = p.message;
    this.ports.post({ type: 'state', runId: p.runId, state: this.state, message: this.message });
  }

  /** Everything the panel needs after it (re)loaded. */
  snapshot(): ToView[] {
    if (this.runId === undefined) {
      return [];
    }
    return [
      { type: 'reset', runId: this.runId, name: this.name, state: 'running' },
      { type: 'records', runId: this.runId, records: this.data.snapshot() },
      { type: 'state', runId: this.runId, state: this.state, message: this.message },
    ];
  }
}
