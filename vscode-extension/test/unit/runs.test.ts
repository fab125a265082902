import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayName, formatElapsed, formatFinished, RunLog } from '../../src/runs';

const URI = 'file:///work/examples/my%20mlp.qv';

function makeLog(clear = true) {
  let text = '';
  let clears = 0;
  let reveals = 0;
  let t = 1000;
  const log = new RunLog(
    {
      append: (s) => (text += s),
      clear: () => {
        text = '';
        clears++;
      },
      reveal: () => reveals++,
    },
    { clearOnStart: () => clear },
    () => t,
  );
  return { log, text: () => text, clears: () => clears, reveals: () => reveals, advance: (ms: number) => (t += ms) };
}

describe('run output formatting', () => {
  it('names files by their decoded base name', () => {
    assert.equal(displayName(URI), 'my mlp.qv');
    assert.equal(displayName('/tmp/a.qv'), 'a.qv');
  });

  it('formats elapsed times', () => {
    assert.equal(formatElapsed(4230), '4.2 s');
    assert.equal(formatElapsed(125_000), '2 min 5 s');
  });

  it('formats each way a run ends', () => {
    assert.equal(formatFinished('a.qv', { status: 'ok', exitCode: 0 }, 1500), '✓ a.qv finished in 1.5 s\n');
    assert.equal(formatFinished('a.qv', { status: 'failed', exitCode: 1, message: 'shape mismatch at a.qv:3' }, 500), '✗ a.qv failed after 0.5 s (exit code 1): shape mismatch at a.qv:3\n');
    assert.equal(formatFinished('a.qv', { status: 'stopped', exitCode: null }, 2000), '■ a.qv stopped after 2.0 s\n');
    assert.equal(formatFinished('a.qv', { status: 'timeout', exitCode: null, message: 'no output for 60 s' }, undefined), '✗ a.qv timed out: no output for 60 s\n');
  });

  it('leaves out a server message that only repeats the status or exit code', () => {
    assert.equal(formatFinished('a.qv', { status: 'stopped', exitCode: null, message: 'stopped' }, 3100), '■ a.qv stopped after 3.1 s\n');
    assert.equal(formatFinished('a.qv', { status: 'failed', exitCode: 1, message: 'exited with code 1' }, 500), '✗ a.qv failed after 0.5 s (exit code 1)\n');
    assert.equal(formatFinished('a.qv', { status: 'failed', exitCode: 1, message: 'exited with code 2' }, 500), '✗ a.qv failed after 0.5 s (exit code 1): exited with code 2\n');
  });
});

describe('RunLog', () => {
  it('streams a run: header, chunks as they come, footer on its own line', () => {
    const f = makeLog();
    f.log.started({ uri: URI, runId: 'r1', command: 'python -m quiver run mlp.qv' });
    f.log.output({ uri: URI, runId: 'r1', stream: 'stdout', text: 'step 0 lo' });
    f.log.output({ uri: URI, runId: 'r1', stream: 'stdout', text: 'ss 2.30\nstep 10 loss 1.9' });
    f.advance(3200);
    f.log.finished({ uri: URI, runId: 'r1', exitCode: 0, status: 'ok' });
    assert.equal(f.text(), '▶ Running my mlp.qv\n  $ python -m quiver run mlp.qv\nstep 0 loss 2.30\nstep 10 loss 1.9\n✓ my mlp.qv finished in 3.2 s\n');
    assert.equal(f.reveals(), 1);
    assert.deepEqual(f.log.active, []);
  });

  it('shows stderr in the same stream', () => {
    const f = makeLog();
    f.log.started({ uri: URI, runId: 'r1', command: 'c' });
    f.log.output({ uri: URI, runId: 'r1', stream: 'stderr', text: 'Traceback...\n' });
    f.log.finished({ uri: URI, runId: 'r1', exitCode: 1, status: 'failed', message: 'RuntimeError' });
    assert.match(f.text(), /Traceback\.\.\.\n✗ my mlp\.qv failed after 0\.0 s \(exit code 1\): RuntimeError\n$/);
  });

  it('clears the channel when a run starts and none is running, if configured', () => {
    const f = makeLog(true);
    f.log.note('old');
    f.log.started({ uri: URI, runId: 'r1', command: 'c' });
    assert.equal(f.clears(), 1);
    assert.ok(!f.text().includes('old'));
    const g = makeLog(false);
    g.log.note('old');
    g.log.started({ uri: URI, runId: 'r1', command: 'c' });
    assert.equal(g.clears(), 0);
    assert.ok(g.text().startsWith('old\n'));
  });

  it('labels interleaved output of two runs', () => {
    const f = makeLog();
    f.log.started({ uri: 'file:///a.qv', runId: 'a', command: 'ca' });
    f.log.started({ uri: 'file:///b.qv', runId: 'b', command: 'cb' });
    assert.equal(f.clears(), 1);
    f.log.output({ uri: 'file:///a.qv', runId: 'a', stream: 'stdout', text: 'from a\n' });
    f.log.output({ uri: 'file:///a.qv', runId: 'a', stream: 'stdout', text: 'more a\n' });
    f.log.output({ uri: 'file:///b.qv', runId: 'b', stream: 'stdout', text: 'from b\n' });
    assert.match(f.text(), /── a\.qv ──\nfrom a\nmore a\n── b\.qv ──\nfrom b\n$/);
  });

  it('tracks active runs whichever comes first, the reply or runStarted, and picks the one to stop', () => {
    const f = makeLog();
    const changes: number[] = [];
    f.log.onDidChange(() => changes.push(f.log.active.length));
    f.log.requested('file:///a.qv', 'a');
    f.log.started({ uri: 'file:///a.qv', runId: 'a', command: 'c' });
    f.log.started({ uri: 'file:///b.qv', runId: 'b', command: 'c' });
    f.log.requested('file:///b.qv', 'b');
    assert.equal(f.log.active.length, 2);
    assert.equal(f.log.runToStop('file:///a.qv')?.runId, 'a');
    assert.equal(f.log.runToStop('file:///other.qv')?.runId, 'b');
    f.log.finished({ uri: 'file:///a.qv', runId: 'a', exitCode: 0, status: 'ok' });
    f.log.finished({ uri: 'file:///b.qv', runId: 'b', exitCode: null, status: 'stopped' });
    assert.equal(f.log.runToStop(undefined), undefined);
    assert.equal(changes[changes.length - 1], 0);
  });

  it('does not revive a run whose reply arrives after it finished', () => {
    const f = makeLog();
    f.log.started({ uri: URI, runId: 'fast', command: 'c' });
    f.log.finished({ uri: URI, runId: 'fast', exitCode: 0, status: 'ok' });
    f.log.requested(URI, 'fast');
    assert.deepEqual(f.log.active, []);
  });

  it('ends the runs of a server that went away, once', () => {
    const f = makeLog();
    f.log.started({ uri: URI, runId: 'r1', command: 'c' });
    f.log.output({ uri: URI, runId: 'r1', stream: 'stdout', text: 'step 0' });
    f.log.serverStopped();
    f.log.serverStopped();
    assert.deepEqual(f.log.active, []);
    assert.match(f.text(), /step 0\n■ my mlp\.qv: the language server stopped, so the end of this run was not reported\n$/);
    f.log.requested(URI, 'r1');
    assert.deepEqual(f.log.active, []);
  });
});
