// Which command starts the language server. Pure logic: everything it needs from
// VS Code, the file system and the environment comes in through ResolveInput, so
// the unit tests can drive every case.

import * as path from 'path';
import { workspaceExecution, workspaceFolderHolding } from './trust';

/** The scopes of one setting, as `WorkspaceConfiguration.inspect()` returns them. */
export interface SettingScopes<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export type ImportStrategy = 'useBundled' | 'fromEnvironment';

export interface ResolveInput {
  /** Whether the workspace is trusted (`vscode.workspace.isTrusted`). */
  trusted: boolean;
  /** `quiver.server.command` (deprecated): a full command line, argv style. */
  command: SettingScopes<string[]>;
  /** `quiver.server.pythonPath` (deprecated): the interpreter to run `-m quiver.server` with. */
  pythonPath: SettingScopes<string>;
  /** `quiver.importStrategy`: `useBundled` (the default) or `fromEnvironment`. */
  importStrategy?: SettingScopes<string>;
  /** `quiver.interpreter`: the Python (and its leading arguments) for the server and for runs. */
  interpreter?: SettingScopes<string[]>;
  /** `quiver.path`: `quiver-lsp` executables, the first that exists is used. */
  quiverPath?: SettingScopes<string[]>;
  /** The Python extension's active interpreter (an executable), when that extension is there. */
  pythonExtension?: string;
  /** The CONDA_PREFIX environment variable (an activated conda environment). */
  condaPrefix?: string;
  /** `poetry env info -p` of the first folder: found by the caller, only in a trusted workspace. */
  poetryEnv?: string;
  /** The bundled server's entry script (bundled/tool/lsp_server.py), when the extension carries it. */
  bundledScript?: string;
  /** File-system paths of the workspace folders, first one first. */
  workspaceFolders: string[];
  platform: NodeJS.Platform;
  /** The PATH environment variable. */
  envPath: string;
  homeDir: string;
  /** Whether `p` is an existing file (executability is left to the spawn). */
  isFile(p: string): boolean;
  /**
   * The real path of `p` (links resolved), undefined when nothing is there; for
   * Restricted Mode's check that nothing inside the workspace runs (trust.ts).
   * Without it, paths count as written.
   */
  realpath?(p: string): string | undefined;
}

/** Where the Python for the server and for Run File came from. */
export type InterpreterSource = 'interpreter-setting' | 'python-extension' | 'workspace-venv' | 'conda' | 'poetry' | 'path';

export type CommandSource = 'command-setting' | 'python-setting' | 'path-setting' | 'quiver-lsp' | 'bundled' | InterpreterSource;

export interface Interpreter {
  /** The executable and its leading arguments (`quiver.interpreter` may carry some). */
  argv: string[];
  source: InterpreterSource;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where the command came from; the start-failure messages depend on it. */
  source: CommandSource;
  /** The workspace folder to start in, if any. */
  cwd?: string;
  /**
   * The Python that Run File uses (`quiver run` with it, never the bundled libraries),
   * when known; otherwise the server runs programs with its own interpreter.
   */
  python?: Interpreter;
}

export type Resolution =
  | { ok: true; server: ServerCommand; notes: string[]; venvsLookedFor: string[] }
  | { ok: false; problem: ResolveProblem; notes: string[]; venvsLookedFor: string[] };

export type SettingName = 'quiver.server.command' | 'quiver.server.pythonPath' | 'quiver.interpreter' | 'quiver.path';

export type ResolveProblem =
  | { kind: 'setting-not-found'; setting: SettingName; value: string }
  | { kind: 'no-python'; triedOnPath: string[] };

/**
 * `-P`: Python does not put the working folder (the workspace, which is untrusted) first on
 * `sys.path`, where a `lark.py` or `pygls/` of the workspace would replace the real module.
 */
export const SERVER_MODULE_ARGS = ['-P', '-m', 'quiver.server', '--stdio'];

/**
 * The server's environment: the editor's, with PYTHONSAFEPATH set, which is `-P` for a Python
 * started by a command of the user's own (`quiver-lsp`, a wrapper script) and for what the
 * server starts in turn.
 */
export function serverEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, PYTHONSAFEPATH: '1' };
}

