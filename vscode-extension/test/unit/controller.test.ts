import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ControllerPorts, CrashPolicy, LaunchResult, ServerController } from '../../src/controller';
import { UserMessage } from '../../src/messages';
import { Resolution, ServerCommand } from '../../src/serverCommand';

const server: ServerCommand = { command: '/ws/.venv/bin/python', args: ['-P', '-m', 'quiver.server', '--stdio'], source: 'workspace-venv', cwd: '/ws' };

/** Ports whose behaviour each test sets: what resolve() and launch() answer next. */
function fakePorts(opts: { resolution?: Resolution; launches: LaunchResult[] }) {
  const shown: UserMessage[] = [];
  const logged: string[] = [];
  const launched: ServerCommand[] = [];
  let stops = 0;
  const ports: ControllerPorts & { resolution: Resolution } = {
    resolution: opts.resolution ?? { ok: true, server, notes: [], venvsLookedFor: [] },
    resolve() {
      return this.resolution;
    },
    isTrusted: () => true,
    launch: async (s) => {
      launched.push(s);
      const next = opts.launches.shift();
      assert.ok(next, 'unexpected launch');
      return next;
    },
    stop: async () => {
      stops++;
    },
    showError: (m) => shown.push(m),
    log: (line) => logged.push(line),
  };
  return { ports, shown, logged, launched, stops: () => stops };
}

const CRASH: LaunchResult = { ok: false, failure: { exitCode: 1, stderr: 'Traceback\nValueError: bad\n' } };

describe('ServerController', () => {
  it('starts the server once', async () => {
    const f = fakePorts({ launches: [{ ok: true }] });
    const c = new ServerController(f.ports);
    assert.equal(await c.start(), 'running');
    assert.equal(await c.start(), 'running');
    assert.equal(f.launched.length, 1);
    assert.equal(f.shown.length, 0);
  });

  it('a server that crashes at start gives exactly one message, and no retry', async () => {
    const f = fakePorts({ launches: [CRASH] });
    const c = new ServerController(f.ports);
    assert.equal(await c.start(), 'failed');
    assert.equal(f.shown.length, 1);
    assert.match(f.shown[0].text, /ValueError: bad/);
    assert.equal(f.launched.length, 1);
    assert.ok(f.logged.includes(f.shown[0].text), 'the message is in the log too');
  });

  it('keeps working once the cause is fixed: Restart Server starts it again', async () => {
    const f = fakePorts({ launches: [CRASH, { ok: true }] });
    const c = new ServerController(f.ports);
    const states: string[] = [];
    c.onDidChangeState((s) => states.push(s));
    await c.start();
    assert.equal(await c.restart(), 'running');
    assert.equal(f.shown.length, 1);
    assert.deepEqual(states, ['starting', 'failed', 'stopped', 'starting', 'running']);
  });

  it('a missing Python is reported without launching, then works after the fix', async () => {
    const f = fakePorts({ resolution: { ok: false, problem: { kind: 'no-python', triedOnPath: ['python3'] }, notes: [], venvsLookedFor: [] }, launches: [{ ok: true }] });
    const c = new ServerController(f.ports);
    assert.equal(await c.start(), 'failed');
    assert.equal(f.launched.length, 0);
    assert.equal(f.shown.length, 1);
    assert.match(f.shown[0].text, /no python3 on PATH/);
    f.ports.resolution = { ok: true, server, notes: [], venvsLookedFor: [] };
    assert.equal(await c.restart(), 'running');
    assert.equal(f.shown.length, 1);
  });

  it('a workspace without .venv and python3 without Quiver: one message, fixed by Restart Server', async () => {
    const py3: ServerCommand = { ...server, command: '/usr/bin/python3', source: 'path' };
    const f = fakePorts({
      resolution: { ok: true, server: py3, notes: [], venvsLookedFor: ['/ws/.venv/bin/python'] },
      launches: [{ ok: false, failure: { exitCode: 1, stderr: '/usr/bin/python3: No module named quiver.server' } }, { ok: true }],
    });
    const c = new ServerController(f.ports);
    await c.start();
    assert.equal(f.shown.length, 1);
    assert.match(f.shown[0].text, /no \.venv in this workspace/);
    f.ports.resolution = { ok: true, server, notes: [], venvsLookedFor: ['/ws/.venv/bin/python'] };
    assert.equal(await c.restart(), 'running');
    assert.equal(f.launched[1].command, '/ws/.venv/bin/python');
  });

  it('serializes concurrent restarts', async () => {
    const f = fakePorts({ launches: [{ ok: true }, { ok: true }, { ok: true }] });
    const c = new ServerController(f.ports);
    await Promise.all([c.start(), c.restart(), c.restart()]);
    assert.equal(c.state, 'running');
    assert.equal(f.launched.length, 3);
  });

  it('a launcher that throws still gives one message', async () => {
    const f = fakePorts({ launches: [] });
    f.ports.launch = async () => {
      throw new Error('boom');
    };
    const c = new ServerController(f.ports);
    assert.equal(await c.start(), 'failed');
    assert.equal(f.shown.length, 1);
    assert.match(f.shown[0].text, /boom/);
  });

  it('gives one message when the client gives up on a crashing server', async () => {
    const f = fakePorts({ launches: [{ ok: true }] });
    const c = new ServerController(f.ports);
    await c.start();
    c.gaveUp(5, { exitCode: 1, stderr: 'KeyError: x' });
    c.gaveUp(5, { exitCode: 1, stderr: 'KeyError: x' });
    assert.equal(c.state, 'failed');
    assert.equal(f.shown.length, 1);
    assert.match(f.shown[0].text, /crashed 5 times .*KeyError: x/);
  });
});

describe('CrashPolicy', () => {
  it('never restarts a server that did not come up', () => {
    const p = new CrashPolicy();
    assert.deepEqual(p.closed(), { action: 'stop', gaveUp: false });
  });

  it('restarts a crashed server a few times, then gives up', () => {
    let t = 0;
    const p = new CrashPolicy(4, 180_000, () => t);
    p.markRunning();
    for (let i = 0; i < 4; i++) {
      t += 1000;
      assert.deepEqual(p.closed(), { action: 'restart' });
    }
    t += 1000;
    assert.deepEqual(p.closed(), { action: 'stop', gaveUp: true });
  });

  it('forgets crashes older than the window', () => {
    let t = 0;
    const p = new CrashPolicy(1, 1000, () => t);
    p.markRunning();
    assert.equal(p.closed().action, 'restart');
    t = 5000;
    assert.equal(p.closed().action, 'restart');
    assert.equal(p.recentCrashes, 1);
  });

  it('shuts a connection down after repeated errors', () => {
    const p = new CrashPolicy();
    assert.equal(p.error(1), 'continue');
    assert.equal(p.error(4), 'shutdown');
  });
});
