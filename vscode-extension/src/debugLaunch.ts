// The `quiver` debug configuration made into debugpy's launch request (pure: no
// VS Code import, tested in test/unit/debugLaunch.test.ts); debug.ts uses it.

import * as path from 'path';

export const DEBUG_TYPE = 'quiver';

/** A `quiver` launch configuration as launch.json writes it. */
export interface QuiverLaunch {
  type?: string;
  request?: string;
  name?: string;
  [key: string]: unknown;
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

