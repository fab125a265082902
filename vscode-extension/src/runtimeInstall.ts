// Run File needs Quiver's runtime (quiver-lang[torch]) in the selected interpreter,
// which the bundled server does not provide. Pure: how to probe for it, how to read
// a run that failed for want of it, and the command that installs it.

import { DEFAULT_INSTALL_SPEC } from './serverCommand';
import { splitArgs } from './args';

/** What `quiver run` imports: the base package and the torch extra. */
export const RUNTIME_MODULES = ['quiver', 'torch', 'numpy', 'safetensors', 'tqdm'];

/** Arguments for the interpreter that print the missing modules (found without importing them), space separated. */
export const PROBE_ARGS = [
  '-P',
  '-c',
  `import importlib.util as u\nm = []\nfor n in ${JSON.stringify(RUNTIME_MODULES)}:\n    try:\n        f = u.find_spec(n)\n    except (ImportError, ValueError):\n        f = None\n    if f is None:\n        m.append(n)\nprint(" ".join(m))`,
];

/** The modules the probe's output names as missing. */
export function parseProbe(stdout: string): string[] {
  return stdout
    .trim()
    .split(/\s+/)
    .filter((m) => RUNTIME_MODULES.includes(m));
}

/**
 * Whether a failed run failed because its interpreter lacks Quiver or its runtime:
 * the CLI's one-line hint ("... needs torch, which is not installed: pip install
 * 'quiver-lang[torch]'", exit code 2) or Python's "No module named quiver".
 */
export function runLacksRuntime(exitCode: number | null | undefined, output: string): boolean {
  if (exitCode === 2 && /quiver-lang\[torch\]/.test(output)) {
    return true;
  }
  return exitCode === 1 && /No module named '?quiver(\.cli)?'?(\s|$|;)/m.test(output);
}

/** `quiver.installSpec` split into pip arguments: the default, or the user's words (a wheel, `-e path`, ...). */
export function installSpecArgs(setting: unknown): string[] {
  if (typeof setting !== 'string' || setting.trim() === '') {
    return [DEFAULT_INSTALL_SPEC];
  }
  const split = splitArgs(setting);
  return split.ok && split.args.length > 0 ? split.args : [setting.trim()];
}

/**
 * pip's arguments that take torch from PyTorch's CPU index (its `+cpu` builds, about 1 GB
 * installed) and everything else from PyPI, as pytorch.org's install lines do. Without
 * them pip takes PyPI's torch, which on Linux is the build with CUDA's libraries (several GB).
 */
export const CPU_BUILD_ARGS = ['--extra-index-url', 'https://download.pytorch.org/whl/cpu'];

/** `quiver.installPipArgs`: more arguments for pip after the spec (strings only; anything else: none). */
export function installPipArgs(setting: unknown): string[] {
  return Array.isArray(setting) ? setting.filter((a): a is string => typeof a === 'string' && a !== '') : [];
}

/** The process that installs the runtime into `python` (argv: the executable and its leading arguments). */
export function installCommand(python: string[], spec: string[], extra: string[] = []): { command: string; args: string[] } {
  const [exe, ...lead] = python;
  return { command: exe, args: [...lead, '-m', 'pip', 'install', ...spec, ...extra] };
}

/** Which build of torch an install with pip arguments `pipArgs` gets, in words. */
export function torchBuild(pipArgs: string[]): string {
  if (pipArgs.some((a) => /download\.pytorch\.org\/whl\/cpu\/?$/.test(a))) {
    return "torch's CPU build, about 1 GB";
  }
  return "torch's default build: on Linux with its CUDA libraries, several GB; for the CPU build, about 1 GB, set quiver.installPipArgs to [\"--extra-index-url\", \"https://download.pytorch.org/whl/cpu\"]";
}

/** The message offering the install, for an interpreter that lacks `missing` (`pipArgs`: what pip would be given). */
export function missingRuntimeMessage(python: string, missing: string[], pipArgs: string[] = []): string {
  const what = missing.length > 0 ? ` (missing: ${missing.join(', ')})` : '';
  return `Quiver: Run File runs programs with ${python}, which lacks Quiver's runtime${what}. Install quiver-lang[torch] into it (${torchBuild(pipArgs)}), or choose another interpreter (quiver.interpreter or the Python extension's).`;
}

export const INSTALL_ACTION = 'Install quiver-lang[torch]';
