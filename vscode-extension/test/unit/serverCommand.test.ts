import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { effectiveSetting, expandPath, formatCommandLine, resolveServerCommand, ResolveInput, SERVER_MODULE_ARGS, serverEnvironment } from '../../src/serverCommand';

/** A fake machine: `files` exist, PATH is /usr/local/bin:/usr/bin. */
function input(over: Partial<ResolveInput> & { files?: string[] } = {}): ResolveInput {
  const files = new Set(over.files ?? ['/usr/bin/python3']);
  return {
    trusted: true,
    command: {},
    pythonPath: {},
    workspaceFolders: ['/ws'],
    platform: 'linux',
    envPath: '/usr/local/bin:/usr/bin',
    homeDir: '/home/u',
    isFile: (p) => files.has(p),
    ...over,
  };
}

describe('resolveServerCommand', () => {
  it("uses the workspace's .venv first", () => {
    const r = resolveServerCommand(input({ files: ['/ws/.venv/bin/python', '/usr/bin/python3'] }));
    assert.ok(r.ok);
    assert.deepEqual(r.server, {
      command: '/ws/.venv/bin/python',
      args: ['-P', '-m', 'quiver.server', '--stdio'],
      source: 'workspace-venv',
      cwd: '/ws',
      python: { argv: ['/ws/.venv/bin/python'], source: 'workspace-venv' },
    });
  });

  it('looks in every workspace folder for a .venv', () => {
    const r = resolveServerCommand(input({ workspaceFolders: ['/a', '/b'], files: ['/b/.venv/bin/python'] }));
    assert.ok(r.ok);
    assert.equal(r.server.command, '/b/.venv/bin/python');
    assert.equal(r.server.cwd, '/b');
  });

  it('falls back to python3 on PATH when the workspace has no .venv, and says where it looked', () => {
    const r = resolveServerCommand(input());
    assert.ok(r.ok);
    assert.equal(r.server.command, '/usr/bin/python3');
    assert.equal(r.server.source, 'path');
    assert.deepEqual(r.venvsLookedFor, ['/ws/.venv/bin/python', '/ws/venv/bin/python']);
  });

  it('takes python when there is no python3', () => {
    const r = resolveServerCommand(input({ files: ['/usr/local/bin/python'] }));
    assert.ok(r.ok);
    assert.equal(r.server.command, '/usr/local/bin/python');
  });

  it('reports a missing Python', () => {
    const r = resolveServerCommand(input({ files: [] }));
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    assert.deepEqual(r.problem, { kind: 'no-python', triedOnPath: ['python3', 'python'] });
  });

  it('prefers quiver.server.pythonPath over the .venv, expanding ~ and ${workspaceFolder}', () => {
    const r1 = resolveServerCommand(input({ pythonPath: { globalValue: '~/py/bin/python' }, files: ['/home/u/py/bin/python', '/ws/.venv/bin/python'] }));
    assert.ok(r1.ok);
    assert.equal(r1.server.command, '/home/u/py/bin/python');
    assert.equal(r1.server.source, 'python-setting');
    const r2 = resolveServerCommand(input({ pythonPath: { workspaceValue: '${workspaceFolder}/env/bin/python' }, files: ['/ws/env/bin/python'] }));
    assert.ok(r2.ok);
    assert.equal(r2.server.command, '/ws/env/bin/python');
  });

  it('resolves a relative pythonPath against the first workspace folder', () => {
    const r = resolveServerCommand(input({ pythonPath: { workspaceValue: 'tools/.venv/bin/python' }, files: ['/ws/tools/.venv/bin/python'] }));
    assert.ok(r.ok);
    assert.equal(r.server.command, '/ws/tools/.venv/bin/python');
  });

  it('does not fall back silently when a configured pythonPath is missing', () => {
    const r = resolveServerCommand(input({ pythonPath: { globalValue: '/nope/python' } }));
    assert.ok(!r.ok);
    assert.deepEqual(r.problem, { kind: 'setting-not-found', setting: 'quiver.server.pythonPath', value: '/nope/python' });
  });

  it('prefers quiver.server.command, finds it on PATH and adds --stdio once', () => {
    const r = resolveServerCommand(input({ command: { globalValue: ['quiver-lsp'] }, files: ['/usr/local/bin/quiver-lsp', '/ws/.venv/bin/python'] }));
    assert.ok(r.ok);
    assert.deepEqual(r.server, { command: '/usr/local/bin/quiver-lsp', args: ['--stdio'], source: 'command-setting', cwd: '/ws' });
    const r2 = resolveServerCommand(input({ command: { globalValue: ['/opt/py', '-m', 'quiver.server', '--stdio'] }, files: ['/opt/py'] }));
    assert.ok(r2.ok);
    assert.deepEqual(r2.server.args, ['-m', 'quiver.server', '--stdio']);
  });

  it('treats empty settings as unset', () => {
    const r = resolveServerCommand(input({ command: { globalValue: [] }, pythonPath: { globalValue: '  ' } }));
    assert.ok(r.ok);
    assert.equal(r.server.source, 'path');
  });

  it('uses the Windows layout of a .venv on win32', () => {
    const r = resolveServerCommand(input({ platform: 'win32', workspaceFolders: ['C:\\ws'], envPath: '', files: ['C:\\ws\\.venv\\Scripts\\python.exe'] }));
    assert.ok(r.ok);
    assert.equal(r.server.command, 'C:\\ws\\.venv\\Scripts\\python.exe');
  });
});

