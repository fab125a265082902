// Restricted Mode never runs an executable inside the workspace, whichever setting
// names it (issue 37, item 1): every form of setting, user and workspace level,
// trusted and untrusted, through resolveServerCommand on a real folder tree (links
// and all), and the path checks of trust.ts on their own.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { resolveServerCommand, ResolveInput, runnerCommand } from '../../src/serverCommand';
import { isInside, workspaceExecution, workspaceFolderHolding } from '../../src/trust';

let root = '';
let ws = '';
let home = '';
let sysBin = '';
let sysPython = '';
let venvPython = '';

function file(p: string, text = '#!/bin/sh\ntouch "$0.ran"\n'): string {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text, { mode: 0o755 });
  return p;
}

function link(target: string, at: string): string {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at);
  return at;
}

before(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-trust-')));
  ws = path.join(root, 'ws');
  home = path.join(root, 'home');
  sysBin = path.join(root, 'usr', 'bin');
  sysPython = file(path.join(sysBin, 'python3'));
  venvPython = file(path.join(ws, '.venv', 'bin', 'python'));
  file(path.join(ws, '.venv', 'bin', 'python3'));
  file(path.join(ws, '.venv', 'bin', 'quiver-lsp'));
  file(path.join(ws, '..venv', 'bin', 'python'));
  file(path.join(ws, 'evil.py'), 'print(1)\n');
  // a link in the user's home that leads into the workspace
  link(venvPython, path.join(home, 'bin', 'py'));
  // a venv whose python is a link out of the workspace (as `python -m venv` makes it)
  link(sysPython, path.join(ws, 'linked-venv', 'bin', 'python'));
  // the workspace opened through a link to it
  link(ws, path.join(root, 'ws-link'));
  // a folder named ..venv beside the workspace, outside it
  file(path.join(root, '..venv', 'bin', 'python'));
  file(path.join(home, 'env', 'bin', 'python'));
});

