// The one message a user sees when the language server cannot start, or gives up.
// Pure: it classifies what happened (from the resolution, the exit code and the
// server's stderr) and says what to do about it.

import { CommandSource, formatCommandLine, Resolution, ResolveProblem, ServerCommand } from './serverCommand';

/** Buttons offered with a message; extension.ts maps each to a command. */
export type MessageAction = 'Show Server Log' | 'Open Settings' | 'Restart Server';

export interface UserMessage {
  text: string;
  actions: MessageAction[];
}

/** What is known about a server that did not come up. */
export interface StartFailure {
  /** The process could not be spawned at all (ENOENT, EACCES, ...). */
  spawnError?: { code?: string; message: string };
  /** Exit code, null when killed by a signal, undefined when still running or unknown. */
  exitCode?: number | null;
  signal?: string | null;
  /** The end of what the server wrote to stderr. */
  stderr: string;
  /** The error the client reported (e.g. initialize failed), when the process stayed up. */
  error?: string;
  /** The server did not answer `initialize` in time (and was stopped), after this many seconds. */
  timedOutAfterS?: number;
}

export type FailureKind =
  | { kind: 'spawn-error'; code?: string; detail: string }
  | { kind: 'not-installed'; module: string }
  | { kind: 'not-runnable' }
  | { kind: 'missing-dependency'; module: string }
  | { kind: 'timeout'; seconds: number; lastLine?: string }
  | { kind: 'crashed'; lastLine?: string };

const RESTART = '"Quiver: Restart Server"';
const INSTALL = 'python3 -m venv .venv && .venv/bin/pip install quiver-lang';

