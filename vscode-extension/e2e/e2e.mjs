// End-to-end test of the packaged extension in real VS Code: code-server 4.100.3
// (VS Code 1.100.3) in Debian's Chromium, driven by playwright-core.
// Run through run-e2e.sh (make e2e), which installs the tools and builds the .vsix.
//
// Scenarios, each with a screenshot in .e2e/screenshots/:
//   language   the status bar shows the language of a .qv file
//   problems   the Problems panel lists the diagnostic (code Exxxx) of broken.qv
//   hover      a hover on the gradient `g` in train_step shows Grad[Mlp]'s fields
//   run        Run File on the clean example streams the training output
//   bad-python a server Python without Quiver gives one message (bad-python-message.png);
//              fixing the setting recovers (bad-python.png)
//
// Environment: QUIVER_E2E_SERVER=real (default: the repo's .venv, python -m quiver.server)
// or stub (test/stub-server, only to exercise this harness).

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const EXT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = path.resolve(EXT, '..');
const E2E = path.join(EXT, '.e2e');
const TOOLS = path.join(E2E, 'tools');
const RUN = path.join(E2E, 'run');
const SHOTS = path.join(E2E, 'screenshots');
const MODE = process.env.QUIVER_E2E_SERVER ?? 'real';
const VSIX = process.env.QUIVER_VSIX ?? path.join(EXT, `quiver-${JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8')).version}.vsix`);
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const VENV_PYTHON = path.join(ROOT, '.venv', 'bin', 'python');
const STUB = path.join(EXT, 'test', 'stub-server', 'stub_quiver_server.py');
const CODE_SERVER = path.join(TOOLS, 'node_modules', '.bin', 'code-server');
const { chromium } = createRequire(path.join(TOOLS, 'package.json'))('playwright-core');

/** The error introduced into the copy of examples/mlp.qv: the output layer uses w1 ([D H]) on h ([b H]). */
const CLEAN_LINE = '    return h @ m.w2 + m.b2';
const BROKEN_LINE = '    return h @ m.w1 + m.b2';
const DIAGNOSTIC_CODE = /\b[EW]\d{4}\b/;

const results = [];
const started = Date.now();
const log = (...a) => console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitUntil(what, fn, timeoutMs, intervalMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) {
        return last;
      }
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

function prepareWorkspace() {
  fs.rmSync(RUN, { recursive: true, force: true });
  fs.rmSync(SHOTS, { recursive: true, force: true });
  const ws = path.join(RUN, 'workspace');
  const userData = path.join(RUN, 'user-data');
  const extensions = path.join(RUN, 'extensions');
  for (const d of [ws, path.join(userData, 'User'), extensions, SHOTS]) {
    fs.mkdirSync(d, { recursive: true });
  }
  const example = fs.readFileSync(path.join(ROOT, 'examples', 'mlp.qv'), 'utf8');
  if (!example.includes(CLEAN_LINE)) {
    throw new Error(`examples/mlp.qv no longer contains "${CLEAN_LINE.trim()}"; update BROKEN_LINE in e2e.mjs`);
  }
  fs.writeFileSync(path.join(ws, 'mlp.qv'), example);
  fs.writeFileSync(path.join(ws, 'broken.qv'), example.replace(CLEAN_LINE, BROKEN_LINE));
  if (MODE === 'real') {
    // The default server resolution: the workspace's own .venv.
    fs.symlinkSync(path.join(ROOT, '.venv'), path.join(ws, '.venv'));
  }
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(userSettings(), null, 2));
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify(remoteSettings({}), null, 2));
  return { ws, userData, extensions };
}

/** The browser's user settings: a quiet workbench, and nothing that edits while the test types. */
function userSettings() {
  return {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'security.workspace.trust.enabled': false,
    'editor.hover.delay': 200,
    'editor.minimap.enabled': false,
    'files.hotExit': 'off',
    'window.restoreWindows': 'none',
    'chat.commandCenter.enabled': false,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'git.openRepositoryInParentFolders': 'never',
    'editor.autoClosingBrackets': 'never',
    'editor.autoClosingQuotes': 'never',
    'editor.autoIndent': 'none',
    'editor.formatOnType': false,
  };
}

/** The remote (machine) settings, where the quiver.server settings apply in code-server. */
function remoteSettings(extra) {
  return { ...(MODE === 'stub' ? { 'quiver.server.command': [VENV_PYTHON, STUB] } : {}), ...extra };
}