describe('Restricted Mode (untrusted workspace)', () => {
  it("never runs the workspace's .venv, and notes why", () => {
    const r = resolveServerCommand(input({ trusted: false, files: ['/ws/.venv/bin/python', '/usr/bin/python3'] }));
    assert.ok(r.ok);
    assert.equal(r.server.command, '/usr/bin/python3');
    assert.deepEqual(r.venvsLookedFor, []);
    assert.match(r.notes.join('\n'), /Restricted Mode: not running the workspace's \/ws\/\.venv\/bin\/python/);
  });

  it('ignores workspace values of the server settings but keeps user values', () => {
    const files = ['/evil/python', '/home/u/py', '/usr/bin/python3'];
    const ws = resolveServerCommand(
      input({ trusted: false, files, pythonPath: { workspaceValue: '/evil/python' }, command: { workspaceFolderValue: ['/evil/python'] } }),
    );
    assert.ok(ws.ok);
    assert.equal(ws.server.command, '/usr/bin/python3');
    assert.equal(ws.notes.length, 2);
    const user = resolveServerCommand(input({ trusted: false, files, pythonPath: { globalValue: '/home/u/py', workspaceValue: '/evil/python' } }));
    assert.ok(user.ok);
    assert.equal(user.server.command, '/home/u/py');
  });

  it('uses the most specific scope when trusted', () => {
    assert.equal(effectiveSetting({ globalValue: 'g', workspaceValue: 'w', workspaceFolderValue: 'f' }, true, () => true).value, 'f');
    assert.equal(effectiveSetting({ globalValue: 'g', workspaceValue: 'w' }, true, () => true).value, 'w');
    assert.deepEqual(effectiveSetting({ globalValue: 'g', workspaceValue: 'w' }, false, () => true), { value: 'g', ignoredWorkspaceValue: true });
  });
});

describe('helpers', () => {
  it('expands paths', () => {
    assert.equal(expandPath('~', { workspaceFolders: [], homeDir: '/h', platform: 'linux' }), '/h');
    assert.equal(expandPath('python3', { workspaceFolders: ['/ws'], homeDir: '/h', platform: 'linux' }), 'python3');
  });

  it('quotes arguments with spaces when showing a command line', () => {
    assert.equal(formatCommandLine({ command: '/My Env/python', args: ['-m', 'quiver.server'] }), '"/My Env/python" -m quiver.server');
  });
});

describe('the server never imports from the workspace folder', () => {
  it('starts Python with -P, and sets PYTHONSAFEPATH for commands of the user', () => {
    assert.deepEqual(SERVER_MODULE_ARGS.slice(0, 1), ['-P']);
    const env = serverEnvironment({ PATH: '/usr/bin' });
    assert.deepEqual(env, { PATH: '/usr/bin', PYTHONSAFEPATH: '1' });
  });
});
