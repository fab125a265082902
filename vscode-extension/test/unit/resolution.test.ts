// The order in which the server and Run File's interpreter are found:
// quiver.importStrategy, quiver.interpreter, the Python extension, quiver.path,
// quiver-lsp on PATH, .venv/venv, conda, poetry, python3; and Restricted Mode.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeResolution } from '../../src/messages';
import { importStrategy, resolveServerCommand, ResolveInput, runnerCommand } from '../../src/serverCommand';

const BUNDLED = '/ext/bundled/tool/lsp_server.py';

/** A fake machine with the bundled server: `files` exist, PATH is /usr/local/bin:/usr/bin. */
function input(over: Partial<ResolveInput> & { files?: string[] } = {}): ResolveInput {
  const files = new Set([...(over.files ?? ['/usr/bin/python3']), BUNDLED]);
  return {
    trusted: true,
    command: {},
    pythonPath: {},
    bundledScript: BUNDLED,
    workspaceFolders: ['/ws'],
    platform: 'linux',
    envPath: '/usr/local/bin:/usr/bin',
    homeDir: '/home/u',
    isFile: (p) => files.has(p),
    ...over,
  };
}

function ok(r: ReturnType<typeof resolveServerCommand>) {
  assert.ok(r.ok, JSON.stringify(r));
  return r.server;
}

describe('useBundled (the default)', () => {
  it('runs the bundled script with python3 from PATH when nothing else is there', () => {
    const s = ok(resolveServerCommand(input()));
    assert.deepEqual(
      { command: s.command, args: s.args, source: s.source, python: s.python },
      { command: '/usr/bin/python3', args: [BUNDLED, '--stdio'], source: 'bundled', python: { argv: ['/usr/bin/python3'], source: 'path' } },
    );
    // Run File: that interpreter's `quiver run`, never the bundled libraries
    assert.deepEqual(runnerCommand(s), ['/usr/bin/python3', '-P', '-m', 'quiver.cli']);
  });

  it('quiver.interpreter comes first, with its extra arguments before the script', () => {
    const s = ok(
      resolveServerCommand(
        input({ interpreter: { globalValue: ['~/py/bin/python', '-X', 'utf8'] }, pythonExtension: '/pyext/bin/python', files: ['/home/u/py/bin/python', '/pyext/bin/python', '/ws/.venv/bin/python'] }),
      ),
    );
    assert.equal(s.command, '/home/u/py/bin/python');
    assert.deepEqual(s.args, ['-X', 'utf8', BUNDLED, '--stdio']);
    assert.deepEqual(s.python, { argv: ['/home/u/py/bin/python', '-X', 'utf8'], source: 'interpreter-setting' });
    assert.deepEqual(runnerCommand(s), ['/home/u/py/bin/python', '-X', 'utf8', '-P', '-m', 'quiver.cli']);
  });

  it('a quiver.interpreter that does not exist is an error, not a fallback', () => {
    const r = resolveServerCommand(input({ interpreter: { workspaceValue: ['/nope/python'] } }));
    assert.ok(!r.ok);
    assert.deepEqual(r.problem, { kind: 'setting-not-found', setting: 'quiver.interpreter', value: '/nope/python' });
  });

  it("then the Python extension's active interpreter, before the workspace's .venv", () => {
    const s = ok(resolveServerCommand(input({ pythonExtension: '/pyext/bin/python', files: ['/pyext/bin/python', '/ws/.venv/bin/python', '/usr/bin/python3'] })));
    assert.equal(s.command, '/pyext/bin/python');
    assert.equal(s.python?.source, 'python-extension');
  });

  it("without the Python extension (or when its interpreter is gone), the workspace's .venv", () => {
    for (const pythonExtension of [undefined, '/gone/bin/python']) {
      const r = resolveServerCommand(input({ pythonExtension, files: ['/ws/.venv/bin/python', '/usr/bin/python3'] }));
      const s = ok(r);
      assert.equal(s.command, '/ws/.venv/bin/python');
      assert.equal(s.source, 'bundled');
      assert.equal(s.python?.source, 'workspace-venv');
      assert.equal(r.notes.some((n) => n.includes('/gone/bin/python was not found')), pythonExtension !== undefined);
    }
  });

  it('the Python extension changing its selection changes the server at the next resolution', () => {
    const files = ['/envs/a/bin/python', '/envs/b/bin/python'];
    assert.equal(ok(resolveServerCommand(input({ pythonExtension: '/envs/a/bin/python', files }))).command, '/envs/a/bin/python');
    assert.equal(ok(resolveServerCommand(input({ pythonExtension: '/envs/b/bin/python', files }))).command, '/envs/b/bin/python');
  });

  it('venv/ when there is no .venv, then conda (CONDA_PREFIX), then poetry, then python3', () => {
    const files = ['/ws/venv/bin/python', '/conda/envs/x/bin/python', '/poetry/env/bin/python', '/usr/bin/python3'];
    const order: string[] = [];
    let remaining = [...files];
    for (;;) {
      const s = ok(resolveServerCommand(input({ files: remaining, condaPrefix: '/conda/envs/x', poetryEnv: '/poetry/env' })));
      order.push(`${s.python?.source}:${s.command}`);
      remaining = remaining.filter((f) => f !== s.command);
      if (s.python?.source === 'path') {
        break;
      }
    }
    assert.deepEqual(order, [
      'workspace-venv:/ws/venv/bin/python',
      'conda:/conda/envs/x/bin/python',
      'poetry:/poetry/env/bin/python',
      'path:/usr/bin/python3',
    ]);
  });

  it('no Python at all: one problem naming what was tried', () => {
    const r = resolveServerCommand(input({ files: [] }));
    assert.ok(!r.ok);
    assert.deepEqual(r.problem, { kind: 'no-python', triedOnPath: ['python3', 'python'] });
  });

  it('an extension built without bundled/ looks in the environment, and says so', () => {
    const r = resolveServerCommand({ ...input({ files: ['/ws/.venv/bin/python'] }), isFile: (p) => p === '/ws/.venv/bin/python' });
    const s = ok(r);
    assert.deepEqual(s.args, ['-P', '-m', 'quiver.server', '--stdio']);
    assert.equal(s.source, 'workspace-venv');
    assert.match(r.notes.join('\n'), /carries no bundled server/);
  });
});

