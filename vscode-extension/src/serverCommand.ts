// Which command starts the language server. Pure logic: everything it needs from
// VS Code, the file system and the environment comes in through ResolveInput, so
// the unit tests can drive every case.

import * as path from 'path';

/** The scopes of one setting, as `WorkspaceConfiguration.inspect()` returns them. */
export interface SettingScopes<T> {
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

export interface ResolveInput {
  /** Whether the workspace is trusted (`vscode.workspace.isTrusted`). */
  trusted: boolean;
  /** `quiver.server.command`: a full command line, argv style. */
  command: SettingScopes<string[]>;
  /** `quiver.server.pythonPath`: the interpreter to run `-m quiver.server` with. */
  pythonPath: SettingScopes<string>;
  /** File-system paths of the workspace folders, first one first. */
  workspaceFolders: string[];
  platform: NodeJS.Platform;
  /** The PATH environment variable. */
  envPath: string;
  homeDir: string;
  /** Whether `p` is an existing file (executability is left to the spawn). */
  isFile(p: string): boolean;
}

export type CommandSource = 'command-setting' | 'python-setting' | 'workspace-venv' | 'path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Where the command came from; the start-failure messages depend on it. */
  source: CommandSource;
  /** The workspace folder to start in, if any. */
  cwd?: string;
}

export type Resolution =
  | { ok: true; server: ServerCommand; notes: string[]; venvsLookedFor: string[] }
  | { ok: false; problem: ResolveProblem; notes: string[]; venvsLookedFor: string[] };

export type ResolveProblem =
  | { kind: 'setting-not-found'; setting: 'quiver.server.command' | 'quiver.server.pythonPath'; value: string }
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

/** Finds a bare command name on PATH; a name with a slash is checked as a file. */
export function findExecutable(name: string, input: Pick<ResolveInput, 'envPath' | 'platform' | 'isFile'>): string | undefined {
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
      if (input.isFile(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

export function venvPython(folder: string, platform: NodeJS.Platform): string {
  return platform === 'win32'
    ? path.win32.join(folder, '.venv', 'Scripts', 'python.exe')
    : path.posix.join(folder, '.venv', 'bin', 'python');
}

/**
 * Picks the server command, in this order:
 * 1. `quiver.server.command`, 2. `quiver.server.pythonPath`,
 * 3. the first workspace folder's `.venv` (trusted workspaces only),
 * 4. `python3` (then `python`) on PATH.
 * A setting that names something missing is an error, not a reason to fall back:
 * the user asked for it.
 */
export function resolveServerCommand(input: ResolveInput): Resolution {
  const notes: string[] = [];
  const venvsLookedFor: string[] = [];
  const cwd = input.workspaceFolders[0];

  const command = effectiveSetting(input.command, input.trusted, (v) => Array.isArray(v) && v.length > 0 && v[0].trim() !== '');
  if (command.ignoredWorkspaceValue) {
    notes.push('Restricted Mode: ignoring the workspace value of quiver.server.command.');
  }
  const pythonPath = effectiveSetting(input.pythonPath, input.trusted, (v) => typeof v === 'string' && v.trim() !== '');
  if (pythonPath.ignoredWorkspaceValue) {
    notes.push('Restricted Mode: ignoring the workspace value of quiver.server.pythonPath.');
  }

  if (command.value !== undefined) {
    const [exe, ...rest] = command.value;
    const expanded = expandPath(exe, input);
    const found = findExecutable(expanded, input);
    if (found === undefined) {
      return { ok: false, problem: { kind: 'setting-not-found', setting: 'quiver.server.command', value: exe }, notes, venvsLookedFor };
    }
    const folder = input.workspaceFolders[0];
    const args = rest.map((a) => (folder === undefined ? a : a.split('${workspaceFolder}').join(folder)));
    if (!args.includes('--stdio')) {
      args.push('--stdio');
    }
    return { ok: true, server: { command: found, args, source: 'command-setting', cwd }, notes, venvsLookedFor };
  }

  if (pythonPath.value !== undefined) {
    const expanded = expandPath(pythonPath.value, input);
    const found = findExecutable(expanded, input);
    if (found === undefined) {
      return { ok: false, problem: { kind: 'setting-not-found', setting: 'quiver.server.pythonPath', value: pythonPath.value }, notes, venvsLookedFor };
    }
    return { ok: true, server: { command: found, args: [...SERVER_MODULE_ARGS], source: 'python-setting', cwd }, notes, venvsLookedFor };
  }

  for (const folder of input.workspaceFolders) {
    const python = venvPython(folder, input.platform);
    if (!input.trusted) {
      if (input.isFile(python)) {
        notes.push(`Restricted Mode: not running the workspace's ${python}; trust the workspace to use it.`);
      }
      continue;
    }
    venvsLookedFor.push(python);
    if (input.isFile(python)) {
      return { ok: true, server: { command: python, args: [...SERVER_MODULE_ARGS], source: 'workspace-venv', cwd: folder }, notes, venvsLookedFor };
    }
  }

  const names = input.platform === 'win32' ? ['python', 'python3'] : ['python3', 'python'];
  for (const name of names) {
    const found = findExecutable(name, input);
    if (found !== undefined) {
      return { ok: true, server: { command: found, args: [...SERVER_MODULE_ARGS], source: 'path', cwd }, notes, venvsLookedFor };
    }
  }
  return { ok: false, problem: { kind: 'no-python', triedOnPath: names }, notes, venvsLookedFor };
}

/** The command line as a user would type it, for logs and messages. */
export function formatCommandLine(server: Pick<ServerCommand, 'command' | 'args'>): string {
  return [server.command, ...server.args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
}
