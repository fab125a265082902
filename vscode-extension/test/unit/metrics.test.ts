import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHART_BOX, chartGeometry, CurrentRunMetrics, formatValue, MAX_POINTS, MAX_SERIES, MetricsData, MetricsRecord, ToView } from '../../src/metrics';

const rec = (step: number, values: Record<string, number | null>): MetricsRecord => ({ step, values });

describe('the chart data', () => {
  it('keeps one series per metric, in the order logged', () => {
    const d = new MetricsData();
    d.add([rec(0, { loss: 2, acc: 0.1 }), rec(10, { loss: 1 }), rec(20, { loss: 0.5, acc: 0.9 })]);
    assert.deepEqual([...d.series.keys()], ['loss', 'acc']);
    assert.deepEqual(d.series.get('loss')?.steps, [0, 10, 20]);
    assert.deepEqual(d.series.get('loss')?.values, [2, 1, 0.5]);
    assert.deepEqual(d.series.get('acc')?.steps, [0, 20]);
    assert.equal(d.records, 3);
  });
  it('takes NaN (sent as null) and anything not a number as a gap, and skips what is not a record', () => {
    const d = new MetricsData();
    d.add([rec(0, { loss: 1 }), rec(1, { loss: null }), rec(2, { loss: 'x' as unknown as number }), rec(3, { loss: 0.5 })]);
    d.add([null as unknown as MetricsRecord, { step: 'a' } as unknown as MetricsRecord, { step: 4 } as unknown as MetricsRecord]);
    assert.deepEqual(d.series.get('loss')?.values, [1, null, null, 0.5]);
    assert.equal(d.records, 4);
  });
  it('stays within its bound of points by thinning, keeping the newest', () => {
    const d = new MetricsData(100);
    const all = Array.from({ length: 1000 }, (_, i) => rec(i, { loss: 1 / (i + 1) }));
    for (let i = 0; i < all.length; i += 7) {
      d.add(all.slice(i, i + 7));
    }
    const s = d.series.get('loss');
    assert.ok(s !== undefined && s.steps.length <= 100 && s.steps.length >= 50, String(s?.steps.length));
    assert.equal(s.steps[s.steps.length - 1], 999);
    assert.equal(s.steps.length + s.thinned, 1000);
    assert.deepEqual(s.steps, [...s.steps].sort((a, b) => a - b));
    assert.ok(s.steps[0] < 50); // the start of the run is still drawn
    s.steps.forEach((step, i) => assert.equal(s.values[i], 1 / (step + 1)));
  });
  it('has the bounds the README gives', () => {
    assert.deepEqual([MAX_POINTS, MAX_SERIES], [2000, 32]);
    const d = new MetricsData();
    d.add(Array.from({ length: 5000 }, (_, i) => rec(i, { loss: i })));
    const n = d.series.get('loss')?.steps.length ?? 0;
    assert.ok(n <= 2000 && n > 1000, String(n));
  });
  it('draws a bounded number of metrics', () => {
    const d = new MetricsData();
    const values = Object.fromEntries(Array.from({ length: MAX_SERIES + 5 }, (_, i) => [`m${i}`, i]));
    d.add([rec(0, values)]);
    assert.equal(d.series.size, MAX_SERIES);
    assert.equal(d.ignoredNames, 5);
  });
  it('gives back a snapshot that rebuilds the same series', () => {
    const d = new MetricsData(10);
    d.add(Array.from({ length: 50 }, (_, i) => rec(i, { loss: i, acc: i % 3 === 0 ? null : -i })));
    const e = new MetricsData(10);
    e.add(d.snapshot());
    for (const name of ['loss', 'acc']) {
      assert.deepEqual(e.series.get(name)?.steps, d.series.get(name)?.steps);
      assert.deepEqual(e.series.get(name)?.values, d.series.get(name)?.values);
    }
  });
});