after(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

function realpath(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

function input(over: Partial<ResolveInput> = {}): ResolveInput {
  return {
    trusted: false,
    command: {},
    pythonPath: {},
    workspaceFolders: [ws],
    platform: 'linux',
    envPath: sysBin,
    homeDir: home,
    isFile: (p) => {
      try {
        return fs.statSync(p).isFile();
      } catch {
        return false;
      }
    },
    realpath,
    ...over,
  };
}

/** The resolution's command line, its Run File interpreter and its notes. */
function resolved(over: Partial<ResolveInput>): { argv: string[]; runner?: string[]; notes: string } {
  const r = resolveServerCommand(input(over));
  assert.ok(r.ok, JSON.stringify(r));
  return { argv: [r.server.command, ...r.server.args], runner: runnerCommand(r.server), notes: r.notes.join('\n') };
}

/** Nothing in argv lies in the workspace (as written or with links resolved). */
function runsNothingOfTheWorkspace(argv: string[] | undefined): void {
  for (const a of argv ?? []) {
    if (a.startsWith('/')) {
      assert.ok(!a.startsWith(ws + '/') && !(realpath(a) ?? '').startsWith(ws + '/'), `${a} lies in the workspace`);
    }
  }
}

describe('Restricted Mode: user-level settings that name something inside the workspace are ignored', () => {
  const cases: Array<[string, Partial<ResolveInput>, RegExp]> = [
    ['quiver.interpreter with ${workspaceFolder}', { interpreter: { globalValue: ['${workspaceFolder}/.venv/bin/python'] } }, /quiver\.interpreter = \["\$\{workspaceFolder\}\/\.venv\/bin\/python"\]/],
    ['quiver.interpreter, relative', { interpreter: { globalValue: ['.venv/bin/python'] } }, /quiver\.interpreter = \["\.venv\/bin\/python"\]/],
    ['quiver.interpreter with ~ through a link into the workspace', { interpreter: { globalValue: ['~/bin/py'] } }, /quiver\.interpreter = \["~\/bin\/py"\]: .*through a link/],
    ['quiver.interpreter: a venv python that links out of the workspace', { interpreter: { globalValue: ['${workspaceFolder}/linked-venv/bin/python'] } }, /quiver\.interpreter/],
    ['quiver.interpreter: a script of the workspace as its argument', { interpreter: { globalValue: [sysPython, 'evil.py'] } }, /its argument evil\.py lies in the workspace folder/],
    ['quiver.interpreter inside a folder named ..venv', { interpreter: { globalValue: ['${workspaceFolder}/..venv/bin/python'] } }, /quiver\.interpreter/],
    ['quiver.path with ${workspaceFolder}', { quiverPath: { globalValue: ['${workspaceFolder}/.venv/bin/quiver-lsp'] } }, /quiver\.path = \["\$\{workspaceFolder\}\/\.venv\/bin\/quiver-lsp"\]/],
    ['quiver.server.pythonPath with ${workspaceFolder}', { pythonPath: { globalValue: '${workspaceFolder}/.venv/bin/python' } }, /quiver\.server\.pythonPath = "\$\{workspaceFolder\}/],
    ['quiver.server.command with ${workspaceFolder}', { command: { globalValue: ['${workspaceFolder}/.venv/bin/python', '-m', 'quiver.server'] } }, /quiver\.server\.command/],
    ['quiver.server.command running a workspace script', { command: { globalValue: ['python3', '${workspaceFolder}/evil.py'] } }, /quiver\.server\.command = .*its argument .*evil\.py lies in the workspace folder/],
  ];
  for (const [name, over, note] of cases) {
    it(name, () => {
      const r = resolved(over);
      assert.deepEqual(r.argv.slice(0, 1), [sysPython]);
      runsNothingOfTheWorkspace(r.argv);
      runsNothingOfTheWorkspace(r.runner);
      assert.match(r.notes, note);
      assert.match(r.notes, /^Restricted Mode: ignoring your user setting .*, and nothing inside the workspace runs until you trust it\.$/m);
    });
  }

  it('the same workspace opened through a link: the real paths are compared', () => {
    const folder = path.join(root, 'ws-link');
    const r = resolved({ workspaceFolders: [folder], interpreter: { globalValue: [venvPython] } });
    assert.equal(r.argv[0], sysPython);
    assert.match(r.notes, /quiver\.interpreter/);
  });

  it('a quiver.path entry inside the workspace is passed over for the next one', () => {
    const lsp = file(path.join(home, 'bin', 'quiver-lsp'));
    try {
      const r = resolved({ quiverPath: { globalValue: ['${workspaceFolder}/.venv/bin/quiver-lsp', '~/bin/quiver-lsp'] } });
      assert.deepEqual(r.argv, [lsp, '--stdio']);
      assert.match(r.notes, /ignoring your user setting quiver\.path = \["\$\{workspaceFolder\}\/\.venv\/bin\/quiver-lsp"\]/);
    } finally {
      fs.rmSync(lsp);
    }
  });

  it("the Python extension's interpreter and CONDA_PREFIX inside a folder named ..venv", () => {
    const r = resolved({ pythonExtension: path.join(ws, '..venv', 'bin', 'python'), condaPrefix: path.join(ws, '..venv') });
    assert.equal(r.argv[0], sysPython);
    assert.match(r.notes, /not running the Python extension's interpreter .*\/ws\/\.\.venv\/bin\/python/);
    assert.match(r.notes, /not running the conda environment .*\/ws\/\.\.venv/);
  });

  it('a python3 on PATH inside the workspace (an activated workspace venv, or `.`) is passed over', () => {
    const r = resolved({ envPath: `${path.join(ws, '.venv', 'bin')}:.:${sysBin}`, importStrategy: { globalValue: 'fromEnvironment' } });
    assert.deepEqual(r.argv, [sysPython, '-P', '-m', 'quiver.server', '--stdio']);
    assert.match(r.notes, /not running .*\/ws\/\.venv\/bin\/python3 found on PATH: .* lies in the workspace folder/);
    assert.match(r.notes, /not running .*\/ws\/\.venv\/bin\/quiver-lsp found on PATH/);
  });

  it('workspace values are ignored as before', () => {
    const r = resolved({ interpreter: { workspaceValue: [venvPython] }, pythonPath: { workspaceFolderValue: venvPython } });
    assert.equal(r.argv[0], sysPython);
    assert.match(r.notes, /ignoring the workspace value of quiver\.interpreter/);
  });
});

describe("Restricted Mode keeps the user's own interpreters outside the workspace", () => {
  it('~ and a folder named ..venv beside the workspace are outside it', () => {
    const mine = path.join(home, 'env', 'bin', 'python');
    assert.equal(resolved({ interpreter: { globalValue: ['~/env/bin/python'] } }).argv[0], mine);
    const beside = path.join(root, '..venv', 'bin', 'python');
    assert.equal(resolved({ pythonExtension: beside }).argv[0], beside);
    assert.equal(resolved({ condaPrefix: path.join(root, '..venv') }).argv[0], beside);
    assert.equal(resolved({ command: { globalValue: [sysPython, '-m', 'quiver.server'] } }).argv[0], sysPython);
  });
});

describe('a trusted workspace uses what its settings name', () => {
  it('user and workspace values inside the workspace', () => {
    for (const scope of ['globalValue', 'workspaceValue'] as const) {
      const r = resolved({ trusted: true, interpreter: { [scope]: ['${workspaceFolder}/.venv/bin/python'] } });
      assert.equal(r.argv[0], venvPython);
      assert.equal(r.notes, '');
    }
    const venv = resolved({ trusted: true });
    assert.equal(venv.argv[0], venvPython);
  });
});

describe('trust.ts', () => {
  it('isInside compares path segments, not string prefixes', () => {
    assert.equal(isInside('/ws/..venv/bin/python', '/ws', 'linux'), true);
    assert.equal(isInside('/ws', '/ws', 'linux'), true);
    assert.equal(isInside('/..venv/bin/python', '/ws', 'linux'), false);
    assert.equal(isInside('/ws2/python', '/ws', 'linux'), false);
    assert.equal(isInside('/a/python', '/ws', 'linux'), false);
    assert.equal(isInside('C:\\ws\\..venv\\python.exe', 'C:\\ws', 'win32'), true);
    assert.equal(isInside('c:\\WS\\x\\python.exe', 'C:\\ws', 'win32'), true);
    assert.equal(isInside('D:\\ws\\python.exe', 'C:\\ws', 'win32'), false);
  });

  it('workspaceFolderHolding resolves relative paths and links', () => {
    const trust = { workspaceFolders: [ws], platform: 'linux' as const, realpath };
    assert.equal(workspaceFolderHolding('.venv/bin/python', trust), ws);
    assert.equal(workspaceFolderHolding(path.join(home, 'bin', 'py'), trust), ws);
    assert.equal(workspaceFolderHolding(sysPython, trust), undefined);
    assert.equal(workspaceFolderHolding('python3', { workspaceFolders: [], platform: 'linux' }), undefined);
  });

  it('workspaceExecution names the executable or the argument', () => {
    const trust = { workspaceFolders: [ws], platform: 'linux' as const, realpath };
    assert.equal(workspaceExecution([venvPython], trust), `${venvPython} lies in the workspace folder ${ws}`);
    assert.equal(workspaceExecution([sysPython, '-m', 'debugpy.adapter'], trust), undefined);
    assert.equal(workspaceExecution([sysPython, 'missing.py'], trust), undefined);
    assert.equal(workspaceExecution([sysPython, 'evil.py'], trust), `its argument evil.py lies in the workspace folder ${ws}`);
  });
});
