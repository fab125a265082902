// Debugging .qv files (docs/debugging.md): the `quiver` debug type and the
// "Debug Quiver File" command. Quiver's compiled code runs at .qv lines under
// the .qv path, so debugpy (the Python extension's debugger) debugs it as it
// is; this file only starts debugpy's own debug adapter (`python -m
// debugpy.adapter`, from the interpreter that runs the language server) and
// hands it a launch of `quiver debug FILE` (module quiver.cli). No other
// extension is needed.

import * as path from 'path';
import * as vscode from 'vscode';

export const DEBUG_TYPE = 'quiver';

/** A `quiver` launch configuration as launch.json writes it. */
export interface QuiverLaunch extends vscode.DebugConfiguration {
  program?: string;
  args?: string[];
  breakOnNaN?: boolean;
  python?: string;
  cwd?: string;
  stopOnEntry?: boolean;
}

/**
 * The debugpy launch request for a `quiver` configuration: debugpy runs
 * `python -m quiver.cli debug FILE [--break-on-nan] -- ARGS` in the debugged
 * process, attached from its start. Pure: tested without VS Code.
 */
export function debugpyLaunch(config: QuiverLaunch, python: string): Record<string, unknown> {
  // debugpy takes one of program/module/code: the .qv file is an argument of quiver.cli
  const { program: given, args: mainArgs, breakOnNaN, python: _python, ...rest } = config;
  const program = given ?? '';
  const args = ['debug', program, ...(breakOnNaN ? ['--break-on-nan'] : []), ...((mainArgs ?? []).length ? ['--', ...(mainArgs ?? [])] : [])];
  return {
    ...rest,
    type: DEBUG_TYPE,
    request: 'launch',
    name: config.name ?? `Debug ${path.basename(program)}`,
    module: 'quiver.cli',
    args,
    python: [python],
    cwd: config.cwd ?? path.dirname(program),
    console: 'internalConsole',
    justMyCode: true,
    // the runtime, the driver and the checker are library code (quiver debug adds the same rule itself)
    rules: [{ module: 'quiver', include: false }],
    showReturnValue: false,
    redirectOutput: true,
    stopOnEntry: config.stopOnEntry ?? false,
  };
}

class Provider implements vscode.DebugConfigurationProvider {
  constructor(private readonly python: () => string | undefined) {}

  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    return [{ type: DEBUG_TYPE, request: 'launch', name: 'Debug Quiver File', program: '${file}', args: [], breakOnNaN: false }];
  }

  resolveDebugConfiguration(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.DebugConfiguration | undefined {
    const launch = config as QuiverLaunch;
    if (!launch.type && !launch.request && !launch.name) {
      // F5 without a launch.json: the active .qv file
      const editor = vscode.window.activeTextEditor;
      if (editor?.document.languageId !== 'quiver') {
        return undefined;
      }
      launch.type = DEBUG_TYPE;
      launch.request = 'launch';
      launch.name = 'Debug Quiver File';
      launch.program = editor.document.uri.fsPath;
    }
    if (!launch.program) {
      void vscode.window.showErrorMessage('Quiver: a `quiver` debug configuration needs "program", the .qv file to debug.');
      return undefined;
    }
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showErrorMessage('Quiver: debugging runs code from this workspace; trust the workspace first.');
      return undefined;
    }
    const python = launch.python ?? this.python();
    if (!python) {
      void vscode.window.showErrorMessage(
        'Quiver: no Python interpreter to debug with; set "python" in the launch configuration or quiver.server.pythonPath.',
      );
      return undefined;
    }
    return debugpyLaunch(launch, python) as vscode.DebugConfiguration;
  }
}

class AdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const python = (session.configuration.python as string[] | undefined)?.[0];
    if (!python) {
      return undefined;
    }
    return new vscode.DebugAdapterExecutable(python, ['-m', 'debugpy.adapter']);
  }
}

/** Registers the `quiver` debug type and the Debug Quiver File command. */
export function registerDebugging(context: vscode.ExtensionContext, python: () => string | undefined): void {
  context.subscriptions.push(
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new Provider(python)),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new AdapterFactory()),
    vscode.commands.registerCommand('quiver.client.debugFile', async (resource?: vscode.Uri) => {
      const uri = resource ?? vscode.window.activeTextEditor?.document.uri;
      if (!uri || uri.scheme !== 'file') {
        void vscode.window.showErrorMessage('Quiver: Debug Quiver File needs a saved .qv file.');
        return;
      }
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      if (doc?.isDirty) {
        await doc.save();
      }
      const folder = vscode.workspace.getWorkspaceFolder(uri);
      const args = vscode.workspace.getConfiguration('quiver', uri).get<string[]>('run.args') ?? [];
      await vscode.debug.startDebugging(folder, {
        type: DEBUG_TYPE,
        request: 'launch',
        name: `Debug ${path.basename(uri.fsPath)}`,
        program: uri.fsPath,
        args,
      });
    }),
  );
}
