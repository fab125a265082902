// The Python extension's API is optional: a stub stands in for ms-python.python.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExtensionLike, PythonEnvironmentsApi, PythonExtensionInterpreter } from '../../src/pythonExt';

/** A stub of ms-python.python whose selection can change. */
function stubExtension(opts: { active?: boolean; activate?: () => Promise<unknown>; exports?: unknown } = {}) {
  let selected: { id: string; path: string } | undefined = { id: 'a', path: '/envs/a' };
  const listeners: Array<(e: unknown) => unknown> = [];
  const executables: Record<string, string | undefined> = { '/envs/a': '/envs/a/bin/python', '/envs/b': '/envs/b/bin/python' };
  const environments: PythonEnvironmentsApi = {
    getActiveEnvironmentPath: () => selected,
    resolveEnvironment: async (env) => {
      const p = typeof env === 'string' ? env : env.path;
      const exe = executables[p];
      return { executable: { uri: exe === undefined ? undefined : { fsPath: exe } } };
    },
    onDidChangeActiveEnvironmentPath: (l) => {
      listeners.push(l);
      return { dispose: () => listeners.splice(listeners.indexOf(l), 1) };
    },
  };
  let activations = 0;
  const ext: ExtensionLike = {
    isActive: opts.active ?? true,
    activate: async () => {
      activations += 1;
      await opts.activate?.();
      ext.isActive = true;
    },
    exports: opts.exports ?? { environments },
  };
  return {
    ext,
    select(path: string | undefined) {
      selected = path === undefined ? undefined : { id: path, path };
      for (const l of [...listeners]) {
        l({ id: path, path });
      }
    },
    get activations() {
      return activations;
    },
    listeners,
  };
}

describe('PythonExtensionInterpreter', () => {
  it("absent: no interpreter, no subscription, nothing logged", async () => {
    const logs: string[] = [];
    const p = new PythonExtensionInterpreter(() => undefined, (l) => logs.push(l));
    assert.equal(await p.interpreter(), undefined);
    assert.equal(await p.onDidChange(() => undefined), undefined);
    assert.deepEqual(logs, []);
  });

  it("present: activates it once and returns the active environment's executable", async () => {
    const stub = stubExtension({ active: false });
    const p = new PythonExtensionInterpreter(() => stub.ext, () => undefined);
    assert.equal(await p.interpreter(), '/envs/a/bin/python');
    assert.equal(await p.interpreter(), '/envs/a/bin/python');
    assert.equal(stub.activations, 1);
  });

  it('changing: the listener fires, and the next read gives the new interpreter', async () => {
    const stub = stubExtension();
    const p = new PythonExtensionInterpreter(() => stub.ext, () => undefined);
    let changes = 0;
    const sub = await p.onDidChange(() => (changes += 1));
    assert.ok(sub !== undefined);
    assert.equal(await p.onDidChange(() => (changes += 100)), undefined, 'subscribes once');
    stub.select('/envs/b');
    assert.equal(changes, 1);
    assert.equal(await p.interpreter(), '/envs/b/bin/python');
    sub.dispose();
    stub.select('/envs/a');
    assert.equal(changes, 1);
  });

  it('an environment without an interpreter, or none selected: undefined', async () => {
    const stub = stubExtension();
    const logs: string[] = [];
    const p = new PythonExtensionInterpreter(() => stub.ext, (l) => logs.push(l));
    stub.select('/envs/no-python');
    assert.equal(await p.interpreter(), undefined);
    assert.match(logs.join('\n'), /\/envs\/no-python has no interpreter/);
    stub.select(undefined);
    assert.equal(await p.interpreter(), undefined);
  });

  it('an API Quiver does not know, a failed or slow activation: undefined, with a log line', async () => {
    const logs: string[] = [];
    const unknown = stubExtension({ exports: { settings: {} } });
    assert.equal(await new PythonExtensionInterpreter(() => unknown.ext, (l) => logs.push(l)).interpreter(), undefined);
    const failing = stubExtension({ active: false, activate: async () => Promise.reject(new Error('boom')) });
    assert.equal(await new PythonExtensionInterpreter(() => failing.ext, (l) => logs.push(l)).interpreter(), undefined);
    const slow = stubExtension({ active: false, activate: () => new Promise((r) => setTimeout(r, 200)) });
    assert.equal(await new PythonExtensionInterpreter(() => slow.ext, (l) => logs.push(l), 20).interpreter(), undefined);
    assert.equal(logs.length, 3);
    assert.match(logs[0], /no environments API/);
    assert.match(logs[1], /failed to activate: Error: boom/);
    assert.match(logs[2], /did not activate within 0.02 s/);
  });

  it('an API that throws is survived', async () => {
    const stub = stubExtension();
    (stub.ext.exports as { environments: PythonEnvironmentsApi }).environments.getActiveEnvironmentPath = () => {
      throw new Error('not ready');
    };
    const logs: string[] = [];
    assert.equal(await new PythonExtensionInterpreter(() => stub.ext, (l) => logs.push(l)).interpreter(), undefined);
    assert.match(logs[0], /not ready/);
  });
});