/** Sorts a start failure into the cases that call for different advice. */
export function classifyStartFailure(failure: StartFailure): FailureKind {
  if (failure.spawnError !== undefined) {
    return { kind: 'spawn-error', code: failure.spawnError.code, detail: failure.spawnError.message };
  }
  const stderr = failure.stderr;
  if (failure.timedOutAfterS !== undefined) {
    return { kind: 'timeout', seconds: failure.timedOutAfterS, lastLine: lastMeaningfulLine(stderr) };
  }
  // `python -m quiver.server` on a quiver without a server prints
  // "No module named quiver.server.__main__; 'quiver.server' is a package and cannot be directly executed".
  if (/No module named [']?quiver\.server\.__main__/.test(stderr)) {
    return { kind: 'not-runnable' };
  }
  const missing = [...stderr.matchAll(/No module named '?([\w.]+)'?/g)].map((m) => m[1]);
  const module = missing[missing.length - 1];
  if (module !== undefined) {
    if (module === 'quiver' || module === 'quiver.server') {
      return { kind: 'not-installed', module };
    }
    if (!module.startsWith('quiver.')) {
      return { kind: 'missing-dependency', module };
    }
  }
  return { kind: 'crashed', lastLine: lastMeaningfulLine(stderr) ?? failure.error };
}

/** The last non-empty stderr line, which for a Python traceback is the exception. */
export function lastMeaningfulLine(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const last = lines[lines.length - 1];
  if (last === undefined) {
    return undefined;
  }
  return last.length > 200 ? last.slice(0, 197) + '...' : last;
}

function describeInterpreter(server: ServerCommand): string {
  switch (server.source) {
    case 'workspace-venv': {
      const parts = server.command.split(/[\\/]/);
      const env = parts.length >= 3 ? parts[parts.length - 3] : '.venv';
      return `the workspace's ${env} (${server.command})`;
    }
    case 'python-setting':
      return `${server.command} (from quiver.server.pythonPath)`;
    case 'command-setting':
      return `the command in quiver.server.command (${formatCommandLine(server)})`;
    case 'interpreter-setting':
      return `${server.command} (from quiver.interpreter)`;
    case 'python-extension':
      return `${server.command} (the Python extension's environment)`;
    case 'conda':
      return `the conda environment's ${server.command}`;
    case 'poetry':
      return `the poetry environment's ${server.command}`;
    case 'path-setting':
      return `${server.command} (from quiver.path)`;
    case 'quiver-lsp':
      return `${server.command} (quiver-lsp on PATH)`;
    case 'bundled':
      return `the bundled server run by ${server.command}`;
    case 'path':
      return `${server.command}`;
  }
}

function exitDescription(failure: StartFailure): string {
  if (failure.signal) {
    return `killed by ${failure.signal}`;
  }
  if (failure.exitCode !== undefined && failure.exitCode !== null) {
    return `exit code ${failure.exitCode}`;
  }
  return 'no exit code';
}

export interface MessageContext {
  trusted: boolean;
  /** Where a .venv was looked for (empty when none was: untrusted, no folder, or a setting chose). */
  venvsLookedFor: string[];
}

/** The message for a server command that could not be chosen at all. */
export function messageForResolveProblem(problem: ResolveProblem, ctx: MessageContext): UserMessage {
  if (problem.kind === 'setting-not-found') {
    return {
      text: `Quiver: ${problem.setting} is set to "${problem.value}", which was not found. Fix the setting (the server restarts when it changes), or clear it to let Quiver find a Python by itself.`,
      actions: ['Open Settings', 'Show Server Log'],
    };
  }
  const where = ctx.venvsLookedFor.length > 0 ? "no .venv in the workspace and no " : 'no ';
  return {
    text: `Quiver: cannot start the language server: ${where}${problem.triedOnPath.join(' or ')} on PATH. Install Python 3.11 or newer (the extension brings its own Quiver language server), or set quiver.interpreter, then run ${RESTART}.`,
    actions: ['Open Settings', 'Show Server Log'],
  };
}

/** The message for a server that was started but did not come up. */
export function messageForStartFailure(server: ServerCommand, failure: StartFailure, ctx: MessageContext): UserMessage {
  const cls = classifyStartFailure(failure);
  const who = describeInterpreter(server);
  switch (cls.kind) {
    case 'spawn-error':
      return {
        text: `Quiver: could not run ${who}: ${cls.detail}. Check the quiver.server settings, then run ${RESTART}.`,
        actions: ['Open Settings', 'Show Server Log'],
      };
    case 'not-installed':
    case 'not-runnable': {
      const what =
        cls.kind === 'not-runnable'
          ? 'has a Quiver without a runnable language server (quiver.server has no __main__); update Quiver in it'
          : `has no Quiver language server (No module named '${cls.module}')`;
      if (server.source === 'path' && !ctx.trusted) {
        return {
          text: `Quiver: in Restricted Mode the workspace's .venv is not used, and ${who} ${what}. Trust the workspace, or set quiver.importStrategy to useBundled or quiver.interpreter in your user settings, then run ${RESTART}.`,
          actions: ['Open Settings', 'Show Server Log'],
        };
      }
      if (server.source === 'path' && ctx.venvsLookedFor.length > 0) {
        return {
          text: `Quiver: no .venv in this workspace, and ${who} ${what}. Create one (${INSTALL}), set quiver.interpreter, or use the bundled server (quiver.importStrategy: useBundled), then run ${RESTART}.`,
          actions: ['Open Settings', 'Show Server Log'],
        };
      }
      const fix =
        server.source === 'command-setting' || server.source === 'path-setting' || server.source === 'quiver-lsp'
          ? `Install Quiver for it (pip install quiver-lang) or change ${server.source === 'command-setting' ? 'quiver.server.command' : 'quiver.path'}`
          : `Install it with ${server.command} -m pip install quiver-lang, point quiver.interpreter at a Python that has it, or use the bundled server (quiver.importStrategy: useBundled)`;
      return {
        text: `Quiver: ${who} ${what}. ${fix}, then run ${RESTART}.`,
        actions: ['Open Settings', 'Show Server Log'],
      };
    }
    case 'missing-dependency':
      return {
        text: `Quiver: the language server in ${who} cannot import ${cls.module}. ${server.source === 'bundled' ? 'The extension\'s bundled libraries are incomplete: reinstall the extension' : `Reinstall Quiver into that Python (${server.command} -m pip install quiver-lang)`}, then run ${RESTART}.`,
        actions: ['Show Server Log', 'Open Settings'],
      };
    case 'timeout':
      return {
        text: `Quiver: the language server (${formatCommandLine(server)}) did not finish starting within ${cls.seconds} s and was stopped${cls.lastLine !== undefined ? ` (its last output: ${cls.lastLine})` : ''}. The server log has the details; fix the cause, then run ${RESTART}.`,
        actions: ['Show Server Log', 'Restart Server'],
      };
    case 'crashed': {
      const reason = cls.lastLine !== undefined ? `: ${cls.lastLine}` : '';
      return {
        text: `Quiver: the language server (${formatCommandLine(server)}) stopped during startup (${exitDescription(failure)})${reason}. The server log has the details; fix the cause, then run ${RESTART}.`,
        actions: ['Show Server Log', 'Restart Server'],
      };
    }
  }
}

/** The message when a server that was running kept crashing and is not restarted again. */
export function messageForGaveUp(server: ServerCommand, crashes: number, failure: StartFailure): UserMessage {
  const last = lastMeaningfulLine(failure.stderr);
  return {
    text: `Quiver: the language server crashed ${crashes} times in a few minutes and is not restarted again${last ? ` (last error: ${last})` : ''}. The server log has the details; fix the cause, then run ${RESTART}. (${formatCommandLine(server)})`,
    actions: ['Show Server Log', 'Restart Server'],
  };
}

/** Lines for the log when a resolution is made, so users can see what was chosen and why. */
export function describeResolution(resolution: Resolution): string[] {
  const lines = [...resolution.notes];
  if (resolution.ok) {
    const python = (source: CommandSource): string =>
      ({
        'command-setting': 'from quiver.server.command',
        'python-setting': 'from quiver.server.pythonPath',
        'path-setting': 'from quiver.path',
        'quiver-lsp': 'quiver-lsp on PATH',
        bundled: 'bundled',
        'interpreter-setting': 'from quiver.interpreter',
        'python-extension': "the Python extension's environment",
        'workspace-venv': "the workspace's environment",
        conda: 'the conda environment (CONDA_PREFIX)',
        poetry: "the folder's poetry environment",
        path: resolution.venvsLookedFor.length > 0 ? 'from PATH (no .venv in the workspace)' : 'from PATH',
      })[source];
    const server = resolution.server;
    const why = server.source === 'bundled' && server.python !== undefined ? `bundled, with the Python ${python(server.python.source)}` : python(server.source);
    lines.push(`Starting the language server (${why}): ${formatCommandLine(server)}`);
    if (server.python !== undefined && server.source !== 'bundled' && server.python.argv[0] !== server.command) {
      lines.push(`Run File uses ${server.python.argv.join(' ')} (${python(server.python.source)}).`);
    }
  }
  return lines;
}