describe('fromEnvironment and quiver.path', () => {
  const env = { importStrategy: { globalValue: 'fromEnvironment' } };

  it('quiver.path wins whatever the strategy, the first existing entry', () => {
    for (const importStrategy of [{}, env.importStrategy]) {
      const s = ok(resolveServerCommand(input({ importStrategy, quiverPath: { globalValue: ['/nope/quiver-lsp', '~/bin/quiver-lsp'] }, files: ['/home/u/bin/quiver-lsp', '/usr/bin/python3'] })));
      assert.deepEqual([s.command, s.args, s.source], ['/home/u/bin/quiver-lsp', ['--stdio'], 'path-setting']);
      // A python3 on PATH was nobody's choice: quiver-lsp runs programs with its own Python.
      assert.equal(runnerCommand(s), undefined);
    }
    const r = resolveServerCommand(input({ quiverPath: { globalValue: ['/a/quiver-lsp', '/b/quiver-lsp'] } }));
    assert.ok(!r.ok);
    assert.deepEqual(r.problem, { kind: 'setting-not-found', setting: 'quiver.path', value: '/a/quiver-lsp, /b/quiver-lsp' });
  });

  it('quiver-lsp on PATH, with Run File on the selected interpreter', () => {
    const s = ok(resolveServerCommand(input({ ...env, interpreter: { globalValue: ['/venvs/t/bin/python'] }, files: ['/usr/local/bin/quiver-lsp', '/venvs/t/bin/python'] })));
    assert.deepEqual([s.command, s.args, s.source], ['/usr/local/bin/quiver-lsp', ['--stdio'], 'quiver-lsp']);
    assert.deepEqual(runnerCommand(s), ['/venvs/t/bin/python', '-P', '-m', 'quiver.cli']);
  });

  it("then the selected interpreter's -m quiver.server, then the environments", () => {
    const a = ok(resolveServerCommand(input({ ...env, pythonExtension: '/pyext/bin/python', files: ['/pyext/bin/python', '/ws/.venv/bin/python'] })));
    assert.deepEqual([a.command, a.args, a.source], ['/pyext/bin/python', ['-P', '-m', 'quiver.server', '--stdio'], 'python-extension']);
    const b = ok(resolveServerCommand(input({ ...env, condaPrefix: '/conda', files: ['/conda/bin/python', '/usr/bin/python3'] })));
    assert.deepEqual([b.command, b.source], ['/conda/bin/python', 'conda']);
  });

  it('an unknown importStrategy value counts as the default', () => {
    assert.equal(importStrategy({ trusted: true, importStrategy: { globalValue: 'bogus' } }), 'useBundled');
    assert.equal(importStrategy({ trusted: true, importStrategy: { workspaceValue: 'fromEnvironment' } }), 'fromEnvironment');
  });

  it('the deprecated settings still win over the new ones', () => {
    const files = ['/old/python', '/usr/local/bin/quiver-lsp', '/new/python'];
    const s = ok(resolveServerCommand(input({ pythonPath: { globalValue: '/old/python' }, interpreter: { globalValue: ['/new/python'] }, files })));
    assert.deepEqual([s.command, s.source], ['/old/python', 'python-setting']);
    const c = ok(resolveServerCommand(input({ command: { globalValue: ['quiver-lsp'] }, quiverPath: { globalValue: ['/new/python'] }, files })));
    assert.deepEqual([c.command, c.source], ['/usr/local/bin/quiver-lsp', 'command-setting']);
  });
});

