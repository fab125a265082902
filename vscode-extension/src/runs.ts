// Runs of a file's `main`, as the server reports them (quiver/runStarted,
// quiver/runOutput, quiver/runFinished), written to an output channel. Pure: the
// channel and the clock are passed in.

export type RunStream = 'stdout' | 'stderr';
export type RunStatus = 'ok' | 'failed' | 'stopped' | 'timeout';

export interface RunStartedParams {
  uri: string;
  runId: string;
  command: string;
}

export interface RunOutputParams {
  uri: string;
  runId: string;
  stream: RunStream;
  text: string;
}

export interface RunFinishedParams {
  uri: string;
  runId: string;
  exitCode: number | null;
  status: RunStatus;
  message?: string;
}

export interface RunInfo {
  runId: string;
  uri: string;
  name: string;
  startedAt: number;
}

/** Where run output goes: an output channel in the extension. */
export interface RunSink {
  append(text: string): void;
  clear(): void;
  reveal(): void;
}

/** The file name shown for a document URI (`file:///a/b/mlp.qv` -> `mlp.qv`). */
export function displayName(uri: string): string {
  let p = uri;
  try {
    p = decodeURIComponent(new URL(uri).pathname);
  } catch {
    // Not a URL: use it as a path.
  }
  const parts = p.split(/[\\/]/).filter((s) => s !== '');
  return parts[parts.length - 1] ?? uri;
}

export function formatElapsed(ms: number): string {
  if (ms < 60_000) {
    return `${(ms / 1000).toFixed(1)} s`;
  }
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function formatStarted(name: string, command: string): string {
  return `▶ Running ${name}\n  $ ${command}\n`;
}

/** A server message that only repeats the status or the exit code says nothing new. */
function saysMore(p: Pick<RunFinishedParams, 'status' | 'exitCode' | 'message'>): boolean {
  const m = (p.message ?? '').trim().toLowerCase().replace(/\.$/, '');
  if (m === '' || m === p.status || ['stopped', 'timed out', 'finished', 'failed'].includes(m)) {
    return false;
  }
  return !(p.exitCode !== null && p.exitCode !== undefined && m === `exited with code ${p.exitCode}`);
}

export function formatFinished(name: string, p: Pick<RunFinishedParams, 'status' | 'exitCode' | 'message'>, elapsedMs: number | undefined): string {
  const after = elapsedMs === undefined ? '' : ` after ${formatElapsed(elapsedMs)}`;
  const code = p.exitCode === null || p.exitCode === undefined ? '' : ` (exit code ${p.exitCode})`;
  const message = saysMore(p) ? `: ${p.message}` : '';
  switch (p.status) {
    case 'ok':
      return `✓ ${name} finished${elapsedMs === undefined ? '' : ` in ${formatElapsed(elapsedMs)}`}${message}\n`;
    case 'failed':
      return `✗ ${name} failed${after}${code}${message}\n`;
    case 'stopped':
      return `■ ${name} stopped${after}${message}\n`;
    case 'timeout':
      return `✗ ${name} timed out${after}${message}\n`;
    default:
      return `${name} ended (${String(p.status)})${after}${code}${message}\n`;
  }
}

const FINISHED_MEMORY = 64;

export class RunLog {
  private readonly runs = new Map<string, RunInfo>();
  /** Runs already finished, so that a late executeCommand reply does not revive one. */
  private readonly finishedIds: string[] = [];
  private atLineStart = true;
  private lastWriter: string | undefined;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly sink: RunSink,
    private readonly options: { clearOnStart(): boolean } = { clearOnStart: () => true },
    private readonly now: () => number = Date.now,
  ) {}

  onDidChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  get active(): RunInfo[] {
    return [...this.runs.values()];
  }

  /** The run to stop for a document: its own, else the newest. */
  runToStop(uri: string | undefined): RunInfo | undefined {
    const all = this.active;
    return all.find((r) => r.uri === uri) ?? all[all.length - 1];
  }

  /** The server accepted a run request (its reply can come before or after runStarted). */
  requested(uri: string, runId: string): void {
    if (this.runs.has(runId) || this.finishedIds.includes(runId)) {
      return;
    }
    this.runs.set(runId, { runId, uri, name: displayName(uri), startedAt: this.now() });
    this.changed();
  }

  started(p: RunStartedParams): void {
    if (this.runs.size === 0 || (this.runs.size === 1 && this.runs.has(p.runId))) {
      if (this.options.clearOnStart()) {
        this.sink.clear();
        this.atLineStart = true;
      }
    }
    const known = this.runs.get(p.runId);
    const info: RunInfo = known ?? { runId: p.runId, uri: p.uri, name: displayName(p.uri), startedAt: this.now() };
    this.runs.set(p.runId, info);
    this.write(formatStarted(info.name, p.command), true);
    this.lastWriter = p.runId;
    this.sink.reveal();
    this.changed();
  }

  output(p: RunOutputParams): void {
    if (p.text === '') {
      return;
    }
    const info = this.runs.get(p.runId);
    if (this.lastWriter !== p.runId && this.runs.size > 1 && info !== undefined) {
      // Several runs at once: say whose output follows.
      this.write(`── ${info.name} ──\n`, true);
    }
    this.lastWriter = p.runId;
    this.write(p.text, false);
  }

  finished(p: RunFinishedParams): void {
    const info = this.runs.get(p.runId);
    this.runs.delete(p.runId);
    this.finishedIds.push(p.runId);
    if (this.finishedIds.length > FINISHED_MEMORY) {
      this.finishedIds.shift();
    }
    const name = info?.name ?? displayName(p.uri);
    const elapsed = info === undefined ? undefined : this.now() - info.startedAt;
    this.write(formatFinished(name, p, elapsed), true);
    this.lastWriter = undefined;
    this.changed();
  }

  /** The server went away: its runs will not report their end, so end them here. */
  serverStopped(): void {
    if (this.runs.size === 0) {
      return;
    }
    for (const info of this.runs.values()) {
      this.write(`■ ${info.name}: the language server stopped, so the end of this run was not reported\n`, true);
      this.finishedIds.push(info.runId);
    }
    this.finishedIds.splice(0, Math.max(0, this.finishedIds.length - FINISHED_MEMORY));
    this.runs.clear();
    this.lastWriter = undefined;
    this.changed();
  }

  /** Writes a client-side line (e.g. a request that failed) between runs' output. */
  note(text: string): void {
    this.write(text.endsWith('\n') ? text : text + '\n', true);
  }

  /** Appends text; `ownLine` text starts on a fresh line (after output that did not end one). */
  private write(text: string, ownLine: boolean): void {
    if (ownLine && !this.atLineStart) {
      this.sink.append('\n');
      this.atLineStart = true;
    }
    this.sink.append(text);
    this.atLineStart = text.endsWith('\n');
  }

  private changed(): void {
    for (const l of this.listeners) {
      l();
    }
  }
}