/**
 * The value of a setting that may be used. In a trusted workspace the most specific
 * scope wins, as in `getConfiguration().get()`. In Restricted Mode only the user's
 * own (global) value counts: a workspace must not choose what gets executed.
 */
export function effectiveSetting<T>(scopes: SettingScopes<T>, trusted: boolean, isSet: (v: T) => boolean): {
  value?: T;
  ignoredWorkspaceValue: boolean;
} {
  const workspaceValue = [scopes.workspaceFolderValue, scopes.workspaceValue].find(
    (v): v is T => v !== undefined && isSet(v),
  );
  const globalValue = scopes.globalValue !== undefined && isSet(scopes.globalValue) ? scopes.globalValue : undefined;
  if (trusted) {
    return { value: workspaceValue ?? globalValue, ignoredWorkspaceValue: false };
  }
  return { value: globalValue, ignoredWorkspaceValue: workspaceValue !== undefined };
}

/** Expands `~` and `${workspaceFolder}`; a relative path is taken from the first workspace folder. */
export function expandPath(p: string, input: Pick<ResolveInput, 'workspaceFolders' | 'homeDir' | 'platform'>): string {
  const folder = input.workspaceFolders[0];
  let out = p.trim();
  if (folder !== undefined) {
    out = out.split('${workspaceFolder}').join(folder);
  }
  if (out === '~' || out.startsWith('~/')) {
    out = input.homeDir + out.slice(1);
  }
  const pathApi = input.platform === 'win32' ? path.win32 : path.posix;
  if (looksLikePath(out, input.platform) && !pathApi.isAbsolute(out) && folder !== undefined) {
    out = pathApi.join(folder, out);
  }
  return out;
}

function looksLikePath(p: string, platform: NodeJS.Platform): boolean {
  return p.includes('/') || (platform === 'win32' && p.includes('\\'));
}

/**
 * Finds a bare command name on PATH; a name with a slash is checked as a file.
 * `accept` may pass over a candidate on PATH (one inside an untrusted workspace).
 */