describe('Restricted Mode with the new settings', () => {
  it('ignores workspace values of quiver.interpreter, quiver.path and quiver.importStrategy', () => {
    const r = resolveServerCommand(
      input({
        trusted: false,
        interpreter: { workspaceValue: ['/evil/python'] },
        quiverPath: { workspaceFolderValue: ['/evil/quiver-lsp'] },
        importStrategy: { workspaceValue: 'fromEnvironment' },
        files: ['/evil/python', '/evil/quiver-lsp', '/usr/bin/python3'],
      }),
    );
    const s = ok(r);
    assert.deepEqual([s.command, s.source], ['/usr/bin/python3', 'bundled']);
    assert.match(r.notes.join('\n'), /ignoring the workspace value of quiver\.interpreter/);
    assert.match(r.notes.join('\n'), /ignoring the workspace value of quiver\.path/);
  });

  it("never runs a .venv, venv/, or a Python extension interpreter inside the workspace; the user's own are fine", () => {
    const r = resolveServerCommand(
      input({ trusted: false, pythonExtension: '/ws/.venv/bin/python', poetryEnv: '/poetry/env', files: ['/ws/.venv/bin/python', '/ws/venv/bin/python', '/poetry/env/bin/python', '/usr/bin/python3'] }),
    );
    const s = ok(r);
    assert.equal(s.command, '/usr/bin/python3');
    assert.match(r.notes.join('\n'), /not running the Python extension's interpreter \/ws\/\.venv\/bin\/python/);
    assert.match(r.notes.join('\n'), /not running the workspace's \/ws\/venv\/bin\/python/);
    const user = ok(resolveServerCommand(input({ trusted: false, pythonExtension: '/home/u/env/bin/python', interpreter: { globalValue: [] }, files: ['/home/u/env/bin/python'] })));
    assert.equal(user.command, '/home/u/env/bin/python');
  });
});

describe('the log says what was chosen', () => {
  it('names the bundled server and its interpreter', () => {
    const lines = describeResolution(resolveServerCommand(input({ interpreter: { globalValue: ['/py'] }, files: ['/py'] })));
    assert.deepEqual(lines, [`Starting the language server (bundled, with the Python from quiver.interpreter): /py ${BUNDLED} --stdio`]);
  });

  it("names Run File's interpreter when it is not the server's", () => {
    const lines = describeResolution(
      resolveServerCommand(input({ importStrategy: { globalValue: 'fromEnvironment' }, pythonExtension: '/pyext/python', files: ['/usr/local/bin/quiver-lsp', '/pyext/python'] })),
    );
    assert.deepEqual(lines, [
      'Starting the language server (quiver-lsp on PATH): /usr/local/bin/quiver-lsp --stdio',
      "Run File uses /pyext/python (the Python extension's environment).",
    ]);
  });
});