async function startCodeServer({ ws, userData, extensions }) {
  log('installing', path.relative(EXT, VSIX));
  const out = execFileSync(CODE_SERVER, ['--install-extension', VSIX, '--force', '--user-data-dir', userData, '--extensions-dir', extensions], { encoding: 'utf8' });
  if (!/was successfully installed/.test(out)) {
    throw new Error(`installing the .vsix failed:\n${out}`);
  }
  const port = await freePort();
  const logFile = fs.openSync(path.join(RUN, 'code-server.log'), 'w');
  const proc = spawn(
    CODE_SERVER,
    [
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--config', path.join(RUN, 'code-server.yaml'),
      '--user-data-dir', userData,
      '--extensions-dir', extensions,
      ws,
    ],
    { stdio: ['ignore', logFile, logFile], detached: true },
  );
  await waitUntil('code-server to listen', () => fs.readFileSync(path.join(RUN, 'code-server.log'), 'utf8').includes('HTTP server listening'), 60_000);
  return { proc, url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}` };
}

// ------------------------------------------------------------------ workbench helpers

class Workbench {
  constructor(page) {
    this.page = page;
  }

  async shot(name) {
    await this.page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  }

  /**
   * Opens a quick input with `prefixKey`, types `text`, and picks the row whose first
   * line is `rowLabel` (by clicking it: Enter would take the top row, which may be a
   * recently used look-alike), or presses Enter when no label is given.
   */
  async quickInput(prefixKey, text, rowLabel) {
    const page = this.page;
    await page.keyboard.press('Escape');
    await page.keyboard.press(prefixKey);
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(text);
    if (rowLabel === undefined) {
      await page.keyboard.press('Enter');
      return;
    }
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    const matches = (t) => {
      const first = t.split('\n')[0].trim();
      return rowLabel instanceof RegExp ? rowLabel.test(first) : first.toLowerCase() === rowLabel.toLowerCase();
    };
    let seen = [];
    let previous = -1;
    // The list re-renders while it filters: take the row once it stays in place.
    const index = await waitUntil(`a quick-pick row "${rowLabel}"`, async () => {
      seen = await rows.allInnerTexts();
      const i = seen.findIndex(matches);
      const stable = i >= 0 && i === previous;
      previous = i;
      return stable ? i + 1 : false;
    }, 15_000, 300).catch((e) => {
      throw new Error(`${e.message}; rows: ${seen.map((t) => t.split('\n')[0]).join(' | ')}`);
    });
    await rows.nth(index - 1).click({ timeout: 5000 });
  }

  /** Runs a command from the palette: types `typed`, picks the row `title` (a string, or a RegExp for titles that vary). */
  async command(title, typed = title) {
    await this.quickInput('F1', `>${typed}`, title);
  }

  async openFile(name) {
    await this.quickInput('Control+P', name, name);
    await waitUntil(`${name} to be the active editor`, async () => {
      const label = await this.page.locator('.tabs-container .tab.active').getAttribute('aria-label');
      return label?.startsWith(name);
    }, 15_000);
  }

  async gotoLine(line, col) {
    await this.quickInput('Control+G', `:${line}:${col}`);
    await this.page.waitForTimeout(300);
  }

  async statusBarLanguage() {
    return (await this.page.locator('[id="status.editor.mode"]').innerText()).trim();
  }

  async problemRows() {
    return (await this.page.locator('.markers-panel .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  }

  /**
   * Every notification message so far, from the notification center (toasts hide on
   * Escape, which the helpers press). Leaves the center open when `keepOpen`.
   */
  async notifications(keepOpen = false) {
    await this.command('Notifications: Show Notifications');
    await this.page.waitForTimeout(300);
    const items = await this.page.locator('.notifications-center .notification-list-item').allInnerTexts();
    if (!keepOpen) {
      await this.page.keyboard.press('Escape');
    }
    return items.map((t) => {
      const lines = t.split('\n').map((l) => l.trim()).filter((l) => l !== '');
      return lines.find((l) => /^Quiver:/.test(l)) ?? lines[lines.length - 1] ?? '';
    });
  }

  async outputText() {
    // Monaco renders spaces as no-break spaces.
    return (await this.page.locator('.output-view .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
  }

  /**
   * Replaces the remote (machine) settings the way a user would, in their JSON editor:
   * code-server does not notice the file being rewritten behind its back. The
   * quiver.server settings are machine-overridable, so in a remote window such as
   * code-server's they live in the remote settings, not the browser's user settings.
   */
  async setRemoteSettings(settings) {
    await this.command(/^Preferences: Open Remote Settings \(JSON\)/, 'Preferences: Open Remote Settings (JSON)');
    await waitUntil('settings.json to be the active editor', async () => {
      const label = await this.page.locator('.tabs-container .tab.active').getAttribute('aria-label');
      return label?.startsWith('settings.json');
    }, 15_000);
    await this.page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
    await this.page.keyboard.press('Control+A');
    // One line, and (see userSettings) no auto-closing or auto-indent to fight with.
    await this.page.keyboard.insertText(JSON.stringify(settings));
    // Whatever the editor closed for us (a bracket, a quote) lies after the cursor.
    await this.page.keyboard.press('Shift+Control+End');
    await this.page.keyboard.press('Delete');
    await this.page.keyboard.press('Control+S');
    await this.page.waitForTimeout(500);
    await this.command('View: Close Editor');
  }
}

async function scenario(name, wb, fn) {
  const t0 = Date.now();
  log(`--- ${name}`);
  try {
    const detail = await fn();
    await wb.shot(name);
    results.push({ name, ok: true, seconds: (Date.now() - t0) / 1000, detail });
    log(`PASS ${name}${detail ? `: ${detail}` : ''}`);
  } catch (error) {
    results.push({ name, ok: false, seconds: (Date.now() - t0) / 1000, detail: String(error?.message ?? error) });
    log(`FAIL ${name}: ${error?.message ?? error}`);
    await wb.shot(`${name}-FAILED`).catch(() => undefined);
  }
}

function lineCol(text, needle, offsetInNeedle = 0) {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  if (i < 0) {
    throw new Error(`"${needle}" not found`);
  }
  return { line: i + 1, col: lines[i].indexOf(needle) + offsetInNeedle + 1 };
}

// ------------------------------------------------------------------ main

async function main() {
  log(`server: ${MODE === 'real' ? `${VENV_PYTHON} -m quiver.server (via the workspace .venv)` : `STUB ${path.relative(ROOT, STUB)}`}`);
  const dirs = prepareWorkspace();
  const cs = await startCodeServer(dirs);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const wb = new Workbench(page);
  try {
    await page.goto(cs.url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await waitUntil('the explorer to list broken.qv', async () => (await page.locator('.explorer-folders-view .monaco-list-row').allInnerTexts()).some((t) => t.includes('broken.qv')), 60_000);
    log('workbench loaded');

    await scenario('language', wb, async () => {
      await wb.openFile('broken.qv');
      const lang = await waitUntil('the status bar to show Quiver', async () => ((await wb.statusBarLanguage()) === 'Quiver' ? 'Quiver' : false), 30_000);
      return `status bar language: ${lang}`;
    });

    await scenario('problems', wb, async () => {
      await wb.command('Problems: Focus on Problems View');
      const row = await waitUntil('a Problems row with a diagnostic code', async () => (await wb.problemRows()).find((r) => DIAGNOSTIC_CODE.test(r)), 90_000);
      const broken = fs.readFileSync(path.join(dirs.ws, 'broken.qv'), 'utf8');
      const { line } = lineCol(broken, BROKEN_LINE.trim());
      if (!row.includes(`Ln ${line},`) && !row.includes(`[${line},`)) {
        throw new Error(`the diagnostic is not on line ${line} (the introduced error): ${row}`);
      }
      return `${row.match(DIAGNOSTIC_CODE)[0]} — ${row}`;
    });

    await scenario('hover', wb, async () => {
      await wb.openFile('mlp.qv');
      const text = fs.readFileSync(path.join(dirs.ws, 'mlp.qv'), 'utf8');
      const { line, col } = lineCol(text, 'lr * g.w1', 'lr * '.length);
      await wb.gotoLine(line, col);
      const hover = await waitUntil('a hover with the Grad fields', async () => {
        await page.keyboard.press('Escape');
        await page.keyboard.press('Control+K');
        await page.keyboard.press('Control+I');
        const h = page.locator('.monaco-hover:not(.hidden) .monaco-hover-content, .monaco-hover:not(.hidden) .hover-contents').first();
        await h.waitFor({ state: 'visible', timeout: 3000 });
        const t = (await h.innerText()).replace(/\s+/g, ' ');
        return /Grad/.test(t) && ['w1', 'b1', 'w2', 'b2'].every((f) => new RegExp(`\\b${f}\\b`).test(t)) ? t : false;
      }, 60_000, 1000);
      await page.waitForTimeout(500); // let the hover finish fading in for the screenshot
      return `hover on g at ${line}:${col}: ${hover.slice(0, 200)}`;
    });

    await scenario('run', wb, async () => {
      await page.keyboard.press('Escape');
      const runButton = page.locator('.editor-actions .action-label[aria-label^="Run File"], .editor-actions .action-label[aria-label^="Quiver: Run File"]').first();
      let how = 'editor title button';
      try {
        await runButton.waitFor({ state: 'visible', timeout: 10_000 });
        await runButton.click();
      } catch {
        how = 'command palette (no editor title button found)';
        await wb.command('Quiver: Run File');
      }
      await waitUntil('the Quiver Run output to start', async () => /Running mlp\.qv/.test(await wb.outputText()), 60_000);
      await wb.command('View: Toggle Maximized Panel').catch(() => undefined);
      const seen = new Set();
      await waitUntil('training output and the end of the run', async () => {
        const t = await wb.outputText();
        for (const l of t.split('\n')) {
          seen.add(l.trim());
        }
        return [...seen].some((l) => /mlp\.qv (finished|failed|stopped|timed out)/.test(l));
      }, 300_000, 500);
      const all = [...seen];
      const step0 = all.find((l) => /step 0 loss/.test(l));
      const end = all.find((l) => /mlp\.qv (finished|failed|stopped|timed out)/.test(l));
      await wb.command('View: Toggle Maximized Panel').catch(() => undefined);
      if (!step0) {
        throw new Error(`no "step 0 loss" line in the output; saw: ${all.join(' | ').slice(0, 800)}`);
      }
      if (!/finished/.test(end)) {
        throw new Error(`the run did not finish cleanly: ${end}`);
      }
      return `via ${how}: "${step0}" … "${end}"`;
    });

    await scenario('bad-python', wb, async () => {
      const badPython = findPythonWithoutQuiver();
      if (badPython === undefined) {
        return 'skipped: every python3 on this machine has Quiver installed';
      }
      await wb.command('Notifications: Clear All Notifications');
      const bad = MODE === 'real' ? { 'quiver.server.pythonPath': badPython } : { 'quiver.server.command': [badPython, '-m', 'quiver.server'] };
      await wb.setRemoteSettings(remoteSettings(bad));
      const message = await waitUntil('one error message about the server', async () => (await wb.notifications()).find((n) => /^Quiver:/.test(n)), 60_000, 1000);
      await page.waitForTimeout(5000); // anything stacking up would show by now
      const quiverToasts = (await wb.notifications(true)).filter((n) => /quiver|server|connection/i.test(n));
      await wb.shot('bad-python-message');
      await page.keyboard.press('Escape');
      if (quiverToasts.length !== 1) {
        throw new Error(`expected exactly one message, got ${quiverToasts.length}: ${quiverToasts.join(' || ')}`);
      }
      if (!/has no Quiver language server/.test(message)) {
        throw new Error(`the message does not say what is wrong: ${message}`);
      }
      // Fix the cause: the server restarts on the settings change and diagnostics come back.
      await wb.command('Notifications: Clear All Notifications');
      await wb.setRemoteSettings(remoteSettings({}));
      await wb.openFile('broken.qv');
      await wb.command('Problems: Focus on Problems View');
      await waitUntil('diagnostics after the fix', async () => (await wb.problemRows()).some((r) => DIAGNOSTIC_CODE.test(r)), 90_000);
      const after = (await wb.notifications()).filter((n) => /^Quiver:/.test(n));
      if (after.length > 0) {
        throw new Error(`messages after the fix: ${after.join(' || ')}`);
      }
      return `one message: "${message.slice(0, 160)}…"; recovered after the setting was fixed`;
    });
  } finally {
    copyOutputLogs(dirs.userData);
    await browser.close().catch(() => undefined);
    try {
      process.kill(-cs.proc.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

/** A python3 on PATH that cannot import quiver, for the bad-input scenario. */
function findPythonWithoutQuiver() {
  for (const candidate of ['python3', '/usr/bin/python3']) {
    try {
      const exe = execFileSync(candidate, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
      try {
        execFileSync(exe, ['-c', 'import quiver.server'], { stdio: 'ignore' });
      } catch {
        return exe;
      }
    } catch {
      // not there
    }
  }
  return undefined;
}

/** VS Code keeps every output channel in the logs folder: keep the Quiver ones with the results. */
function copyOutputLogs(userData) {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        walk(p);
      } else if (/Quiver/.test(e.name)) {
        found.push(p);
      }
    }
  };
  try {
    walk(path.join(userData, 'logs'));
  } catch {
    return;
  }
  for (const f of found) {
    fs.copyFileSync(f, path.join(RUN, path.basename(f).replace(/^\d+-/, '')));
  }
}

const watchdog = setTimeout(() => {
  console.error('e2e: gave up after 9 minutes');
  process.exit(2);
}, 9 * 60_000);

main()
  .catch((error) => {
    results.push({ name: 'setup', ok: false, detail: String(error?.stack ?? error) });
    log(`FAIL setup: ${error?.stack ?? error}`);
  })
  .finally(() => {
    clearTimeout(watchdog);
    const passed = results.filter((r) => r.ok).length;
    const failed = results.length - passed;
    fs.mkdirSync(RUN, { recursive: true });
    fs.writeFileSync(path.join(RUN, 'results.json'), JSON.stringify({ mode: MODE, results }, null, 2));
    console.log(`\ne2e (${MODE} server): screenshots in ${path.relative(process.cwd(), SHOTS) || SHOTS}`);
    for (const r of results) {
      console.log(`  ${r.ok ? 'PASS' : 'FAIL'} ${r.name}${r.detail ? ` — ${r.detail}` : ''}`);
    }
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 && passed > 0 ? 0 : 1);
  });