export function findExecutable(
  name: string,
  input: Pick<ResolveInput, 'envPath' | 'platform' | 'isFile'>,
  accept: (p: string) => boolean = () => true,
): string | undefined {
  if (looksLikePath(name, input.platform)) {
    return input.isFile(name) ? name : undefined;
  }
  const sep = input.platform === 'win32' ? ';' : ':';
  const exts = input.platform === 'win32' ? ['.exe', '.cmd', '.bat', ''] : [''];
  const pathApi = input.platform === 'win32' ? path.win32 : path.posix;
  for (const dir of input.envPath.split(sep)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = pathApi.join(dir, name + ext);
      if (input.isFile(candidate) && accept(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The Python of an environment folder (a venv, a conda prefix, a poetry env). */
export function envPython(env: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? path.win32.join(env, 'Scripts', 'python.exe') : path.posix.join(env, 'bin', 'python');
}

export function venvPython(folder: string, platform: NodeJS.Platform): string {
  return envPython(platform === 'win32' ? path.win32.join(folder, '.venv') : path.posix.join(folder, '.venv'), platform);
}

/** The environment folders looked for in each workspace folder, in this order. */
export const WORKSPACE_ENVS = ['.venv', 'venv'];

/** The default of `quiver.installSpec`: what "Install quiver-lang[torch]" installs. */
export const DEFAULT_INSTALL_SPEC = 'quiver-lang[torch]';

/**
 * Restricted Mode: why running `argv` would run something inside the workspace
 * (trust.ts), else undefined. Always undefined in a trusted workspace.
 */
function restrictedRefusal(input: ResolveInput, argv: string[]): string | undefined {
  return input.trusted ? undefined : workspaceExecution(argv, input, input.workspaceFolders[0]);
}

/** The log line for a setting Restricted Mode does not use, naming it and why. */
function ignoredSetting(setting: SettingName, value: string | string[], why: string): string {
  return `Restricted Mode: ignoring your user setting ${setting} = ${JSON.stringify(value)}: ${why}, and nothing inside the workspace runs until you trust it.`;
}

/**
 * PATH lookups in Restricted Mode pass over executables inside the workspace
 * (a PATH with `.` or an activated workspace venv), noting each.
 */
function acceptOnPath(input: ResolveInput, notes: string[]): (p: string) => boolean {
  return (p) => {
    const why = restrictedRefusal(input, [p]);
    if (why !== undefined) {
      notes.push(`Restricted Mode: not running ${p} found on PATH: ${why}.`);
    }
    return why === undefined;
  };
}

const isSetString = (v: string): boolean => typeof v === 'string' && v.trim() !== '';
const isSetArray = (v: string[]): boolean => Array.isArray(v) && v.some((x) => typeof x === 'string' && x.trim() !== '');

type Picked = { ok: true; interpreter?: Interpreter; cwd?: string } | { ok: false; problem: ResolveProblem };

/**
 * The selected interpreter, as Microsoft's Python tool extensions pick it, then
 * the environments a Python user keeps next to the code:
 * 1. `quiver.interpreter`, 2. the Python extension's active environment,
 * 3. each folder's `.venv/`, then `venv/` (trusted workspaces only), 4. the
 * activated conda environment (CONDA_PREFIX), 5. the folder's poetry environment
 * (trusted only), 6. `python3` (then `python`) on PATH.
 */
export function selectInterpreter(input: ResolveInput, notes: string[], venvsLookedFor: string[]): Picked {
  const setting = effectiveSetting(input.interpreter ?? {}, input.trusted, isSetArray);
  if (setting.ignoredWorkspaceValue) {
    notes.push('Restricted Mode: ignoring the workspace value of quiver.interpreter.');
  }
  if (setting.value !== undefined && !refuseSetting(input, 'quiver.interpreter', setting.value, notes)) {
    const [exe, ...rest] = setting.value.filter((x) => x.trim() !== '');
    const found = findExecutable(expandPath(exe, input), input, acceptOnPath(input, notes));
    if (found === undefined) {
      return { ok: false, problem: { kind: 'setting-not-found', setting: 'quiver.interpreter', value: exe } };
    }
    return { ok: true, interpreter: { argv: [found, ...rest], source: 'interpreter-setting' } };
  }
  const inWorkspace = (p: string): boolean => !input.trusted && workspaceFolderHolding(p, input) !== undefined;
  if (input.pythonExtension !== undefined && input.pythonExtension !== '') {
    const p = input.pythonExtension;
    if (inWorkspace(p)) {
      notes.push(`Restricted Mode: not running the Python extension's interpreter ${p}, which lies in the workspace.`);
    } else if (input.isFile(p)) {
      return { ok: true, interpreter: { argv: [p], source: 'python-extension' } };
    } else {
      notes.push(`The Python extension's interpreter ${p} was not found.`);
    }
  }
  const pathApi = input.platform === 'win32' ? path.win32 : path.posix;
  for (const folder of input.workspaceFolders) {
    for (const name of WORKSPACE_ENVS) {
      const python = envPython(pathApi.join(folder, name), input.platform);
      if (!input.trusted) {
        if (input.isFile(python)) {
          notes.push(`Restricted Mode: not running the workspace's ${python}; trust the workspace to use it.`);
        }
        continue;
      }
      venvsLookedFor.push(python);
      if (input.isFile(python)) {
        return { ok: true, interpreter: { argv: [python], source: 'workspace-venv' }, cwd: folder };
      }
    }
  }
  if (input.condaPrefix) {
    const python = input.platform === 'win32' ? path.win32.join(input.condaPrefix, 'python.exe') : envPython(input.condaPrefix, input.platform);
    if (inWorkspace(python)) {
      notes.push(`Restricted Mode: not running the conda environment ${input.condaPrefix}, which lies in the workspace.`);
    } else if (input.isFile(python)) {
      return { ok: true, interpreter: { argv: [python], source: 'conda' } };
    }
  }
  if (input.trusted && input.poetryEnv) {
    const python = envPython(input.poetryEnv, input.platform);
    if (input.isFile(python)) {
      return { ok: true, interpreter: { argv: [python], source: 'poetry' } };
    }
  }
  for (const name of pythonNames(input.platform)) {
    const found = findExecutable(name, input, acceptOnPath(input, notes));
    if (found !== undefined) {
      return { ok: true, interpreter: { argv: [found], source: 'path' } };
    }
  }
  return { ok: true };
}

/**
 * Restricted Mode: whether a (user-level) setting that names an executable must
 * be ignored because what it runs lies inside the workspace: `${workspaceFolder}`,
 * `~` and relative paths are resolved first, then the executable found on PATH
 * (for a bare name) and the arguments are checked with their links resolved.
 * Notes why when it must.
 */
function refuseSetting(input: ResolveInput, setting: SettingName, value: string | string[], notes: string[]): boolean {
  if (input.trusted) {
    return false;
  }
  const words = (Array.isArray(value) ? value : [value]).filter((x) => typeof x === 'string' && x.trim() !== '');
  if (words.length === 0) {
    return false;
  }
  const [exe, ...rest] = words;
  const expanded = expandPath(exe, input);
  // a bare name runs what PATH finds, where the entries inside the workspace are passed over;
  // found nowhere else, it runs nothing (the lookup after this says the setting names nothing)
  const program = looksLikePath(expanded, input.platform)
    ? expanded
    : findExecutable(expanded, input, (p) => restrictedRefusal(input, [p]) === undefined);
  if (program === undefined) {
    return false;
  }
  const refusal = restrictedRefusal(input, [program, ...rest.map((a) => expandArgument(a, input))]);
  if (refusal === undefined) {
    return false;
  }
  notes.push(ignoredSetting(setting, value, refusal));
  return true;
}

/** `${workspaceFolder}` and `~` in an argument, as expandPath does for the executable. */
function expandArgument(arg: string, input: Pick<ResolveInput, 'workspaceFolders' | 'homeDir' | 'platform'>): string {
  return looksLikePath(arg, input.platform) || arg.startsWith('~') || arg.includes('${') ? expandPath(arg, input) : arg;
}

function pythonNames(platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? ['python', 'python3'] : ['python3', 'python'];
}

/** `quiver.importStrategy`, `useBundled` unless set to `fromEnvironment`. */
export function importStrategy(input: Pick<ResolveInput, 'importStrategy' | 'trusted'>): ImportStrategy {
  const v = effectiveSetting(input.importStrategy ?? {}, input.trusted, (x) => x === 'useBundled' || x === 'fromEnvironment').value;
  return v === 'fromEnvironment' ? 'fromEnvironment' : 'useBundled';
}

/**
 * Picks the server command, in this order:
 * 1. the deprecated `quiver.server.command`, then `quiver.server.pythonPath` (as before);
 * 2. `quiver.path` (a `quiver-lsp` executable, as ruff's `ruff.path`);
 * 3. `useBundled` (the default, when the extension carries the bundled server):
 *    the selected interpreter (see selectInterpreter) runs bundled/tool/lsp_server.py;
 * 4. `fromEnvironment`: `quiver-lsp` on PATH, else `<interpreter> -P -m quiver.server`.
 * A setting that names something missing is an error, not a reason to fall back:
 * the user asked for it.
 */
export function resolveServerCommand(input: ResolveInput): Resolution {
  const notes: string[] = [];
  const venvsLookedFor: string[] = [];
  const cwd = input.workspaceFolders[0];
  const fail = (problem: ResolveProblem): Resolution => ({ ok: false, problem, notes, venvsLookedFor });
  const succeed = (server: ServerCommand): Resolution => ({ ok: true, server, notes, venvsLookedFor });

  const command = effectiveSetting(input.command, input.trusted, isSetArray);
  if (command.ignoredWorkspaceValue) {
    notes.push('Restricted Mode: ignoring the workspace value of quiver.server.command.');
  }
  const pythonPath = effectiveSetting(input.pythonPath, input.trusted, isSetString);
  if (pythonPath.ignoredWorkspaceValue) {
    notes.push('Restricted Mode: ignoring the workspace value of quiver.server.pythonPath.');
  }

  if (command.value !== undefined && !refuseSetting(input, 'quiver.server.command', command.value, notes)) {
    const [exe, ...rest] = command.value;
    const found = findExecutable(expandPath(exe, input), input, acceptOnPath(input, notes));
    if (found === undefined) {
      return fail({ kind: 'setting-not-found', setting: 'quiver.server.command', value: exe });
    }
    const folder = input.workspaceFolders[0];
    const args = rest.map((a) => (folder === undefined ? a : a.split('${workspaceFolder}').join(folder)));
    if (!args.includes('--stdio')) {
      args.push('--stdio');
    }
    return succeed({ command: found, args, source: 'command-setting', cwd });
  }

  if (pythonPath.value !== undefined && !refuseSetting(input, 'quiver.server.pythonPath', pythonPath.value, notes)) {
    const found = findExecutable(expandPath(pythonPath.value, input), input, acceptOnPath(input, notes));
    if (found === undefined) {
      return fail({ kind: 'setting-not-found', setting: 'quiver.server.pythonPath', value: pythonPath.value });
    }
    return succeed({ command: found, args: [...SERVER_MODULE_ARGS], source: 'python-setting', cwd });
  }

  const picked = selectInterpreter(input, notes, venvsLookedFor);
  if (!picked.ok) {
    return fail(picked.problem);
  }
  const interpreter = picked.interpreter;
  // A python3 found on PATH was nobody's choice: a quiver-lsp then runs programs with its own Python.
  const chosen = interpreter?.source === 'path' ? undefined : interpreter;

  const quiverPath = effectiveSetting(input.quiverPath ?? {}, input.trusted, isSetArray);
  if (quiverPath.ignoredWorkspaceValue) {
    notes.push('Restricted Mode: ignoring the workspace value of quiver.path.');
  }
  // Restricted Mode passes over the entries inside the workspace; with none left, the setting is ignored.
  const quiverPaths = (quiverPath.value ?? []).filter((x) => x.trim() !== '' && !refuseSetting(input, 'quiver.path', [x], notes));
  if (quiverPaths.length > 0) {
    for (const entry of quiverPaths) {
      const found = findExecutable(expandPath(entry, input), input, acceptOnPath(input, notes));
      if (found !== undefined) {
        return succeed({ command: found, args: ['--stdio'], source: 'path-setting', cwd, python: chosen });
      }
    }
    return fail({ kind: 'setting-not-found', setting: 'quiver.path', value: quiverPaths.join(', ') });
  }

  if (importStrategy(input) === 'useBundled') {
    const bundledInWorkspace = input.bundledScript !== undefined && restrictedRefusal(input, [input.bundledScript]) !== undefined;
    if (bundledInWorkspace) {
      notes.push(`Restricted Mode: not running the bundled server ${input.bundledScript}, which lies in the workspace.`);
    } else if (input.bundledScript !== undefined && input.isFile(input.bundledScript)) {
      if (interpreter === undefined) {
        return fail({ kind: 'no-python', triedOnPath: pythonNames(input.platform) });
      }
      const [exe, ...lead] = interpreter.argv;
      return succeed({ command: exe, args: [...lead, input.bundledScript, '--stdio'], source: 'bundled', cwd: picked.cwd ?? cwd, python: interpreter });
    }
    if (input.bundledScript !== undefined && !bundledInWorkspace) {
      notes.push(`This build of the extension carries no bundled server (${input.bundledScript}); looking for Quiver in the environment.`);
    }
  }

  const lsp = findExecutable('quiver-lsp', input, acceptOnPath(input, notes));
  if (lsp !== undefined) {
    return succeed({ command: lsp, args: ['--stdio'], source: 'quiver-lsp', cwd, python: chosen });
  }
  if (interpreter === undefined) {
    return fail({ kind: 'no-python', triedOnPath: pythonNames(input.platform) });
  }
  const [exe, ...lead] = interpreter.argv;
  return succeed({ command: exe, args: [...lead, ...SERVER_MODULE_ARGS], source: interpreter.source, cwd: picked.cwd ?? cwd, python: interpreter });
}

/**
 * The runner the server starts for Run File (its QUIVER_LSP_RUNNER): the selected
 * interpreter's `quiver run`, so that programs run where torch is installed and
 * never with the bundled libraries. Undefined: the server's own Python.
 */
export function runnerCommand(server: ServerCommand): string[] | undefined {
  return server.python === undefined ? undefined : [...server.python.argv, '-P', '-m', 'quiver.cli'];
}

/** The command line as a user would type it, for logs and messages. */
export function formatCommandLine(server: Pick<ServerCommand, 'command' | 'args'>): string {
  return [server.command, ...server.args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
}
