// The Quiver extension: starts the language server, wires the commands, and shows
// run output. The decisions live in pure modules (serverCommand, messages,
// controller, runs); this file only connects them to VS Code.

import { ChildProcess, execFile, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
} from 'vscode-languageclient/node';
import { registerDebugging } from './debug';
import { argsSetting, promptValue, rememberArgs, runFileArguments, splitArgs } from './args';
import { ControllerPorts, CrashPolicy, LaunchResult, ServerController } from './controller';
import { MessageAction, StartFailure, UserMessage } from './messages';
import { RunMetricsParams } from './metrics';
import { MetricsPanel } from './metricsPanel';
import { RunFinishedParams, RunLog, RunOutputParams, RunStartedParams } from './runs';
import { findExecutable, resolveServerCommand, Resolution, runnerCommand, ServerCommand, serverEnvironment } from './serverCommand';
import { ExtensionLike, PYTHON_EXTENSION_ID, PythonExtensionInterpreter } from './pythonExt';
import { workspaceExecution } from './trust';
import { INSTALL_ACTION, installCommand, installPipArgs, installSpecArgs, missingRuntimeMessage, parseProbe, PROBE_ARGS, runLacksRuntime } from './runtimeInstall';

/** The server's own executeCommand ids (vscode-languageclient registers these itself). */
export const SERVER_RUN_FILE = 'quiver.runFile';
export const SERVER_STOP_RUN = 'quiver.stopRun';

const STDERR_TAIL_CHARS = 8000;
/** The workspace state key of the last arguments typed for each file. */
const LAST_ARGS_KEY = 'quiver.run.lastArgs';
/** The bundled server's entry script, inside the extension (built by tools/bundle-python.sh). */
const BUNDLED_SCRIPT = ['bundled', 'tool', 'lsp_server.py'];
/** The environment variable that tells the server which runner Run File starts (server/runs.py). */
const RUNNER_ENV = 'QUIVER_LSP_RUNNER';
/** The settings whose change restarts the server. */
const SERVER_SETTINGS = ['quiver.server', 'quiver.importStrategy', 'quiver.interpreter', 'quiver.path'];
/** A server that has not answered `initialize` by then counts as failed to start. */
const START_TIMEOUT_MS = 60_000;

/**
 * The controller shows one message of its own for every way the server can fail to
 * start or keep running; the client's forced notifications ("couldn't create
 * connection", "Restarting server failed", ...) would stack more on top. They still
 * go to the log.
 */
class QuiverLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, showNotification === 'force' ? false : showNotification);
  }
}

