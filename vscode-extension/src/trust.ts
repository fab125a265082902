// Restricted Mode's one rule for what the extension executes: nothing that lies
// inside a workspace folder, whichever setting, extension or environment names it.
// Pure: the file system comes in through `realpath`, so the unit tests can drive
// links and missing files.

import * as path from 'path';

export interface TrustInput {
  /** File-system paths of the workspace folders. */
  workspaceFolders: string[];
  platform: NodeJS.Platform;
  /**
   * The real path of `p` (links resolved), or undefined when nothing is there.
   * Without it, paths are taken as they are written (no links, everything exists).
   */
  realpath?(p: string): string | undefined;
}

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/**
 * Whether `p` is `folder` or lies below it, comparing path segments: a folder
 * named `..venv` is a name, not a way up (`path.relative` gives `..venv/...`).
 * Both paths must be absolute.
 */
export function isInside(p: string, folder: string, platform: NodeJS.Platform): boolean {
  const api = pathApi(platform);
  const rel = api.relative(folder, p);
  if (rel === '') {
    return true;
  }
  if (api.isAbsolute(rel)) {
    return false; // another drive on Windows
  }
  const first = rel.split(platform === 'win32' ? /[\\/]/ : '/')[0];
  return first !== '..';
}

/**
 * The workspace folder that holds what running `p` would execute, or undefined.
 * `p` is checked as written (made absolute from `cwd`, where the process starts)
 * and with its links resolved, against each folder as written and resolved: a
 * venv's `bin/python` is a link out of the workspace but still loads the
 * workspace's site-packages, and a link outside may lead into the workspace.
 */
export function workspaceFolderHolding(p: string, input: TrustInput, cwd?: string): string | undefined {
  const api = pathApi(input.platform);
  const base = cwd ?? input.workspaceFolders[0];
  if (!api.isAbsolute(p) && base === undefined) {
    return undefined;
  }
  const absolute = api.resolve(base ?? '', p);
  const real = input.realpath ? input.realpath(absolute) : absolute;
  const forms = real === undefined || real === absolute ? [absolute] : [absolute, real];
  for (const folder of input.workspaceFolders) {
    const realFolder = input.realpath ? input.realpath(folder) : folder;
    const folders = realFolder === undefined || realFolder === folder ? [folder] : [folder, realFolder];
    if (forms.some((f) => folders.some((d) => isInside(f, d, input.platform)))) {
      return folder;
    }
  }
  return undefined;
}

/** Whether an argument stands for a path that exists (made absolute from `cwd`). */
function existingPath(arg: string, input: TrustInput, cwd: string | undefined): boolean {
  const api = pathApi(input.platform);
  if (arg === '' || arg.startsWith('-') || (!api.isAbsolute(arg) && cwd === undefined)) {
    return false;
  }
  const absolute = api.resolve(cwd ?? '', arg);
  return input.realpath === undefined ? api.isAbsolute(arg) : input.realpath(absolute) !== undefined;
}

/**
 * Why running `argv` (an executable and its arguments) would run something of
 * the workspace, or undefined when it would not: the executable lies inside a
 * workspace folder, or an argument names a file there (a script the executable
 * would run). `cwd`: the folder the process starts in.
 */
export function workspaceExecution(argv: string[], input: TrustInput, cwd?: string): string | undefined {
  const [exe, ...args] = argv;
  if (exe === undefined) {
    return undefined;
  }
  const start = cwd ?? input.workspaceFolders[0];
  const folder = workspaceFolderHolding(exe, input, start);
  if (folder !== undefined) {
    return `${exe} lies in the workspace folder ${folder}${linkNote(exe, folder, input, start)}`;
  }
  for (const arg of args) {
    if (!existingPath(arg, input, start)) {
      continue;
    }
    const holding = workspaceFolderHolding(arg, input, start);
    if (holding !== undefined) {
      return `its argument ${arg} lies in the workspace folder ${holding}${linkNote(arg, holding, input, start)}`;
    }
  }
  return undefined;
}

/** For a path outside `folder` as written: the link's target that lies inside. */
function linkNote(p: string, folder: string, input: TrustInput, cwd: string | undefined): string {
  const api = pathApi(input.platform);
  const absolute = cwd === undefined ? p : api.resolve(cwd, p);
  if (isInside(absolute, folder, input.platform)) {
    return '';
  }
  const real = input.realpath?.(absolute);
  return real !== undefined && real !== absolute ? ` (through a link: it is ${real})` : '';
}
