import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyStartFailure, describeResolution, messageForResolveProblem, messageForStartFailure } from '../../src/messages';
import { ServerCommand } from '../../src/serverCommand';

const venv: ServerCommand = { command: '/ws/.venv/bin/python', args: ['-P', '-m', 'quiver.server', '--stdio'], source: 'workspace-venv', cwd: '/ws' };
const python3: ServerCommand = { command: '/usr/bin/python3', args: ['-P', '-m', 'quiver.server', '--stdio'], source: 'path', cwd: '/ws' };

const TRACEBACK = `Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/ws/server/__main__.py", line 3, in <module>
    from .app import main
  File "/ws/server/app.py", line 7, in <module>
    raise RuntimeError("config file is broken")
RuntimeError: config file is broken
`;

describe('classifyStartFailure', () => {
  it('recognises Quiver not being installed', () => {
    assert.deepEqual(classifyStartFailure({ exitCode: 1, stderr: '/usr/bin/python3: No module named quiver.server\n' }), { kind: 'not-installed', module: 'quiver.server' });
    assert.deepEqual(classifyStartFailure({ exitCode: 1, stderr: "ModuleNotFoundError: No module named 'quiver'\n" }), { kind: 'not-installed', module: 'quiver' });
  });

  it('recognises a quiver package without a runnable server', () => {
    const stderr = "/ws/.venv/bin/python: No module named quiver.server.__main__; 'quiver.server' is a package and cannot be directly executed\n";
    assert.deepEqual(classifyStartFailure({ exitCode: 1, stderr }), { kind: 'not-runnable' });
  });

  it('recognises a missing third-party dependency', () => {
    assert.deepEqual(classifyStartFailure({ exitCode: 1, stderr: "Traceback ...\nModuleNotFoundError: No module named 'pygls'\n" }), { kind: 'missing-dependency', module: 'pygls' });
  });

  it('treats anything else as a crash and keeps the exception line', () => {
    assert.deepEqual(classifyStartFailure({ exitCode: 1, stderr: TRACEBACK }), { kind: 'crashed', lastLine: 'RuntimeError: config file is broken' });
    assert.deepEqual(classifyStartFailure({ exitCode: 0, stderr: '', error: 'Connection got disposed.' }), { kind: 'crashed', lastLine: 'Connection got disposed.' });
  });

  it('recognises a spawn error', () => {
    assert.equal(classifyStartFailure({ stderr: '', spawnError: { code: 'EACCES', message: 'spawn /x EACCES' } }).kind, 'spawn-error');
  });
});

describe('start-failure messages', () => {
  const trusted = { trusted: true, venvsLookedFor: ['/ws/.venv/bin/python'] };

  it('missing Python: says what was looked for and how to install', () => {
    const m = messageForResolveProblem({ kind: 'no-python', triedOnPath: ['python3', 'python'] }, trusted);
    assert.match(m.text, /no \.venv in the workspace and no python3 or python on PATH/);
    assert.match(m.text, /Install Python 3\.11 or newer \(the extension brings its own Quiver language server\), or set quiver\.interpreter/);
    assert.match(m.text, /Quiver: Restart Server/);
  });

  it('a configured path that does not exist names the setting', () => {
    const m = messageForResolveProblem({ kind: 'setting-not-found', setting: 'quiver.server.pythonPath', value: '/nope' }, trusted);
    assert.match(m.text, /quiver\.server\.pythonPath is set to "\/nope", which was not found/);
    assert.ok(m.actions.includes('Open Settings'));
  });

  it('workspace without .venv and python3 without Quiver: suggests creating the .venv', () => {
    const m = messageForStartFailure(python3, { exitCode: 1, stderr: '/usr/bin/python3: No module named quiver.server' }, trusted);
    assert.match(m.text, /^Quiver: no \.venv in this workspace, and \/usr\/bin\/python3 has no Quiver language server/);
    assert.match(m.text, /Create one \(python3 -m venv \.venv/);
  });

  it('in Restricted Mode, explains that the .venv was not used', () => {
    const m = messageForStartFailure(python3, { exitCode: 1, stderr: 'No module named quiver.server' }, { trusted: false, venvsLookedFor: [] });
    assert.match(m.text, /Restricted Mode the workspace's \.venv is not used/);
    assert.match(m.text, /user settings/);
  });

  it("a .venv without Quiver: install into that .venv", () => {
    const m = messageForStartFailure(venv, { exitCode: 1, stderr: "No module named 'quiver'" }, trusted);
    assert.match(m.text, /the workspace's \.venv \(\/ws\/\.venv\/bin\/python\) has no Quiver language server/);
    assert.match(m.text, /\/ws\/\.venv\/bin\/python -m pip install quiver-lang/);
  });

  it('a server that crashes at start: exit code, the error line, where to look', () => {
    const m = messageForStartFailure(venv, { exitCode: 1, stderr: TRACEBACK }, trusted);
    assert.match(m.text, /stopped during startup \(exit code 1\): RuntimeError: config file is broken/);
    assert.match(m.text, /server log/);
    assert.deepEqual(m.actions, ['Show Server Log', 'Restart Server']);
  });

  it('a server that never answers initialize', () => {
    const m = messageForStartFailure(venv, { exitCode: null, signal: 'SIGTERM', stderr: 'loading...\n', timedOutAfterS: 60 }, trusted);
    assert.match(m.text, /did not finish starting within 60 s and was stopped \(its last output: loading\.\.\.\)/);
  });

  it('a server killed by a signal says so', () => {
    const m = messageForStartFailure(venv, { exitCode: null, signal: 'SIGKILL', stderr: '' }, trusted);
    assert.match(m.text, /killed by SIGKILL/);
  });

  it('a command that cannot be executed', () => {
    const m = messageForStartFailure({ ...venv, source: 'command-setting' }, { stderr: '', spawnError: { code: 'EACCES', message: 'spawn /ws/x EACCES' } }, trusted);
    assert.match(m.text, /could not run the command in quiver\.server\.command .*: spawn \/ws\/x EACCES/);
  });

  it('every message is a single line that ends with what to do', () => {
    const msgs = [
      messageForStartFailure(venv, { exitCode: 1, stderr: TRACEBACK }, trusted),
      messageForStartFailure(python3, { exitCode: 1, stderr: 'No module named quiver.server' }, trusted),
      messageForResolveProblem({ kind: 'no-python', triedOnPath: ['python3'] }, trusted),
    ];
    for (const m of msgs) {
      assert.ok(!m.text.includes('\n'), m.text);
      assert.match(m.text, /^Quiver: /);
    }
  });
});

describe('describeResolution', () => {
  it('logs the chosen command and why', () => {
    const lines = describeResolution({ ok: true, server: python3, notes: ['a note'], venvsLookedFor: ['/ws/.venv/bin/python'] });
    assert.deepEqual(lines, ['a note', 'Starting the language server (from PATH (no .venv in the workspace)): /usr/bin/python3 -P -m quiver.server --stdio']);
  });
});
