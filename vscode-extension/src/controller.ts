// The server's life cycle, without VS Code: resolve the command, launch, and when
// something goes wrong show exactly one message per attempt. extension.ts supplies
// the ports; the unit tests supply fakes.

import {
  describeResolution,
  MessageContext,
  messageForGaveUp,
  messageForResolveProblem,
  messageForStartFailure,
  StartFailure,
  UserMessage,
} from './messages';
import { Resolution, ServerCommand } from './serverCommand';

export type LaunchResult = { ok: true } | { ok: false; failure: StartFailure };

export interface ControllerPorts {
  /** Reads settings, trust, the Python extension and the file system, and picks the server command. */
  resolve(): Resolution | Promise<Resolution>;
  isTrusted(): boolean;
  /** Starts a client on `server`; resolves when it is initialized or has failed for good. */
  launch(server: ServerCommand): Promise<LaunchResult>;
  /** Stops the current client, if any. */
  stop(): Promise<void>;
  showError(message: UserMessage): void;
  log(line: string): void;
}

export type ServerState = 'stopped' | 'starting' | 'running' | 'failed';

export class ServerController {
  private _state: ServerState = 'stopped';
  private current: ServerCommand | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private listeners: Array<(s: ServerState) => void> = [];

  constructor(private readonly ports: ControllerPorts) {}

  /** Shows a message and keeps it in the log, where the rest of the story is. */
  private report(message: UserMessage): void {
    this.ports.log(message.text);
    this.ports.showError(message);
  }

  get state(): ServerState {
    return this._state;
  }

  onDidChangeState(listener: (s: ServerState) => void): void {
    this.listeners.push(listener);
  }

  /** Starts the server unless it is running; calls are serialized. */
  start(): Promise<ServerState> {
    return this.enqueue(async () => {
      if (this._state === 'running') {
        return this._state;
      }
      return this.doStart();
    });
  }

  /** Stops whatever runs and starts again with a freshly resolved command. */
  restart(): Promise<ServerState> {
    return this.enqueue(async () => {
      await this.doStop();
      return this.doStart();
    });
  }

  stop(): Promise<ServerState> {
    return this.enqueue(async () => {
      await this.doStop();
      return this._state;
    });
  }

  /** The client gave up restarting a server that had been running. */
  gaveUp(crashes: number, failure: StartFailure): void {
    if (this._state !== 'running' || this.current === undefined) {
      return;
    }
    this.setState('failed');
    this.ports.log(`The language server crashed ${crashes} times; not restarting it.`);
    this.report(messageForGaveUp(this.current, crashes, failure));
  }

  private enqueue<T>(job: () => Promise<T>): Promise<T> {
    const next = this.queue.then(job, job);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async doStart(): Promise<ServerState> {
    this.setState('starting');
    let resolution: Resolution;
    try {
      resolution = await this.ports.resolve();
    } catch (error) {
      this.current = undefined;
      this.setState('failed');
      this.report({ text: `Quiver: could not choose the language server: ${String(error)}`, actions: ['Show Server Log'] });
      return this._state;
    }
    for (const line of describeResolution(resolution)) {
      this.ports.log(line);
    }
    const ctx: MessageContext = { trusted: this.ports.isTrusted(), venvsLookedFor: resolution.venvsLookedFor };
    if (!resolution.ok) {
      this.current = undefined;
      this.setState('failed');
      this.report(messageForResolveProblem(resolution.problem, ctx));
      return this._state;
    }
    this.current = resolution.server;
    let result: LaunchResult;
    try {
      result = await this.ports.launch(resolution.server);
    } catch (error) {
      result = { ok: false, failure: { stderr: '', error: String(error) } };
    }
    if (result.ok) {
      this.ports.log('The language server is running.');
      this.setState('running');
      return this._state;
    }
    this.setState('failed');
    await this.ports.stop().catch(() => undefined);
    this.report(messageForStartFailure(resolution.server, result.failure, ctx));
    return this._state;
  }

  private async doStop(): Promise<void> {
    await this.ports.stop().catch((error) => this.ports.log(`Stopping the server failed: ${String(error)}`));
    this.setState('stopped');
  }

  private setState(state: ServerState): void {
    if (this._state === state) {
      return;
    }
    this._state = state;
    for (const l of this.listeners) {
      l(state);
    }
  }
}

/**
 * When the connection to a server closes: restart a server that had come up, up to
 * `maxRestarts` times within `windowMs` (a restart that dies while starting counts as
 * a crash too); never restart one that did not come up in the first place, since that
 * would only repeat the same failure and stack up messages.
 */
export class CrashPolicy {
  private crashes: number[] = [];
  private everRunning = false;

  constructor(
    private readonly maxRestarts = 4,
    private readonly windowMs = 3 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The client finished initializing. */
  markRunning(): void {
    this.everRunning = true;
  }

  /** Crashes inside the window, as of the latest `closed()`. */
  get recentCrashes(): number {
    return this.crashes.length;
  }

  closed(): { action: 'restart' } | { action: 'stop'; gaveUp: boolean } {
    if (!this.everRunning) {
      return { action: 'stop', gaveUp: false };
    }
    const t = this.now();
    this.crashes = this.crashes.filter((c) => t - c < this.windowMs);
    this.crashes.push(t);
    if (this.crashes.length > this.maxRestarts) {
      return { action: 'stop', gaveUp: true };
    }
    return { action: 'restart' };
  }

  /** A read or write error on the connection; after a few, shut it down. */
  error(count: number | undefined): 'continue' | 'shutdown' {
    return count !== undefined && count > 3 ? 'shutdown' : 'continue';
  }
}