/** Starts and stops one client at a time, spawning the server process itself to keep its stderr and exit code. */
class ClientLauncher {
  client: QuiverLanguageClient | undefined;
  /** The command of the current client's server. */
  server: ServerCommand | undefined;
  private proc: ChildProcess | undefined;
  /** The end of each run's output, to tell why a run failed. */
  private runTails = new Map<string, string>();
  private stderrTail = '';
  private exit: { code: number | null; signal: string | null } | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly runLog: RunLog,
    private readonly metrics: MetricsPanel,
    private readonly programArgs: (uri: string) => string[],
    private readonly onGaveUp: (crashes: number, failure: StartFailure) => void,
    private readonly onRunFailed: (server: ServerCommand | undefined, exitCode: number | null, outputTail: string) => void,
  ) {}

  async launch(server: ServerCommand): Promise<LaunchResult> {
    const policy = new CrashPolicy();
    this.server = server;
    const env = serverEnvironment(process.env);
    const runner = runnerCommand(server);
    if (runner !== undefined && !process.env[RUNNER_ENV]) {
      // Run File: the selected interpreter's `quiver run`, never the bundled libraries.
      env[RUNNER_ENV] = JSON.stringify(runner);
    }
    const serverOptions = async (): Promise<ChildProcess> => {
      const proc = spawn(server.command, server.args, { cwd: server.cwd, env, stdio: 'pipe' });
      this.track(proc);
      await new Promise<void>((resolve, reject) => {
        proc.once('spawn', () => resolve());
        proc.once('error', reject);
      });
      return proc;
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'quiver' },
        { scheme: 'untitled', language: 'quiver' },
        { notebook: '*', language: 'quiver' }, // Quiver cells of notebooks (docs/notebooks.md)
      ],
      // The server can push diagnostics, answer pulls, or both; VS Code would show
      // "both" twice (one collection each), so ask for push only.
      initializationOptions: { diagnostics: { mode: 'push' } },
      // The server reads the `quiver` section (debounce, run timeout, hints,
      // lenses) and re-reads it when it changes.
      synchronize: { configurationSection: 'quiver' },
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationFailedHandler: () => false,
      errorHandler: {
        error: (_error, _message, count) =>
          policy.error(count) === 'shutdown'
            ? { action: ErrorAction.Shutdown, handled: true }
            : { action: ErrorAction.Continue, handled: true },
        closed: () => {
          this.runLog.serverStopped();
          const decision = policy.closed();
          if (decision.action === 'restart') {
            this.log.warn(`The language server stopped unexpectedly (${policy.recentCrashes} recently); restarting it.`);
            return { action: CloseAction.Restart, handled: true };
          }
          if (decision.gaveUp) {
            this.onGaveUp(policy.recentCrashes, this.failure());
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        // Code lenses and code actions from the server run commands through here.
        executeCommand: (command, args, next) => {
          if (command === SERVER_RUN_FILE && !vscode.workspace.isTrusted) {
            void vscode.window.showWarningMessage(RESTRICTED_RUN_MESSAGE);
            return undefined;
          }
          if (command === SERVER_RUN_FILE && args.length === 1 && typeof args[0] === 'string') {
            // The Run lens and the "Run main" code action: main gets the quiver.run.args setting of the file.
            return next(command, runFileArguments(args[0], this.programArgs(args[0])));
          }
          return next(command, args);
        },
      },
    };
    const client = new QuiverLanguageClient('quiver', 'Quiver', serverOptions, clientOptions);
    client.onNotification('quiver/runStarted', (p: RunStartedParams) => {
      this.runLog.started(p);
      this.metrics.current.started(p);
    });
    client.onNotification('quiver/runOutput', (p: RunOutputParams) => {
      this.runLog.output(p);
      this.runTails.set(p.runId, ((this.runTails.get(p.runId) ?? '') + p.text).slice(-4000));
    });
    client.onNotification('quiver/runMetrics', (p: RunMetricsParams) => this.metrics.current.metrics(p));
    client.onNotification('quiver/runFinished', (p: RunFinishedParams) => {
      this.runLog.finished(p);
      this.metrics.current.finished(p);
      const tail = (this.runTails.get(p.runId) ?? '') + (p.message ?? '');
      this.runTails.delete(p.runId);
      if (p.status === 'failed') {
        this.onRunFailed(server, p.exitCode, tail);
      }
    });
    this.client = client;
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    try {
      await Promise.race([
        client.start(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            this.proc?.kill();
            reject(new Error(`the server did not answer "initialize" within ${START_TIMEOUT_MS / 1000} s`));
          }, START_TIMEOUT_MS);
        }),
      ]);
      policy.markRunning();
      return { ok: true };
    } catch (error) {
      // Let the process finish dying so that its exit code and last words are known.
      await Promise.race([this.exited, delay(3000)]);
      const failure: StartFailure = { ...this.failure(error), timedOutAfterS: timedOut ? START_TIMEOUT_MS / 1000 : undefined };
      await this.stop();
      return { ok: false, failure };
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        if (client.isRunning()) {
          await client.stop(2000);
        } else {
          await client.dispose(0).catch(() => undefined);
        }
      } catch (error) {
        this.log.warn(`Stopping the language client: ${String(error)}`);
      }
    }
    const proc = this.proc;
    if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
      await Promise.race([this.exited, delay(1000)]);
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill();
      }
    }
  }

  private track(proc: ChildProcess): void {
    this.proc = proc;
    this.stderrTail = '';
    this.exit = undefined;
    proc.stderr?.on('data', (chunk: Buffer | string) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    // 'close' comes after 'exit' once stdout and stderr are drained: waiting
    // for it means the server's last words (its traceback) have been read.
    this.exited = new Promise((resolve) => {
      proc.once('exit', (code, signal) => {
        if (this.proc === proc) {
          this.exit = { code, signal };
        }
      });
      proc.once('close', (code, signal) => {
        if (this.proc === proc && this.exit === undefined) {
          this.exit = { code, signal };
        }
        resolve();
      });
      proc.once('error', () => resolve());
    });
    proc.once('error', (error: NodeJS.ErrnoException) => {
      this.log.error(`Could not start ${proc.spawnfile}: ${error.message}`);
    });
  }

  private failure(error?: unknown): StartFailure {
    const err = error as NodeJS.ErrnoException | undefined;
    const spawnError =
      err !== undefined && typeof err.code === 'string' && err.syscall?.startsWith('spawn')
        ? { code: err.code, message: err.message }
        : undefined;
    return {
      spawnError,
      exitCode: this.exit?.code,
      signal: this.exit?.signal,
      stderr: this.stderrTail,
      error: error === undefined ? undefined : error instanceof Error ? error.message : String(error),
    };
  }
}

