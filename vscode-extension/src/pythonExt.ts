// The Python extension's selected interpreter, as Microsoft's Python tool extensions
// (black-formatter, pylint, isort) read it: through the `environments` API that
// ms-python.python exports. Optional: without that extension (or with one whose API
// differs) everything here answers "nothing" and Quiver finds Python by itself.

/** The `environments` part of the Python extension's API that Quiver uses. */
export interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: unknown): { id: string; path: string } | undefined;
  resolveEnvironment(environment: { id: string; path: string } | string): PromiseLike<{ executable?: { uri?: { fsPath: string } } } | undefined>;
  onDidChangeActiveEnvironmentPath(listener: (event: unknown) => unknown): { dispose(): unknown };
}

/** What `vscode.extensions.getExtension('ms-python.python')` returns, as far as it matters here. */
export interface ExtensionLike {
  isActive: boolean;
  activate(): PromiseLike<unknown>;
  exports: unknown;
}

export const PYTHON_EXTENSION_ID = 'ms-python.python';
/** A Python extension that takes longer than this to activate is not waited for. */
export const ACTIVATE_TIMEOUT_MS = 15_000;

function isEnvironmentsApi(value: unknown): value is PythonEnvironmentsApi {
  const v = value as Partial<PythonEnvironmentsApi> | undefined;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.getActiveEnvironmentPath === 'function' &&
    typeof v.resolveEnvironment === 'function' &&
    typeof v.onDidChangeActiveEnvironmentPath === 'function'
  );
}

export class PythonExtensionInterpreter {
  private api: Promise<PythonEnvironmentsApi | undefined> | undefined;
  private subscribed = false;

  constructor(
    private readonly getExtension: () => ExtensionLike | undefined,
    private readonly log: (line: string) => void,
    private readonly timeoutMs = ACTIVATE_TIMEOUT_MS,
  ) {}

  /** The `environments` API, activating the Python extension first; undefined without it. */
  environments(): Promise<PythonEnvironmentsApi | undefined> {
    this.api ??= this.load();
    return this.api;
  }

  private async load(): Promise<PythonEnvironmentsApi | undefined> {
    const ext = this.getExtension();
    if (ext === undefined) {
      return undefined;
    }
    try {
      if (!ext.isActive) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), this.timeoutMs);
        });
        const outcome = await Promise.race([Promise.resolve(ext.activate()), timedOut]);
        clearTimeout(timer);
        if (outcome === 'timeout') {
          this.log(`The Python extension did not activate within ${this.timeoutMs / 1000} s; not using its interpreter.`);
          this.api = undefined; // try again at the next start
          return undefined;
        }
      }
    } catch (error) {
      this.log(`The Python extension failed to activate: ${String(error)}`);
      return undefined;
    }
    const environments = (ext.exports as { environments?: unknown } | undefined)?.environments;
    if (!isEnvironmentsApi(environments)) {
      this.log('The Python extension has no environments API that Quiver knows; not using its interpreter.');
      return undefined;
    }
    return environments;
  }

  /** The executable of the active environment for `resource`, or undefined. */
  async interpreter(resource?: unknown): Promise<string | undefined> {
    const api = await this.environments();
    if (api === undefined) {
      return undefined;
    }
    try {
      const active = api.getActiveEnvironmentPath(resource);
      if (active === undefined || !active.path) {
        return undefined;
      }
      const resolved = await api.resolveEnvironment(active);
      const exe = resolved?.executable?.uri?.fsPath;
      if (exe === undefined || exe === '') {
        this.log(`The Python extension's environment ${active.path} has no interpreter; not using it.`);
        return undefined;
      }
      return exe;
    } catch (error) {
      this.log(`Could not read the Python extension's environment: ${String(error)}`);
      return undefined;
    }
  }

  /**
   * Calls `listener` whenever the user selects another interpreter in the Python
   * extension. Subscribes once; does nothing without that extension.
   */
  async onDidChange(listener: () => void): Promise<{ dispose(): unknown } | undefined> {
    if (this.subscribed) {
      return undefined;
    }
    const api = await this.environments();
    if (api === undefined) {
      return undefined;
    }
    this.subscribed = true;
    return api.onDidChangeActiveEnvironmentPath(() => listener());
  }
}