describe('the chart geometry', () => {
  const box = { width: 110, height: 60, left: 10, right: 0, top: 0, bottom: 10 };
  const series = (steps: number[], values: Array<number | null>) => ({ name: 'loss', steps, values, thinned: 0 });
  it('scales steps to x and values to y (high values at the top)', () => {
    const g = chartGeometry(series([0, 50, 100], [1, 0.5, 0]), box);
    assert.equal(g.path, 'M10 0 L60 25 L110 50');
    assert.equal(g.points, 3);
    assert.deepEqual([g.minStep, g.maxStep, g.minValue, g.maxValue, g.last], [0, 100, 0, 1, 0]);
  });
  it('breaks the curve at NaN and marks where', () => {
    const g = chartGeometry(series([0, 1, 2, 3, 4], [4, 3, null, 1, 0]), box);
    assert.equal(g.path, 'M10 0 L35 12.5 M85 37.5 L110 50');
    assert.equal(g.points, 4);
    assert.deepEqual(g.nonFinite, [60]);
  });
  it('survives a series that is all NaN, a single point, a flat line, or nothing', () => {
    const nan = chartGeometry(series([0, 1], [null, null]), box);
    assert.deepEqual([nan.path, nan.points, nan.minValue, nan.last], ['', 0, undefined, null]);
    assert.equal(chartGeometry(series([5], [2]), box).path, 'M60 25');
    assert.equal(chartGeometry(series([0, 1], [3, 3]), box).path, 'M10 25 L110 25');
    const none = chartGeometry(series([], []), box);
    assert.deepEqual([none.path, none.points, none.last], ['', 0, undefined]);
    for (const g of [nan, none, chartGeometry(series([0, 1e9], [1e-30, 1e30]))]) {
      assert.ok(!/NaN|Infinity/.test(g.path), g.path);
    }
    assert.ok(CHART_BOX.width > CHART_BOX.left + CHART_BOX.right);
  });
  it('formats values short', () => {
    assert.deepEqual([0.31234567, 2, 1234.5678, 1e-6, 123456789, null, undefined, 0].map(formatValue), ['0.3123', '2', '1235', '1.00e-6', '1.23e+8', 'NaN', '–', '0']);
  });
});

describe('the current run of the chart', () => {
  function make() {
    const posted: ToView[] = [];
    let opened = 0;
    const c = new CurrentRunMetrics({ post: (m) => posted.push(m), open: () => opened++ }, (uri) => uri.split('/').pop() ?? uri);
    return { c, posted, opened: () => opened };
  }
  it('resets on a new run, opens the panel at its first record only, and follows its state', () => {
    const { c, posted, opened } = make();
    c.started({ uri: 'file:///w/train.qv', runId: 'run-1' });
    assert.deepEqual(posted.shift(), { type: 'reset', runId: 'run-1', name: 'train.qv', state: 'running' });
    assert.equal(opened(), 0); // a run that logs nothing opens nothing
    c.metrics({ uri: 'file:///w/train.qv', runId: 'run-1', records: [rec(0, { loss: 1 })] });
    c.metrics({ uri: 'file:///w/train.qv', runId: 'run-1', records: [rec(1, { loss: 0.5 })] });
    assert.equal(opened(), 1);
    assert.deepEqual(posted.map((m) => m.type), ['records', 'records']);
    c.finished({ runId: 'run-1', status: 'ok' });
    assert.deepEqual(posted.pop(), { type: 'state', runId: 'run-1', state: 'ok', message: undefined });
    // a reloaded panel gets the whole run
    const snap = c.snapshot();
    assert.deepEqual(snap.map((m) => m.type), ['reset', 'records', 'state']);
    assert.deepEqual((snap[1] as { records: MetricsRecord[] }).records, [rec(0, { loss: 1 }), rec(1, { loss: 0.5 })]);
    // the next run starts from nothing and opens the panel again at its first record
    c.started({ uri: 'file:///w/other.qv', runId: 'run-2' });
    assert.equal(c.data.records, 0);
    c.metrics({ uri: 'file:///w/other.qv', runId: 'run-2', records: [rec(0, { acc: 0.1 })] });
    assert.equal(opened(), 2);
  });
  it('ignores the records and the end of a run that is not the current one', () => {
    const { c, posted } = make();
    c.started({ uri: 'file:///w/a.qv', runId: 'run-1' });
    c.started({ uri: 'file:///w/b.qv', runId: 'run-2' });
    posted.length = 0;
    c.metrics({ uri: 'file:///w/a.qv', runId: 'run-1', records: [rec(0, { loss: 1 })] });
    c.finished({ runId: 'run-1', status: 'failed' });
    assert.deepEqual(posted, []);
    assert.equal(c.state, 'running');
    assert.deepEqual(make().c.snapshot(), []); // no run yet: nothing to show
  });
});