const RESTRICTED_RUN_MESSAGE =
  'Quiver: Run File is disabled in Restricted Mode, because running a file executes code from this workspace. Trust the workspace to run it; diagnostics and hovers keep working.';

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The real path of `p`, undefined when nothing is there (trust.ts compares real paths). */
function realpath(p: string): string | undefined {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
}

function fileFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/**
 * Restricted Mode's rule for everything the extension starts besides the server
 * (Run File's probe, the install task, the debug adapter): nothing inside the
 * workspace runs. Says why in the log when it refuses.
 */
function mayExecute(argv: string[], what: string, log: vscode.LogOutputChannel): boolean {
  if (vscode.workspace.isTrusted) {
    return true;
  }
  const why = workspaceExecution(argv, { workspaceFolders: fileFolders(), platform: process.platform, realpath });
  if (why === undefined) {
    return true;
  }
  log.warn(`Restricted Mode: not running ${what} (${argv.join(' ')}): ${why}.`);
  return false;
}

function scopes<T>(cfg: vscode.WorkspaceConfiguration, key: string): { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T } {
  const v = cfg.inspect<T>(key);
  return { globalValue: v?.globalValue, workspaceValue: v?.workspaceValue, workspaceFolderValue: v?.workspaceFolderValue };
}

/** `poetry env info -p` in `folder`, when poetry is installed; undefined otherwise. */
function poetryEnvironment(folder: string): Promise<string | undefined> {
  const poetry = findExecutable('poetry', { envPath: process.env.PATH ?? '', platform: process.platform, isFile });
  if (poetry === undefined || !isFile(`${folder}/pyproject.toml`)) {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    execFile(poetry, ['env', 'info', '-p'], { cwd: folder, timeout: 10_000, encoding: 'utf8' }, (error, stdout) => {
      resolve(error ? undefined : stdout.trim() || undefined);
    });
  });
}

async function readResolution(context: vscode.ExtensionContext, pythonExt: PythonExtensionInterpreter): Promise<Resolution> {
  const cfg = vscode.workspace.getConfiguration('quiver');
  const trusted = vscode.workspace.isTrusted;
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  // Running poetry executes the workspace's pyproject.toml plugins: trusted workspaces only.
  const poetryEnv = trusted && folders.length > 0 ? await poetryEnvironment(folders[0].uri.fsPath) : undefined;
  return resolveServerCommand({
    trusted,
    command: scopes<string[]>(cfg, 'server.command'),
    pythonPath: scopes<string>(cfg, 'server.pythonPath'),
    importStrategy: scopes<string>(cfg, 'importStrategy'),
    interpreter: scopes<string[]>(cfg, 'interpreter'),
    quiverPath: scopes<string[]>(cfg, 'path'),
    pythonExtension: await pythonExt.interpreter(folders[0]?.uri),
    condaPrefix: process.env.CONDA_PREFIX,
    poetryEnv,
    bundledScript: context.asAbsolutePath(BUNDLED_SCRIPT.join('/')),
    workspaceFolders: folders.map((f) => f.uri.fsPath),
    platform: process.platform,
    envPath: process.env.PATH ?? '',
    homeDir: os.homedir(),
    isFile,
    realpath,
  });
}

/** The runtime modules `python` lacks (see runtimeInstall.PROBE_ARGS); undefined when it could not be asked. */
function probeRuntime(python: string[]): Promise<string[] | undefined> {
  const [exe, ...lead] = python;
  return new Promise((resolve) => {
    execFile(exe, [...lead, ...PROBE_ARGS], { cwd: os.tmpdir(), timeout: 20_000, encoding: 'utf8' }, (error, stdout) => {
      resolve(error ? undefined : parseProbe(stdout));
    });
  });
}

