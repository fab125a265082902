// Debugging .qv files (docs/debugging.md): the `quiver` debug type and the
// "Debug Quiver File" command. Quiver's compiled code runs at .qv lines under
// the .qv path, so debugpy (the Python extension's debugger) debugs it as it
// is; this file only starts debugpy's own debug adapter (`python -m
// debugpy.adapter`, from the interpreter Run File uses) and
// hands it a launch of `quiver debug FILE` (module quiver.cli). No other
// extension is needed.

import * as path from 'path';
import * as vscode from 'vscode';
import { DEBUG_TYPE, debugpyLaunch, QuiverLaunch } from './debugLaunch';

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
        'Quiver: no Python interpreter to debug with; set "python" in the launch configuration, or quiver.interpreter.',
      );
      return undefined;
    }
    return debugpyLaunch(launch, python) as vscode.DebugConfiguration;
  }
}

class AdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly mayExecute: (argv: string[]) => boolean) {}

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const python = (session.configuration.python as string[] | undefined)?.[0];
    // Restricted Mode: never a Python inside the workspace, whatever started the session
    if (!python || !this.mayExecute([python, '-m', 'debugpy.adapter'])) {
      return undefined;
    }
    return new vscode.DebugAdapterExecutable(python, ['-m', 'debugpy.adapter']);
  }
}

/** Registers the `quiver` debug type and the Debug Quiver File command. */
export function registerDebugging(
  context: vscode.ExtensionContext,
  python: () => string | undefined,
  mayExecute: (argv: string[]) => boolean,
): void {
  context.subscriptions.push(
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, new Provider(python)),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, new AdapterFactory(mayExecute)),
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
