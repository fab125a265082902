import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CPU_BUILD_ARGS, installCommand, installPipArgs, installSpecArgs, missingRuntimeMessage, parseProbe, PROBE_ARGS, runLacksRuntime } from '../../src/runtimeInstall';

describe("Run File's runtime", () => {
  it('recognises the CLI hint (exit 2) and a Python without Quiver (exit 1), nothing else', () => {
    assert.equal(runLacksRuntime(2, "quiver run needs torch, which is not installed: pip install 'quiver-lang[torch]'\n"), true);
    assert.equal(
      runLacksRuntime(
        2,
        "quiver run needs torch, which is not installed: pip install 'quiver-lang[torch]' --extra-index-url https://download.pytorch.org/whl/cpu (torch's CPU build, about 1 GB), or without --extra-index-url torch's default build (on Linux with its CUDA libraries, several GB)\n",
      ),
      true,
    );
    assert.equal(runLacksRuntime(1, '/usr/bin/python3: No module named quiver\n'), true);
    assert.equal(runLacksRuntime(1, "ModuleNotFoundError: No module named 'quiver'"), true);
    assert.equal(runLacksRuntime(1, "ModuleNotFoundError: No module named 'quiverish'"), false);
    assert.equal(runLacksRuntime(1, 'error[E0203]: shape mismatch'), false);
    assert.equal(runLacksRuntime(2, 'error[E0203]: shape mismatch'), false);
    assert.equal(runLacksRuntime(0, "pip install 'quiver-lang[torch]'"), false);
  });

  it('installs quiver.installSpec with the interpreter and its leading arguments', () => {
    assert.deepEqual(installSpecArgs(undefined), ['quiver-lang[torch]']);
    assert.deepEqual(installSpecArgs('  '), ['quiver-lang[torch]']);
    assert.deepEqual(installSpecArgs('/tmp/dist/quiver_lang-0.1.0-py3-none-any.whl[torch]'), ['/tmp/dist/quiver_lang-0.1.0-py3-none-any.whl[torch]']);
    assert.deepEqual(installSpecArgs("-e '/my checkout[torch]'"), ['-e', '/my checkout[torch]']);
    assert.deepEqual(installCommand(['/py', '-X', 'utf8'], ['quiver-lang[torch]']), { command: '/py', args: ['-X', 'utf8', '-m', 'pip', 'install', 'quiver-lang[torch]'] });
    assert.match(missingRuntimeMessage('/usr/bin/python3', ['quiver', 'torch']), /^Quiver: Run File runs programs with \/usr\/bin\/python3, which lacks Quiver's runtime \(missing: quiver, torch\)/);
  });

  it('quiver.installPipArgs goes to pip after the spec, and the offer says which torch it installs', () => {
    assert.deepEqual(CPU_BUILD_ARGS, ['--extra-index-url', 'https://download.pytorch.org/whl/cpu']);
    assert.deepEqual(installPipArgs(undefined), []);
    assert.deepEqual(installPipArgs('--extra-index-url x'), []);
    assert.deepEqual(installPipArgs([...CPU_BUILD_ARGS, 3, '']), CPU_BUILD_ARGS);
    assert.deepEqual(installCommand(['/py'], ['quiver-lang[torch]'], CPU_BUILD_ARGS), {
      command: '/py',
      args: ['-m', 'pip', 'install', 'quiver-lang[torch]', '--extra-index-url', 'https://download.pytorch.org/whl/cpu'],
    });
    const plain = missingRuntimeMessage('/py', ['torch'], ['quiver-lang[torch]']);
    assert.match(plain, /Install quiver-lang\[torch\] into it \(torch's default build: on Linux with its CUDA libraries, several GB; for the CPU build, about 1 GB, set quiver\.installPipArgs to \["--extra-index-url", "https:\/\/download\.pytorch\.org\/whl\/cpu"\]\)/);
    const cpu = missingRuntimeMessage('/py', ['torch'], ['quiver-lang[torch]', ...CPU_BUILD_ARGS]);
    assert.match(cpu, /Install quiver-lang\[torch\] into it \(torch's CPU build, about 1 GB\), or choose/);
  });

  it('the probe names the missing modules of a real Python without importing them', () => {
    // -S: no site-packages, so the Python sees only the standard library and PYTHONPATH,
    // where torch and tqdm are stand-ins that would fail if imported.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quiver-probe-'));
    for (const m of ['torch', 'tqdm']) {
      fs.mkdirSync(path.join(dir, m));
      fs.writeFileSync(path.join(dir, m, '__init__.py'), 'raise SystemExit("imported")\n');
    }
    let out: string | undefined;
    try {
      out = execFileSync('python3', ['-S', ...PROBE_ARGS], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', PYTHONPATH: dir } });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw error;
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    if (out !== undefined) {
      assert.deepEqual(parseProbe(out), ['quiver', 'numpy', 'safetensors']);
    }
    assert.deepEqual(parseProbe('torch numpy\n'), ['torch', 'numpy']);
    assert.deepEqual(parseProbe('\n'), []);
    assert.deepEqual(parseProbe('Traceback bogus'), []);
  });
});