let controller: ServerController | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const serverLog = vscode.window.createOutputChannel('Quiver', { log: true });
  const runChannel = vscode.window.createOutputChannel('Quiver Run');
  context.subscriptions.push(serverLog, runChannel);

  const runLog = new RunLog(
    { append: (t) => runChannel.append(t), clear: () => runChannel.clear(), reveal: () => runChannel.show(true) },
    { clearOnStart: () => vscode.workspace.getConfiguration('quiver').get<boolean>('run.clearOutput', true) },
  );
  runLog.onDidChange(() => {
    void vscode.commands.executeCommand('setContext', 'quiver.runActive', runLog.active.length > 0);
  });

  const status = vscode.languages.createLanguageStatusItem('quiver.server', { language: 'quiver' });
  status.name = 'Quiver Language Server';
  context.subscriptions.push(status);

  const showError = (message: UserMessage): void => {
    void vscode.window.showErrorMessage(message.text, ...message.actions).then((choice?: MessageAction) => {
      if (choice === 'Show Server Log') {
        serverLog.show();
      } else if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'quiver.server');
      } else if (choice === 'Restart Server') {
        void ctl.restart();
      }
    });
  };

  const metrics = new MetricsPanel(context.extensionUri);
  context.subscriptions.push(metrics);

  /** The quiver.run.args setting of a file (resource-scoped: a folder's settings may differ). */
  let warnedArgs = '';
  const settingArgs = (uri: string): string[] => {
    let resource: vscode.Uri | undefined;
    try {
      resource = vscode.Uri.parse(uri, true);
    } catch {
      resource = undefined;
    }
    const { args, problem } = argsSetting(vscode.workspace.getConfiguration('quiver', resource).get<unknown>('run.args'));
    if (problem !== undefined && problem !== warnedArgs) {
      warnedArgs = problem;
      void vscode.window.showWarningMessage(`Quiver: ${problem}`);
    }
    return args;
  };

  // ---- the selected interpreter and Run File's runtime (quiver-lang[torch])
  const pythonExt = new PythonExtensionInterpreter(
    () => vscode.extensions.getExtension(PYTHON_EXTENSION_ID) as ExtensionLike | undefined,
    (line) => serverLog.info(line),
  );
  /** The Python that Run File uses, when the extension knows it (else the server's own). */
  const runPython = (server: ServerCommand | undefined): string[] | undefined =>
    server?.python?.argv ?? (server?.source === 'python-setting' ? [server.command] : undefined);

  /** Installs quiver.installSpec into `python` in a task the user watches; never in Restricted Mode. */
  const installRuntime = async (python?: string[]): Promise<void> => {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Quiver: installing packages is disabled in Restricted Mode. Trust the workspace first.');
      return;
    }
    const target = python ?? runPython(launcher.server);
    if (target === undefined) {
      void vscode.window.showInformationMessage('Quiver: no interpreter is selected for Run File. Set quiver.interpreter (or select one in the Python extension), then try again.');
      return;
    }
    if (!mayExecute(target, 'the install', serverLog)) {
      return;
    }
    const spec = installSpecArgs(vscode.workspace.getConfiguration('quiver').get<unknown>('installSpec'));
    const extra = installPipArgs(vscode.workspace.getConfiguration('quiver').get<unknown>('installPipArgs'));
    const { command, args } = installCommand(target, spec, extra);
    serverLog.info(`Installing: ${[command, ...args].join(' ')}`);
    const task = new vscode.Task(
      { type: 'quiver', task: 'install' },
      vscode.TaskScope.Workspace,
      `install ${[...spec, ...extra].join(' ')}`,
      'Quiver',
      new vscode.ProcessExecution(command, args),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, clear: true };
    const execution = await vscode.tasks.executeTask(task);
    const ended = vscode.tasks.onDidEndTaskProcess((e) => {
      if (e.execution !== execution) {
        return;
      }
      ended.dispose();
      if (e.exitCode === 0) {
        serverLog.info(`Installed ${spec.join(' ')} into ${target.join(' ')}.`);
        void vscode.window.showInformationMessage(`Quiver: installed ${spec.join(' ')} into ${target.join(' ')}. Run the file again.`);
        if (ctl.state === 'failed') {
          void ctl.restart();
        }
      } else {
        void vscode.window.showErrorMessage(`Quiver: installing ${spec.join(' ')} into ${target.join(' ')} failed (exit code ${e.exitCode ?? 'unknown'}); the terminal shows why.`);
      }
    });
    context.subscriptions.push(ended);
  };

  const offerInstall = (python: string[] | undefined, missing: string[]): void => {
    if (!vscode.workspace.isTrusted) {
      return;
    }
    const config = vscode.workspace.getConfiguration('quiver');
    const pipArgs = [...installSpecArgs(config.get<unknown>('installSpec')), ...installPipArgs(config.get<unknown>('installPipArgs'))];
    const text = missingRuntimeMessage(python?.join(' ') ?? "the language server's Python", missing, pipArgs);
    const actions = python === undefined ? ['Open Settings'] : [INSTALL_ACTION, 'Open Settings'];
    void vscode.window.showWarningMessage(text, ...actions).then((choice) => {
      if (choice === INSTALL_ACTION) {
        void installRuntime(python);
      } else if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'quiver.interpreter');
      }
    });
  };

  const onRunFailed = (server: ServerCommand | undefined, exitCode: number | null, tail: string): void => {
    if (runLacksRuntime(exitCode, tail)) {
      offerInstall(runPython(server), []);
    }
  };

  const launcher = new ClientLauncher(serverLog, runLog, metrics, settingArgs, (crashes, failure) => ctl.gaveUp(crashes, failure), onRunFailed);
  const ports: ControllerPorts = {
    resolve: () => readResolution(context, pythonExt),
    isTrusted: () => vscode.workspace.isTrusted,
    launch: (server) => launcher.launch(server),
    stop: () => launcher.stop(),
    showError,
    log: (line) => serverLog.info(line),
  };
  const ctl = new ServerController(ports);
  controller = ctl;
  ctl.onDidChangeState((state) => {
    if (state !== 'running' && state !== 'starting') {
      runLog.serverStopped();
    }
    status.text = { stopped: 'Quiver: stopped', starting: 'Quiver: starting', running: 'Quiver', failed: 'Quiver: server failed' }[state];
    status.severity = state === 'failed' ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
    status.busy = state === 'starting';
    status.command =
      state === 'failed'
        ? { title: 'Restart', command: 'quiver.client.restartServer' }
        : { title: 'Show Log', command: 'quiver.client.showServerLog' };
  });

  /**
   * The running client, starting the server if it was never started; undefined when
   * it cannot run. A server that already failed is not retried here (its message was
   * shown); the user fixes the cause and restarts it.
   */
  const runningClient = async (): Promise<LanguageClient | undefined> => {
    if (ctl.state !== 'failed') {
      const state = await ctl.start();
      if (state === 'running' && launcher.client !== undefined) {
        return launcher.client;
      }
      if (state === 'failed') {
        return undefined; // start() has just said why
      }
    }
    void vscode.window.showErrorMessage('Quiver: the language server is not running. Fix the cause shown earlier, then run "Quiver: Restart Server".', 'Show Server Log').then((c) => {
      if (c !== undefined) {
        serverLog.show();
      }
    });
    return undefined;
  };

  /** The .qv document to run: `resource` (from a menu) or the active editor's; undefined after saying why not. */
  const documentToRun = async (resource?: vscode.Uri): Promise<vscode.TextDocument | undefined> => {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage(RESTRICTED_RUN_MESSAGE);
      return undefined;
    }
    const editorDoc = vscode.window.activeTextEditor?.document;
    const doc =
      resource instanceof vscode.Uri && resource.toString() !== editorDoc?.uri.toString()
        ? await vscode.workspace.openTextDocument(resource)
        : editorDoc;
    if (doc === undefined || doc.languageId !== 'quiver') {
      void vscode.window.showInformationMessage('Quiver: open a .qv file to run it.');
      return undefined;
    }
    if (doc.isUntitled) {
      void vscode.window.showInformationMessage('Quiver: save the file before running it.');
      return undefined;
    }
    return doc;
  };

  /** Runs the document's main with `programArgs` (after `--` on the runner's command line). */
  const runDocument = async (doc: vscode.TextDocument, programArgs: string[]): Promise<void> => {
    if (doc.isDirty && vscode.workspace.getConfiguration('quiver').get<boolean>('run.saveBeforeRun', true)) {
      await doc.save();
    }
    const client = await runningClient();
    if (client === undefined) {
      return;
    }
    // The run needs quiver-lang[torch] in the selected interpreter: ask it first (a few ms).
    const python = runPython(launcher.server);
    if (python !== undefined && !mayExecute(python, 'Run File', serverLog)) {
      return;
    }
    if (python !== undefined) {
      const missing = await probeRuntime(python);
      if (missing !== undefined && missing.length > 0) {
        serverLog.info(`Run File: ${python.join(' ')} lacks ${missing.join(', ')}.`);
        offerInstall(python, missing);
        return;
      }
    }
    const uri = doc.uri.toString();
    try {
      const result = (await client.sendRequest(ExecuteCommandRequest.type, {
        command: SERVER_RUN_FILE,
        arguments: runFileArguments(uri, programArgs),
      })) as { runId?: string } | null;
      if (result && typeof result.runId === 'string') {
        runLog.requested(uri, result.runId);
      }
    } catch (error) {
      runLog.note(`Quiver: the server could not start the run: ${error instanceof Error ? error.message : String(error)}`);
      runChannel.show(true);
    }
  };

  const runFile = async (resource?: vscode.Uri): Promise<void> => {
    const doc = await documentToRun(resource);
    if (doc !== undefined) {
      await runDocument(doc, settingArgs(doc.uri.toString()));
    }
  };

  const runFileWithArgs = async (resource?: vscode.Uri): Promise<void> => {
    const doc = await documentToRun(resource);
    if (doc === undefined) {
      return;
    }
    const uri = doc.uri.toString();
    const remembered = context.workspaceState.get<Record<string, string[]>>(LAST_ARGS_KEY, {});
    const typed = await vscode.window.showInputBox({
      title: `Run ${vscode.workspace.asRelativePath(doc.uri)} with arguments`,
      prompt: 'Arguments of main, split as a shell would (for fn main(lr: Float = 3e-4, steps: Int = 100): --lr 1e-3 --steps 10)',
      placeHolder: '--lr 1e-3 --steps 10',
      value: promptValue(Array.isArray(remembered[uri]) ? remembered[uri] : undefined, settingArgs(uri)),
      ignoreFocusOut: true,
      validateInput: (text) => {
        const r = splitArgs(text);
        return r.ok ? undefined : r.error;
      },
    });
    if (typed === undefined) {
      return; // cancelled
    }
    const split = splitArgs(typed);
    if (!split.ok) {
      return;
    }
    await context.workspaceState.update(LAST_ARGS_KEY, rememberArgs(remembered, uri, split.args));
    await runDocument(doc, split.args);
  };

  const stopRun = async (): Promise<void> => {
    const run = runLog.runToStop(vscode.window.activeTextEditor?.document.uri.toString());
    if (run === undefined) {
      void vscode.window.showInformationMessage('Quiver: no run is in progress.');
      return;
    }
    const client = launcher.client;
    if (client === undefined || !client.isRunning()) {
      return;
    }
    try {
      await client.sendRequest(ExecuteCommandRequest.type, { command: SERVER_STOP_RUN, arguments: [run.runId] });
    } catch (error) {
      runLog.note(`Quiver: could not stop ${run.name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };

  // Debug Quiver File and the `quiver` debug type (debug.ts): debugpy runs in the interpreter Run File uses
  registerDebugging(context, () => runPython(launcher.server)?.[0], (argv) => mayExecute(argv, 'the debugger', serverLog));
  context.subscriptions.push(
    vscode.commands.registerCommand('quiver.client.runFile', runFile),
    vscode.commands.registerCommand('quiver.client.runFileWithArgs', runFileWithArgs),
    vscode.commands.registerCommand('quiver.client.showMetrics', () => metrics.show()),
    vscode.commands.registerCommand('quiver.client.stopRun', stopRun),
    vscode.commands.registerCommand('quiver.client.restartServer', () => ctl.restart()),
    vscode.commands.registerCommand('quiver.client.installRuntime', () => installRuntime()),
    vscode.commands.registerCommand('quiver.client.showOutput', () => runChannel.show()),
    vscode.commands.registerCommand('quiver.client.showServerLog', () => serverLog.show()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (SERVER_SETTINGS.some((s) => e.affectsConfiguration(s))) {
        serverLog.info('The settings that choose the server changed; restarting the language server.');
        void ctl.restart();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      serverLog.info('The workspace is now trusted; restarting the language server.');
      void ctl.restart();
    }),
  );

  // A new interpreter selected in the Python extension: the server (and Run File) follow it.
  void pythonExt
    .onDidChange(() => {
      if ((vscode.workspace.getConfiguration('quiver').get<string[]>('interpreter') ?? []).some((x) => x.trim() !== '')) {
        return; // quiver.interpreter wins over the Python extension's choice
      }
      serverLog.info("The Python extension's selected interpreter changed; restarting the language server.");
      void ctl.restart();
    })
    .then((subscription) => {
      if (subscription !== undefined) {
        context.subscriptions.push({ dispose: () => void subscription.dispose() });
      }
    });

  void vscode.commands.executeCommand('setContext', 'quiver.runActive', false);
  void ctl.start(); // activation does not wait for the server
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
}
