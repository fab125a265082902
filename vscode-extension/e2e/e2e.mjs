// End-to-end test of the packaged extension in real VS Code: code-server 4.100.3
// (VS Code 1.100.3) in Debian's Chromium, driven by playwright-core.
// Run through run-e2e.sh (make e2e), which installs the tools and builds the .vsix.
//
// Scenarios, each with a screenshot in .e2e/screenshots/. A trusted workspace whose
// .venv is the repo's (the default server resolution):
//   language   the status bar shows the language of a .qv file
//   problems   the Problems panel lists the diagnostic (code Exxxx) of broken.qv, on
//              the line where the error was introduced
//   hover      a hover on the gradient `g` in train_step shows Grad[Mlp]'s fields
//   format-on-save  saving messy.qv formats it (the extension's [quiver] defaults and the
//              server's formatting): the file on disk is what `quiver fmt` makes of it
//   run        Run File (editor title button) on the clean example streams the
//              training output into the Quiver Run channel
//   stop       the editor title's Stop Run button stops a long run of long.qv
//   metrics    Run File on metrics.qv (mlp.qv logging its loss every step through an
//              extern fn that writes the runner's metrics lines) opens the Run Metrics
//              panel by itself, whose chart ends with all 30 points and the run's
//              state; the chart alone is saved as screenshots/metrics-chart.png
//   bad-server a missing Python, a server that crashes at start, and a Python without
//              Quiver each give exactly one message (bad-server-*.png); fixing the
//              setting brings diagnostics back (bad-server.png)
//   multi-file layers.qv and train.qv (which imports it) open: a param renamed in
//              layers.qv, unsaved, gives train.qv an error in the Problems panel, undone
//              it goes; a rename (F2) of `forward` in train.qv edits both files
//   notebook   cells.ipynb: two Quiver cells around a Python cell, checked together;
//              the second cell's E0201 shows in the Problems panel at its own line, and a
//              hover on `apply` there shows the fn the first cell declares
// Then the same files in a trusted workspace with no .venv, code-server's PATH holding
// only Pythons without Quiver (the system /usr/bin/python3): the bundled server only.
//   bundled-diagnostics  broken.qv's diagnostic shows, served by the bundled libraries run
//              by /usr/bin/python3; the time from opening the file to the first
//              diagnostic is measured (first-diagnostics.json)
//   install-offer  Run File with that interpreter offers "Install quiver-lang[torch]"
//              (not clicked: it would install into the system Python)
//   run-interpreter  quiver.interpreter set to the repo's .venv Python: Run File runs
//              mlp.qv with it (its torch), the bundled server still serving
//   install-action  quiver.interpreter set to a new venv without Quiver (its torch from the
//              repo's .venv): Run File offers the install, "Install quiver-lang[torch]"
//              installs quiver.installSpec (a wheel of this checkout) in a task, and Run
//              File then trains with that interpreter
// Then the same files in Restricted Mode (an untrusted workspace whose settings point
// the server elsewhere), with the server set in the user's (remote) settings:
//   restricted diagnostics and hovers work, Run File is offered nowhere, and the
//              workspace's server settings were ignored
// Then Restricted Mode with hostile user-level settings (real server only): the user's
// quiver.interpreter and quiver.server.pythonPath name ${workspaceFolder}/.venv/bin/python,
// a script that would write a marker file; code-server's PATH as in the bundled session.
//   restricted-hostile  diagnostics come from the bundled server run by /usr/bin/python3,
//              the marker was never written, and the Quiver log names both settings as
//              ignored
//
// QUIVER_E2E_SESSIONS=restricted-hostile (a comma-separated list of trusted, bundled,
// restricted, restricted-hostile) runs only those sessions; all of them by default.
//
// Environment: QUIVER_E2E_SERVER=real (default: the repo's .venv, python -m quiver.server)
// or stub (test/stub-server, only to exercise this harness); QUIVER_E2E_ROOT=<checkout>
// to take the .venv and examples/ from another Quiver checkout.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const EXT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The Quiver checkout whose .venv serves and whose examples/mlp.qv is opened:
// this repository, unless QUIVER_E2E_ROOT names another checkout (e.g. a branch's).
const ROOT = path.resolve(process.env.QUIVER_E2E_ROOT ?? path.join(EXT, '..'));
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
const DIAGNOSTIC_CODE = /\bE\d{4}\b/;

/** The sessions to run (QUIVER_E2E_SESSIONS), all when unset. */
const SESSIONS = (process.env.QUIVER_E2E_SESSIONS ?? 'trusted,bundled,restricted,restricted-hostile').split(',').map((s) => s.trim());
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

/** A fresh workspace and user-data folder for one code-server session. */
function prepareSession(name, { trusted }) {
  const base = path.join(RUN, name);
  const ws = path.join(base, 'workspace');
  const userData = path.join(base, 'user-data');
  for (const d of [ws, path.join(userData, 'User'), path.join(userData, 'Machine')]) {
    fs.mkdirSync(d, { recursive: true });
  }
  const example = fs.readFileSync(path.join(ROOT, 'examples', 'mlp.qv'), 'utf8');
  if (!example.includes(CLEAN_LINE)) {
    throw new Error(`examples/mlp.qv no longer contains "${CLEAN_LINE.trim()}"; update BROKEN_LINE in e2e.mjs`);
  }
  fs.writeFileSync(path.join(ws, 'mlp.qv'), example);
  fs.writeFileSync(path.join(ws, 'broken.qv'), example.replace(CLEAN_LINE, BROKEN_LINE));
  if (!example.includes('range(100)')) {
    throw new Error('examples/mlp.qv no longer trains for range(100) steps; update long.qv in e2e.mjs');
  }
  fs.writeFileSync(path.join(ws, 'long.qv'), example.replace('range(100)', 'range(100000)'));
  fs.writeFileSync(path.join(ws, 'messy.qv'), MESSY);
  writeMetricsProgram(ws, example);
  if (MODE === 'real') {
    // The default server resolution: the workspace's own .venv.
    fs.symlinkSync(path.join(ROOT, '.venv'), path.join(ws, '.venv'));
  }
  writeMultiFile(ws);
  writeNotebook(ws); // the notebook scenario's cells.ipynb (there from the start, for Quick Open)
  let remote = remoteSettings({});
  if (!trusted) {
    // A workspace that tries to choose what runs; Restricted Mode must ignore it.
    fs.mkdirSync(path.join(ws, '.vscode'));
    fs.writeFileSync(path.join(ws, '.vscode', 'settings.json'), JSON.stringify({ 'quiver.server.pythonPath': '/nonexistent/workspace-python', 'quiver.server.command': ['/nonexistent/workspace-server'] }));
    // The user's own choice is honoured: here, the repo's Python.
    remote = MODE === 'real' ? { 'quiver.server.pythonPath': VENV_PYTHON } : remote;
  }
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify(userSettings({ trusted }), null, 2));
  fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify(remote, null, 2));
  return { name, base, ws, userData, trusted };
}

/** The browser's user settings: a quiet workbench, and nothing that edits while the test types. */
function userSettings({ trusted }) {
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
    'security.workspace.trust.enabled': !trusted,
    'security.workspace.trust.startupPrompt': 'never',
    'editor.hover.delay': 200,
    'editor.minimap.enabled': false,
    'files.hotExit': 'off',
    // VS Code for the web saves after a second by default: an unsaved edit must stay unsaved
    'files.autoSave': 'off',
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

function installExtension() {
  const extensions = path.join(RUN, 'extensions');
  log('installing', path.relative(EXT, VSIX));
  const out = execFileSync(CODE_SERVER, ['--install-extension', VSIX, '--force', '--extensions-dir', extensions, '--user-data-dir', path.join(RUN, 'install-user-data')], {
    encoding: 'utf8',
  });
  if (!/was successfully installed/.test(out)) {
    throw new Error(`installing the .vsix failed:\n${out}`);
  }
  return extensions;
}

async function startCodeServer(session, extensions) {
  const env = session.env ?? process.env;
  const port = await freePort();
  const logPath = path.join(session.base, 'code-server.log');
  const logFile = fs.openSync(logPath, 'w');
  const proc = spawn(
    CODE_SERVER,
    [
      '--bind-addr', `127.0.0.1:${port}`,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(session.trusted ? ['--disable-workspace-trust'] : []),
      '--disable-getting-started-override',
      '--config', path.join(session.base, 'code-server.yaml'),
      '--user-data-dir', session.userData,
      '--extensions-dir', extensions,
      session.ws,
    ],
    { stdio: ['ignore', logFile, logFile], detached: true, env },
  );
  await waitUntil('code-server to listen', () => fs.readFileSync(logPath, 'utf8').includes('HTTP server listening'), 60_000);
  return { proc, url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(session.ws)}` };
}

/** Runs `body(wb, session)` in a browser on a fresh code-server; keeps the Quiver logs. */
async function withSession(session, extensions, browser, body) {
  log(`=== session ${session.name} (${session.trusted ? 'trusted' : 'Restricted Mode'})`);
  const cs = await startCodeServer(session, extensions);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const wb = new Workbench(page);
  try {
    await page.goto(cs.url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await waitUntil('the explorer to list broken.qv', async () => (await page.locator('.explorer-folders-view .monaco-list-row').allInnerTexts()).some((t) => t.includes('broken.qv')), 60_000);
    log('workbench loaded');
    await body(wb, session);
  } finally {
    copyOutputLogs(session);
    await page.close().catch(() => undefined);
    try {
      process.kill(-cs.proc.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

// ------------------------------------------------------------------ workbench helpers

class Workbench {
  constructor(page) {
    this.page = page;
  }

  async shot(name) {
    await this.page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
  }

  /** The text of the extension's own log (the "Quiver" output channel) so far. */
  serverLog(session) {
    const found = findFiles(path.join(session.userData, 'logs'), (n) => n === 'Quiver.log');
    return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
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
    await input.waitFor({ state: 'visible', timeout: 60_000 });
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
    }, 60_000, 300).catch((e) => {
      throw new Error(`${e.message}; rows: ${seen.map((t) => t.split('\n')[0]).join(' | ')}`);
    });
    await rows.nth(index - 1).click({ timeout: 60_000 });
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
    }, 60_000);
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
    }, 60_000);
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

// ------------------------------------------------------------------ checks used by several scenarios

/** Waits for the Problems panel to list broken.qv's error, on the line where it was introduced. */
async function expectDiagnostic(wb, session) {
  await wb.command('Problems: Focus on Problems View');
  const broken = fs.readFileSync(path.join(session.ws, 'broken.qv'), 'utf8');
  const { line } = lineCol(broken, BROKEN_LINE.trim());
  const onLine = (r) => DIAGNOSTIC_CODE.test(r) && (r.includes(`Ln ${line},`) || r.includes(`[${line},`));
  let rows = [];
  const row = await waitUntil(`a Problems row with a code on line ${line}`, async () => {
    rows = await wb.problemRows();
    return rows.find(onLine);
  }, 90_000).catch((e) => {
    throw new Error(`${e.message}; rows: ${rows.join(' | ')}`);
  });
  await wb.page.waitForTimeout(1000);
  rows = await wb.problemRows();
  if (rows.filter((r) => r === row).length !== 1) {
    throw new Error(`the diagnostic is listed ${rows.filter((r) => r === row).length} times: ${rows.join(' | ')}`);
  }
  return `${row.match(DIAGNOSTIC_CODE)[0]}: ${row}`;
}

/**
 * The text of the hover widget now showing, once it matches `wanted`. A hover is built
 * in parts: the diagnostic under the cursor shows at once, the server's answer when it
 * arrives, so the whole widget is read again until it matches or `patienceMs` passes.
 * Throws with what the hover showed, so a timeout says what was seen instead.
 */
async function hoverMatching(page, wanted, patienceMs = 5000) {
  const widget = page.locator('.monaco-hover:not(.hidden)').first();
  await widget.locator('.monaco-hover-content, .hover-contents').first().waitFor({ state: 'visible', timeout: 3000 });
  const end = Date.now() + patienceMs;
  let text = '';
  for (;;) {
    text = (await widget.innerText()).replace(/\s+/g, ' ').trim();
    if (wanted(text)) {
      return text;
    }
    if (Date.now() > end) {
      throw new Error(`the hover showed "${text.slice(0, 160)}"`);
    }
    await page.waitForTimeout(200);
  }
}

/** Hovers the gradient `g` in `lr * g.w1` and waits for Grad[Mlp]'s fields. */
async function expectGradHover(wb, session) {
  const page = wb.page;
  await wb.openFile('mlp.qv');
  const text = fs.readFileSync(path.join(session.ws, 'mlp.qv'), 'utf8');
  const { line, col } = lineCol(text, 'lr * g.w1', 'lr * '.length);
  const hover = await waitUntil('a hover with the Grad fields', async () => {
    // Put the cursor back on `g` each time: a notification or the panel may
    // have taken the focus since the last try.
    await page.keyboard.press('Escape');
    await wb.gotoLine(line, col);
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    return hoverMatching(page, (t) => /Grad/.test(t) && ['w1', 'b1', 'w2', 'b2'].every((f) => new RegExp(`\\b${f}\\b`).test(t)));
  }, 60_000, 1000);
  await page.waitForTimeout(500); // let the hover finish fading in for the screenshot
  return `hover on g at ${line}:${col}: ${hover.slice(0, 240)}`;
}

/** The file the format-on-save scenario saves: a program laid out carelessly. */
const MESSY = 'dim  D=4\nfn f(x:[b D])->[b D]:\n  return relu( x*2.0 )\n';

/**
 * Types a space at the end of messy.qv, saves, and waits for the formatted file on
 * disk; then makes mlp.qv the active editor again.
 */
async function formatOnSave(wb, session) {
  if (MODE !== 'real') {
    return 'skipped: the stub server does not format';
  }
  const page = wb.page;
  const file = path.join(session.ws, 'messy.qv');
  const want = execFileSync(VENV_PYTHON, ['-m', 'quiver', 'fmt', '-'], { input: MESSY, encoding: 'utf8' });
  if (want === MESSY) {
    throw new Error('quiver fmt leaves messy.qv as it is: nothing to test');
  }
  await wb.openFile('messy.qv');
  await page.locator('.editor-group-container.active .monaco-editor textarea').first().focus();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' ');
  await page.keyboard.press('Control+S');
  let disk = '';
  await waitUntil('messy.qv to be saved formatted', () => (disk = fs.readFileSync(file, 'utf8')) === want, 60_000, 500).catch((e) => {
    throw new Error(`${e.message}; on disk: ${JSON.stringify(disk)}`);
  });
  await wb.shot('format-on-save-messy');
  // Leave mlp.qv active, as the hover scenario did: the run scenario runs the active editor.
  await wb.openFile('mlp.qv');
  return `saved as ${JSON.stringify(want)}`;
}

// ------------------------------------------------------------------ the metrics chart

/**
 * metrics.qv: mlp.qv trained for METRICS_STEPS steps (fewer than its 100: the suite
 * stays short) logging its loss at every step with `log(i, loss=l)`.
 */
const METRICS_STEPS = 30;
const TRAIN_CALL = '        l = train_step(m, x, y, 0.1, i)\n';
const METRICS_CALL = '        log(i, loss=l)\n';

function writeMetricsProgram(ws, example) {
  if (!example.includes(TRAIN_CALL)) {
    throw new Error(`examples/mlp.qv no longer has "${TRAIN_CALL.trim()}"; update writeMetricsProgram in e2e.mjs`);
  }
  const program = example.replace(TRAIN_CALL, TRAIN_CALL + METRICS_CALL).replace('range(100)', `range(${METRICS_STEPS})`);
  fs.writeFileSync(path.join(ws, 'metrics.qv'), program);
}

/** The page inside the Run Metrics webview (VS Code nests it in two iframes). */
async function metricsFrame(page) {
  const frame = await waitUntil('the Run Metrics webview', async () => {
    for (const f of page.frames()) {
      if ((await f.locator('#charts').count().catch(() => 0)) > 0) {
        return f;
      }
    }
    return false;
  }, 60_000, 500);
  return frame;
}

async function metricsScenario(wb) {
  const page = wb.page;
  await scenario('metrics', wb, async () => {
    if (MODE !== 'real') {
      return 'skipped: the stub server sends no metrics';
    }
    await wb.openFile('metrics.qv');
    await page.keyboard.press('Escape');
    await page.locator(RUN_BUTTON).first().click({ timeout: 60_000 });
    // The panel opens by itself at the run's first logged step.
    await page.locator('.tab[aria-label^="Quiver: Run Metrics"]').first().waitFor({ timeout: 120_000 });
    const frame = await metricsFrame(page);
    const chart = frame.locator('section.chart[data-metric="loss"]');
    const state = await waitUntil('the chart to show the finished run', async () => {
      const s = await frame.locator('body').getAttribute('data-run-state');
      return s !== null && s !== 'running' ? s : false;
    }, 180_000, 500);
    const points = Number(await chart.getAttribute('data-points'));
    const d = (await chart.locator('path.curve').getAttribute('d')) ?? '';
    const vertices = (d.match(/[ML]/g) ?? []).length;
    const name = (await frame.locator('#run-name').innerText()).trim();
    const last = (await chart.locator('.last').innerText()).trim();
    await frame.locator('#charts').screenshot({ path: path.join(SHOTS, 'metrics-chart.png') });
    if (state !== 'ok') {
      throw new Error(`the run ended ${state}: ${await frame.locator('#run-state').innerText()}`);
    }
    if (points !== METRICS_STEPS || vertices !== METRICS_STEPS) {
      throw new Error(`the chart has ${points} points (${vertices} in its path), not the ${METRICS_STEPS} steps logged`);
    }
    if (name !== 'metrics.qv' || !last.endsWith(`at step ${METRICS_STEPS - 1}`)) {
      throw new Error(`the chart is titled "${name}", its latest value "${last}"`);
    }
    const output = await wb.outputText().catch(() => '');
    if (output.includes('quiver_metrics')) {
      throw new Error('the metrics lines were shown as output');
    }
    return `chart of ${name} (${state}): loss with ${points} points, latest ${last}; screenshots/metrics-chart.png`;
  });
  await wb.command('View: Close All Editors');
}

const RUN_BUTTON = '.editor-actions .action-label[aria-label^="Run File"], .editor-actions .action-label[aria-label^="Quiver: Run File"]';
const STOP_BUTTON = '.editor-actions .action-label[aria-label^="Stop Run"], .editor-actions .action-label[aria-label^="Quiver: Stop Run"]';

// ------------------------------------------------------------------ scenarios

async function trustedScenarios(wb, session) {
  const page = wb.page;

  await scenario('language', wb, async () => {
    await wb.openFile('broken.qv');
    const lang = await waitUntil('the status bar to show Quiver', async () => ((await wb.statusBarLanguage()) === 'Quiver' ? 'Quiver' : false), 60_000);
    return `status bar language: ${lang}`;
  });

  await scenario('problems', wb, () => expectDiagnostic(wb, session));

  await scenario('hover', wb, () => expectGradHover(wb, session));

  await scenario('format-on-save', wb, () => formatOnSave(wb, session));

  await scenario('run', wb, async () => {
    await page.keyboard.press('Escape');
    const runButton = page.locator(RUN_BUTTON).first();
    await runButton.waitFor({ state: 'visible', timeout: 60_000 });
    await runButton.click();
    await waitUntil('the Quiver Run output to start', async () => /Running mlp\.qv/.test(await wb.outputText()), 60_000);
    await wb.command('View: Toggle Maximized Panel');
    const seen = new Set();
    const ended = (l) => /mlp\.qv (finished|failed|stopped|timed out)/.test(l);
    await waitUntil('training output and the end of the run', async () => {
      for (const l of (await wb.outputText()).split('\n')) {
        seen.add(l.trim());
      }
      return [...seen].some(ended);
    }, 300_000, 500);
    await wb.shot('run-maximized');
    await wb.command('View: Toggle Maximized Panel');
    const all = [...seen];
    const step0 = all.find((l) => /step 0 loss/.test(l));
    const end = all.find(ended);
    if (!step0) {
      throw new Error(`no "step 0 loss" line in the output; saw: ${all.join(' | ').slice(0, 800)}`);
    }
    if (!/finished/.test(end)) {
      throw new Error(`the run did not finish cleanly: ${end}; saw: ${all.join(' | ').slice(0, 800)}`);
    }
    return `via the editor title button: "${step0}" … "${end}"`;
  });

  await scenario('stop', wb, async () => {
    await wb.openFile('long.qv');
    await page.keyboard.press('Escape');
    await page.locator(RUN_BUTTON).first().click({ timeout: 60_000 });
    // The output view renders only the lines in view, and a fast run scrolls
    // its header away. The header shows for the seconds the program takes to
    // start; once it was seen, the channel holds only this run (it is cleared
    // at each run), so any "step N loss" line shows long.qv training.
    let header = false;
    await waitUntil('long.qv to train', async () => {
      const text = await wb.outputText();
      header ||= /Running long\.qv/.test(text);
      return header && /step \d+ loss/.test(text);
    }, 60_000, 100);
    // While it runs, the editor title offers Stop instead of Run.
    await page.locator(STOP_BUTTON).first().click({ timeout: 60_000 });
    const end = await waitUntil('the run to stop', async () => (await wb.outputText()).split('\n').find((l) => /long\.qv (stopped|finished|failed)/.test(l)), 60_000);
    if (!/stopped/.test(end)) {
      throw new Error(`the run did not stop: ${end}`);
    }
    await page.locator(RUN_BUTTON).first().waitFor({ state: 'visible', timeout: 60_000 });
    return `${end.trim()}; Run File is offered again`;
  });

  await metricsScenario(wb);

  await debugScenario(wb, session); // Debug Quiver File (docs/debugging.md)

  await scenario('bad-server', wb, async () => {
    // Each broken setup must give exactly one message that says what is wrong.
    const cases = [
      { name: 'missing-python', settings: { 'quiver.server.pythonPath': '/nonexistent/bin/python3' }, expect: /quiver\.server\.pythonPath is set to "\/nonexistent\/bin\/python3", which was not found/ },
      {
        name: 'crash-at-start',
        settings: { 'quiver.server.command': [VENV_PYTHON, '-c', 'import sys; sys.exit("RuntimeError: simulated crash at start")'] },
        expect: /stopped during startup \(exit code 1\): RuntimeError: simulated crash at start/,
      },
    ];
    const badPython = findPythonWithoutQuiver();
    if (badPython !== undefined) {
      cases.push({ name: 'python-without-quiver', settings: { 'quiver.server.pythonPath': badPython }, expect: /has no Quiver language server/ });
    }
    const seen = [];
    for (const c of cases) {
      await wb.command('Notifications: Clear All Notifications');
      // In stub mode the stub's quiver.server.command would win over pythonPath: leave it out.
      await wb.setRemoteSettings(c.settings);
      const message = await waitUntil(`an error message (${c.name})`, async () => (await wb.notifications()).find((n) => /^Quiver:/.test(n)), 60_000, 1000);
      await page.waitForTimeout(5000); // anything stacking up would show by now
      const related = (await wb.notifications(true)).filter((n) => /quiver|server|connection/i.test(n));
      await wb.shot(`bad-server-${c.name}`);
      await page.keyboard.press('Escape');
      if (related.length !== 1) {
        throw new Error(`${c.name}: expected exactly one message, got ${related.length}: ${related.join(' || ')}`);
      }
      if (!c.expect.test(message)) {
        throw new Error(`${c.name}: the message does not say what is wrong: ${message}`);
      }
      seen.push(`${c.name}: "${message.slice(0, 110)}…"`);
    }
    // Fix the cause: the server restarts on the settings change and diagnostics come back.
    await wb.command('Notifications: Clear All Notifications');
    await wb.setRemoteSettings(remoteSettings({}));
    await wb.openFile('broken.qv');
    await expectDiagnostic(wb, session);
    const after = (await wb.notifications()).filter((n) => /^Quiver:/.test(n));
    if (after.length > 0) {
      throw new Error(`messages after the fix: ${after.join(' || ')}`);
    }
    return `one message each: ${seen.join('; ')}; diagnostics back after the setting was fixed`;
  });

  await multiFileScenario(wb, session);
  await notebookScenario(wb, session);
}

// ------------------------------------------------------------------ notebooks (docs/notebooks.md)

// An .ipynb with two Quiver cells (language quiver, each starting with the %%quiver magic)
// around a Python cell; the second Quiver cell uses the first's fn and declares [D D]
// where it returns [D]. The server checks the Quiver cells together and reports E0201
// on the second one, at its own line 3.
const NOTEBOOK_CELLS = [
  ['quiver', '%%quiver\ndim D = 4\n\nfn apply(x: [D]) -> [D]:\n    return x * 2.0\n'],
  ['python', 'import torch\n'],
  ['quiver', '%%quiver\nfn twice(x: [D]) -> [D D]:\n    return apply(x) + apply(x)\n'],
];

function writeNotebook(ws) {
  const cells = NOTEBOOK_CELLS.map(([language, text]) => ({
    cell_type: 'code',
    execution_count: null,
    metadata: language === 'quiver' ? { vscode: { languageId: 'quiver' } } : {},
    outputs: [],
    source: text.split(/(?<=\n)/),
  }));
  const metadata = { language_info: { name: 'python' } };
  fs.writeFileSync(path.join(ws, 'cells.ipynb'), JSON.stringify({ cells, metadata, nbformat: 4, nbformat_minor: 5 }, null, 1));
}

async function notebookScenario(wb, session) {
  await scenario('notebook', wb, async () => {
    await wb.openFile('cells.ipynb');
    await wb.command('Problems: Focus on Problems View');
    const onCell = (r) => /E0201/.test(r) && (r.includes('Ln 3,') || r.includes('[3,'));
    let rows = [];
    const row = await waitUntil('a Problems row for the second Quiver cell', async () => {
      rows = await wb.problemRows();
      return rows.find(onCell);
    }, 90_000).catch((e) => {
      throw new Error(`${e.message}; rows: ${rows.join(' | ')}`);
    });
    const others = rows.filter((r) => DIAGNOSTIC_CODE.test(r) && r !== row && /cells\.ipynb|apply|twice/.test(r));
    if (others.length > 0) {
      throw new Error(`more than the one diagnostic in the notebook: ${others.join(' | ')}`);
    }
    await wb.shot('notebook-open');
    // A language feature across cells: the hover on `apply` in the third cell shows
    // the fn the first cell declares.
    const page = wb.page;
    const word = page.locator('.notebook-editor .view-line', { hasText: 'return apply(x) + apply(x)' }).locator('span', { hasText: /^apply$/ }).first();
    const hover = await waitUntil('a hover on apply in the third cell', async () => {
      await page.keyboard.press('Escape');
      await word.click();
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      const signature = /fn apply\(x: \[D\]\) -> \[D\]/;
      return (await hoverMatching(page, (t) => signature.test(t))).match(signature)[0];
    }, 60_000, 1000);
    await page.waitForTimeout(500);
    await wb.shot('notebook-hover');
    await page.keyboard.press('Escape');
    await wb.command('View: Close All Editors');
    return `${row}; hover on apply in cell 3: ${hover.slice(0, 80)}`;
  });
}

// ------------------------------------------------------------------ debugging (docs/debugging.md)

/**
 * A breakpoint set by clicking the gutter of mlp.qv's training line, Debug Quiver File,
 * the Variables view showing Quiver types, a step over, then continue to the end.
 */
async function debugScenario(wb, session) {
  const page = wb.page;
  const editor = '.editor-group-container.active';
  const variables = async () => (await page.locator('.debug-view-content .monaco-list-row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  await scenario('debug', wb, async () => {
    await wb.openFile('mlp.qv');
    const text = fs.readFileSync(path.join(session.ws, 'mlp.qv'), 'utf8');
    const { line } = lineCol(text, 'l = train_step(');
    await wb.gotoLine(line, 1);
    const number = page.locator(`${editor} .margin-view-overlays .line-numbers`).filter({ hasText: new RegExp(`^\\s*${line}\\s*$`) }).first();
    const box = await number.boundingBox();
    if (!box) {
      throw new Error(`no line number ${line} in the gutter`);
    }
    await page.mouse.click(box.x - 6, box.y + box.height / 2); // the glyph margin, left of the number
    await waitUntil('a breakpoint in the gutter', async () => (await page.locator(`${editor} .codicon-debug-breakpoint`).count()) > 0, 30_000);
    await wb.command('Quiver: Debug Quiver File');
    const stopped = await waitUntil('the debugger to stop with x shown as a Quiver tensor', async () => {
      const rows = await variables();
      return rows.some((r) => /^x [:=] \[64 784\] f32 \[/.test(r)) ? rows : false;
    }, 180_000, 500);
    await wb.shot('debug-stopped');
    if (stopped.some((r) => /^l [:=] /.test(r))) {
      throw new Error(`l is shown before its statement ran: ${stopped.join(' | ')}`);
    }
    const model = stopped.find((r) => /^m [:=] Mlp\(/.test(r));
    if (!model) {
      throw new Error(`no model m in the Variables view: ${stopped.join(' | ')}`);
    }
    await page.keyboard.press('Escape');
    await page.keyboard.press('F10'); // step over: the statement runs, l is bound
    const stepped = await waitUntil('the step to bind l', async () => {
      const rows = await variables();
      return rows.find((r) => /^l [:=] \[\] f32 \d/.test(r)) ?? false;
    }, 120_000, 500);
    await wb.shot('debug-stepped');
    await wb.command('Remove All Breakpoints');
    await page.keyboard.press('Escape');
    await page.keyboard.press('F5'); // continue to the end
    await waitUntil('the debug session to end', async () => (await page.locator('.debug-toolbar').isVisible().catch(() => false)) === false, 180_000, 500);
    return `stopped at mlp.qv:${line} (${model.slice(0, 60)}…), stepped: "${stepped}", ran to the end`;
  });
}

// ------------------------------------------------------------------ multi-file workspaces

const LAYERS_QV = `dim H = 4

model Mlp:
    param w1: [H H] = zeros

fn forward(m: Mlp, x: [H]) -> [H]:
    return x @ m.w1
`;

const TRAIN_QV = `import layers
from layers import Mlp

fn step(m: layers.Mlp, x: [layers.H]) -> [layers.H]:
    y = layers.forward(m, x)
    return y + m.w1[0]

fn main():
    m = Mlp.init(seed=1)
    print(step(m, zeros([4])))
`;

function writeMultiFile(ws) {
  fs.writeFileSync(path.join(ws, 'layers.qv'), LAYERS_QV);
  fs.writeFileSync(path.join(ws, 'train.qv'), TRAIN_QV);
}

/** The visible text of the active editor (short files: all of it). */
async function editorText(wb) {
  const lines = await wb.page.locator('.editor-group-container.active .monaco-editor .view-lines .view-line').allInnerTexts();
  return lines.join('\n').replace(/\u00a0/g, ' ');
}

async function multiFileScenario(wb, session) {
  const page = wb.page;
  // train.qv's own message names the model by its qualified name; layers.qv's would say "model Mlp".
  const trainError = (r) => /E0107/.test(r) && r.includes("model layers.Mlp has no field 'w1'");
  await scenario('multi-file', wb, async () => {
    await wb.openFile('layers.qv');
    await wb.openFile('train.qv');
    await wb.command('Problems: Focus on Problems View');
    await page.waitForTimeout(1500);
    if ((await wb.problemRows()).some(trainError)) {
      throw new Error(`train.qv has an error before any edit: ${(await wb.problemRows()).join(' | ')}`);
    }
    // Rename the param w1 in layers.qv, without saving.
    await wb.openFile('layers.qv');
    const at = lineCol(LAYERS_QV, 'param w1', 'param '.length);
    await wb.gotoLine(at.line, at.col);
    await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.press('Shift+ArrowRight');
    await page.keyboard.insertText('w9');
    await wb.command('Problems: Focus on Problems View');
    let rows = [];
    const row = await waitUntil("train.qv's E0107 in the Problems panel", async () => {
      rows = await wb.problemRows();
      return rows.find(trainError);
    }, 60_000).catch((e) => {
      throw new Error(`${e.message}; rows: ${rows.join(' | ')}`);
    });
    await wb.shot('multi-file-error');
    if (fs.readFileSync(path.join(session.ws, 'layers.qv'), 'utf8') !== LAYERS_QV) {
      throw new Error('layers.qv was saved');
    }
    if ((await page.locator('.tabs-container .tab.dirty[aria-label^="layers.qv"]').count()) !== 1) {
      throw new Error("layers.qv's tab does not show its unsaved edit");
    }
    // Undo: the importer's error goes.
    await wb.openFile('layers.qv');
    await page.keyboard.press('Control+Z');
    await wb.command('Problems: Focus on Problems View');
    await waitUntil("train.qv's error to go", async () => {
      rows = await wb.problemRows();
      return !rows.some(trainError);
    }, 60_000).catch((e) => {
      throw new Error(`${e.message}; rows: ${rows.join(' | ')}`);
    });
    // Rename `forward` from its use in train.qv: both files are edited.
    await wb.openFile('train.qv');
    const use = lineCol(TRAIN_QV, 'layers.forward', 'layers.f'.length);
    await wb.gotoLine(use.line, use.col);
    await page.keyboard.press('F2');
    // The rename box opens once the server's prepareRename answered; type into it, not the editor.
    const box = page.locator('.rename-box:not(.hidden) input.rename-input, .rename-box:not(.hidden) input').first();
    await box.waitFor({ state: 'visible', timeout: 60_000 });
    await box.fill('apply');
    await box.press('Enter');
    const train = await waitUntil('train.qv to call layers.apply', async () => {
      const t = await editorText(wb);
      return t.includes('layers.apply(m, x)') ? t : false;
    }, 60_000);
    await wb.openFile('layers.qv');
    const layers = await waitUntil('layers.qv to define apply', async () => {
      const t = await editorText(wb);
      return t.includes('fn apply(m: Mlp') ? t : false;
    }, 60_000);
    if (train.includes('forward') || layers.includes('forward')) {
      throw new Error(`a 'forward' was left: train.qv: ${train} / layers.qv: ${layers}`);
    }
    await wb.command('Problems: Focus on Problems View');
    await page.waitForTimeout(1500);
    const after = (await wb.problemRows()).filter((r) => /E0115|E0107/.test(r));
    if (after.length > 0) {
      throw new Error(`errors after the rename: ${after.join(' | ')}`);
    }
    return `unsaved rename of w1 in layers.qv -> train.qv: ${row}; undone: gone; F2 forward -> apply edited train.qv and layers.qv`;
  });
}

// ------------------------------------------------------------------ nothing installed: the bundled server

/**
 * A session whose workspace has no .venv and whose code-server sees a PATH where no
 * Python has Quiver (nor a quiver-lsp): /usr/bin and /bin. Throws when that is not so.
 */
function prepareBundledSession() {
  const session = prepareSession('bundled', { trusted: true });
  fs.rmSync(path.join(session.ws, '.venv'), { force: true });
  return { ...session, env: pathWithoutQuiver() };
}

/** code-server's environment with PATH=/usr/bin:/bin; throws when a Python there has Quiver. */
function pathWithoutQuiver() {
  const PATH = ['/usr/bin', '/bin'].join(path.delimiter);
  for (const dir of PATH.split(path.delimiter)) {
    for (const name of fs.readdirSync(dir).filter((n) => /^python3?(\.\d+)?$/.test(n) || n === 'quiver-lsp')) {
      const exe = path.join(dir, name);
      let hasQuiver = name === 'quiver-lsp';
      try {
        execFileSync(exe, ['-c', 'import quiver'], { stdio: 'ignore' });
        hasQuiver = true;
      } catch {
        // as wanted
      }
      if (hasQuiver) {
        throw new Error(`${exe} has Quiver: the bundled-server session needs a PATH without it`);
      }
    }
  }
  // VSCODE_CLI: code-server would otherwise take the environment of a login shell
  // (whose ~/.bashrc may put pyenv's shims first on PATH) for the extension host.
  const env = { ...process.env, PATH, VSCODE_CLI: '1' };
  for (const k of ['CONDA_PREFIX', 'VIRTUAL_ENV', 'PYTHONPATH', 'QUIVER_LSP_RUNNER']) {
    delete env[k];
  }
  return env;
}

/** The end of the Quiver Run channel, from the log file VS Code keeps of it. */
function runChannelText(session) {
  return findFiles(path.join(session.userData, 'logs'), (n) => /Quiver Run/.test(n))
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
}

async function bundledScenarios(wb, session) {
  const page = wb.page;

  await scenario('bundled-diagnostics', wb, async () => {
    // From opening the file (which activates the extension and starts the server) to the
    // diagnostic in the Problems panel.
    const t0 = Date.now();
    await wb.openFile('broken.qv');
    const diagnostic = await expectDiagnostic(wb, session);
    const ms = Date.now() - t0 - 1000; // expectDiagnostic waits a second for duplicates
    fs.writeFileSync(path.join(RUN, 'first-diagnostics.json'), JSON.stringify({ ms }) + '\n');
    const serverLog = wb.serverLog(session);
    const started = serverLog.split('\n').find((l) => l.includes('Starting the language server'));
    if (!started || !/\(bundled, with the Python from PATH.*\): \/usr\/bin\/python3 \S+bundled\/tool\/lsp_server\.py --stdio/.test(started)) {
      throw new Error(`the server was not the bundled one run by /usr/bin/python3: ${started ?? serverLog}`);
    }
    return `${diagnostic}; first diagnostic ${(ms / 1000).toFixed(1)} s after opening the file; ${started.replace(/^.*Starting/, 'Starting')}`;
  });

  await scenario('install-offer', wb, async () => {
    await wb.command('Notifications: Clear All Notifications');
    await wb.openFile('mlp.qv');
    await page.keyboard.press('Escape');
    await page.locator(RUN_BUTTON).first().click({ timeout: 60_000 });
    const message = await waitUntil('the offer to install the runtime', async () => (await wb.notifications(true)).find((n) => /lacks Quiver's runtime/.test(n)), 60_000, 1000);
    const buttons = await page.locator('.notifications-center .notification-list-item .monaco-button').allInnerTexts();
    await wb.shot('install-offer');
    await page.keyboard.press('Escape');
    if (!/^Quiver: Run File runs programs with \/usr\/bin\/python3, which lacks Quiver's runtime \(missing: quiver, torch/.test(message)) {
      throw new Error(`unexpected message: ${message}`);
    }
    if (!buttons.map((b) => b.trim()).includes('Install quiver-lang[torch]')) {
      throw new Error(`no "Install quiver-lang[torch]" button: ${buttons.join(' | ')}`);
    }
    return `"${message.slice(0, 120)}…" with [${buttons.map((b) => b.trim()).join('] [')}]`;
  });

  await scenario('run-interpreter', wb, async () => {
    await wb.command('Notifications: Clear All Notifications');
    await wb.setRemoteSettings({ 'quiver.interpreter': [VENV_PYTHON] });
    await waitUntil('the server to restart with quiver.interpreter', async () => /Starting the language server \(bundled, with the Python from quiver\.interpreter\)/.test(wb.serverLog(session)), 60_000, 500);
    await wb.openFile('mlp.qv');
    await page.keyboard.press('Escape');
    const runButton = page.locator(RUN_BUTTON).first();
    await runButton.waitFor({ state: 'visible', timeout: 60_000 });
    await runButton.click();
    const ended = (t) => t.split('\n').find((l) => /mlp\.qv (finished|failed|stopped|timed out)/.test(l));
    const end = await waitUntil('the run to end', async () => ended(runChannelText(session)) ?? ended(await wb.outputText()), 300_000, 1000);
    const text = runChannelText(session);
    if (!/finished/.test(end)) {
      throw new Error(`the run did not finish: ${end}; output: ${text.slice(-800)}`);
    }
    const command = text.split('\n').find((l) => l.trim().startsWith('$ '));
    if (!command || !command.includes(`${VENV_PYTHON} -P -m quiver.cli`)) {
      throw new Error(`the run did not use quiver.interpreter (${VENV_PYTHON}): ${command ?? text.slice(0, 400)}`);
    }
    if (!/step 0 loss/.test(text)) {
      throw new Error(`no training output: ${text.slice(-800)}`);
    }
    return `${command.trim()} … ${end.trim()}`;
  });

  await scenario('install-action', wb, async () => {
    // A new venv that lacks Quiver: torch and the rest of the runtime reach it through a
    // .pth line naming the repo .venv's site-packages (whose editable Quiver it does not
    // see: Python reads no .pth files inside a path a .pth line adds). "Install
    // quiver-lang[torch]" installs quiver.installSpec, here a wheel of this checkout.
    const venv = path.join(RUN, 'install-venv');
    const wheels = path.join(RUN, 'install-wheel');
    fs.rmSync(venv, { recursive: true, force: true });
    fs.rmSync(wheels, { recursive: true, force: true });
    execFileSync('/usr/bin/python3', ['-m', 'venv', venv], { stdio: 'ignore' });
    const python = path.join(venv, 'bin', 'python');
    const purelib = (exe) => execFileSync(exe, ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
    fs.writeFileSync(path.join(purelib(python), 'quiver-e2e-runtime.pth'), purelib(VENV_PYTHON) + '\n');
    let before = 'importable';
    try {
      execFileSync(python, ['-P', '-c', 'import quiver'], { stdio: 'ignore' });
    } catch {
      before = 'missing';
    }
    if (before !== 'missing') {
      throw new Error(`${python} already has Quiver`);
    }
    // setuptools builds in the checkout: its build/ and egg-info go again unless they were
    // there before (as tools/bundle-python.sh does)
    const leftovers = ['build', 'quiver_lang.egg-info'].map((n) => path.join(ROOT, n)).filter((p) => !fs.existsSync(p));
    try {
      execFileSync(VENV_PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '-q', '-w', wheels, ROOT], { stdio: 'ignore' });
    } finally {
      for (const p of leftovers) {
        fs.rmSync(p, { recursive: true, force: true });
      }
    }
    const wheel = path.join(wheels, fs.readdirSync(wheels).find((n) => n.endsWith('.whl')));

    await wb.command('Notifications: Clear All Notifications');
    await wb.setRemoteSettings({ 'quiver.interpreter': [python], 'quiver.installSpec': wheel });
    await waitUntil('the server to restart with the new interpreter', async () => wb.serverLog(session).includes(`from quiver.interpreter): ${python} `), 60_000, 500);
    await wb.openFile('mlp.qv');
    await page.keyboard.press('Escape');
    await page.locator(RUN_BUTTON).first().click({ timeout: 60_000 });
    const offer = await waitUntil('the offer to install the runtime', async () => (await wb.notifications(true)).find((n) => /lacks Quiver's runtime/.test(n)), 60_000, 1000);
    if (!offer.includes(python) || !/missing: quiver\)/.test(offer)) {
      throw new Error(`unexpected offer: ${offer}`);
    }
    await page.locator('.notifications-center .notification-list-item .monaco-button', { hasText: 'Install quiver-lang[torch]' }).first().click();
    const installed = await waitUntil('the install task to finish', async () => (await wb.notifications(true)).find((n) => /^Quiver: install(ed|ing)/.test(n)), 180_000, 1000);
    await wb.shot('install-action-task');
    await page.keyboard.press('Escape');
    if (!installed.startsWith(`Quiver: installed ${wheel} into ${python}`)) {
      throw new Error(`the install did not succeed: ${installed}`);
    }
    execFileSync(python, ['-P', '-c', 'import quiver.cli'], { stdio: 'ignore' }); // throws if it is still missing

    await wb.command('Notifications: Clear All Notifications');
    const ended = (t) => t.split('\n').filter((l) => /mlp\.qv (finished|failed|stopped|timed out)/.test(l)).pop();
    const runs = (t) => t.split('\n').filter((l) => l.trim().startsWith(`$ ${python} -P -m quiver.cli`)).length;
    const earlier = runs(runChannelText(session)); // a first attempt may have run and failed
    await wb.openFile('mlp.qv');
    await page.keyboard.press('Escape');
    await page.locator(RUN_BUTTON).first().click({ timeout: 60_000 });
    const end = await waitUntil('the run to end', async () => {
      const text = runChannelText(session);
      return runs(text) > earlier ? ended(text.slice(text.lastIndexOf(`$ ${python}`))) : undefined;
    }, 300_000, 1000);
    const text = runChannelText(session);
    const last = text.slice(text.lastIndexOf(`$ ${python}`));
    if (!/finished/.test(end) || !/step 0 loss/.test(last)) {
      throw new Error(`the run after the install did not train: ${end}; output: ${last.slice(-800)}`);
    }
    return `offer "${offer.slice(0, 80)}…" -> ${installed.slice(0, 100)} -> ${end.trim()}`;
  });
}

// The status bar gets its Restricted Mode entry some time after the window opens (on a
// slow machine, after the first check ran): wait for it rather than read it once.
async function expectRestrictedMode(wb) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const text = await wb.page.locator('.statusbar').innerText().catch(() => '');
    if (text.includes('Restricted Mode')) return;
    if (Date.now() > deadline) throw new Error(`the window is not in Restricted Mode; status bar: ${text.replace(/\s+/g, ' ').slice(0, 300)}`);
    await wb.page.waitForTimeout(500);
  }
}

async function restrictedScenarios(wb, session) {
  const page = wb.page;
  await scenario('restricted', wb, async () => {
    await wb.openFile('broken.qv');
    const diagnostic = await expectDiagnostic(wb, session);
    await wb.shot('restricted-problems');
    const hover = await expectGradHover(wb, session);
    await wb.shot('restricted-hover');
    await page.keyboard.press('Escape');
    if ((await page.locator(RUN_BUTTON).count()) > 0) {
      throw new Error('the editor title offers Run File in Restricted Mode');
    }
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.fill('>Quiver:');
    await page.waitForTimeout(1000);
    const offered = (await page.locator('.quick-input-widget .monaco-list-row').allInnerTexts()).map((t) => t.split('\n')[0].trim());
    await page.keyboard.press('Escape');
    if (!offered.includes('Quiver: Restart Server')) {
      throw new Error(`the palette does not list the Quiver commands: ${offered.join(' | ')}`);
    }
    if (offered.some((t) => t.startsWith('Quiver: Run File'))) {
      throw new Error(`the palette offers Run File in Restricted Mode: ${offered.join(' | ')}`);
    }
    await expectRestrictedMode(wb);
    // VS Code hides the workspace values of the restrictedConfigurations from the
    // extension, and the extension itself only reads user values when untrusted: the
    // server must have come from the user's setting, never from .vscode/settings.json.
    const serverLog = wb.serverLog(session);
    const from = MODE === 'real' ? 'quiver.server.pythonPath' : 'quiver.server.command';
    if (!serverLog.includes(`Starting the language server (from ${from})`) || serverLog.includes('/nonexistent/workspace')) {
      throw new Error(`the server did not come from the user's ${from}:\n${serverLog}`);
    }
    return `${diagnostic}; ${hover.slice(0, 80)}…; no Run File in the title or palette; server from the user's ${from}, not the workspace's`;
  });
}

// ------------------------------------------------------------------ Restricted Mode, hostile user settings

const HOSTILE_MARKER = 'WORKSPACE-PYTHON-RAN';

/**
 * Restricted Mode where the user's own settings name the workspace's Python (the form
 * quiver.interpreter's description suggests): a fake .venv/bin/python that writes a
 * marker file. PATH as in the bundled session, so the bundled server is what is left.
 */
function prepareHostileSession() {
  const session = { ...prepareSession('restricted-hostile', { trusted: false }), env: pathWithoutQuiver() };
  fs.rmSync(path.join(session.ws, '.venv'), { recursive: true, force: true });
  const bin = path.join(session.ws, '.venv', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const marker = path.join(session.base, HOSTILE_MARKER);
  fs.writeFileSync(path.join(bin, 'python'), `#!/bin/sh\necho "$0 $*" >> '${marker}'\nexit 1\n`, { mode: 0o755 });
  const hostile = { 'quiver.interpreter': ['${workspaceFolder}/.venv/bin/python'], 'quiver.server.pythonPath': '${workspaceFolder}/.venv/bin/python' };
  fs.writeFileSync(path.join(session.userData, 'Machine', 'settings.json'), JSON.stringify(hostile, null, 2));
  return { ...session, marker };
}

async function hostileScenarios(wb, session) {
  await scenario('restricted-hostile', wb, async () => {
    await expectRestrictedMode(wb);
    await wb.openFile('broken.qv');
    const diagnostic = await expectDiagnostic(wb, session);
    if (fs.existsSync(session.marker)) {
      throw new Error(`the workspace's .venv/bin/python ran: ${fs.readFileSync(session.marker, 'utf8')}`);
    }
    const serverLog = wb.serverLog(session);
    const ignored = ['quiver.server.pythonPath = "${workspaceFolder}/.venv/bin/python"', 'quiver.interpreter = ["${workspaceFolder}/.venv/bin/python"]'];
    for (const setting of ignored) {
      if (!serverLog.includes(`Restricted Mode: ignoring your user setting ${setting}`)) {
        throw new Error(`the Quiver log does not say that ${setting} was ignored:\n${serverLog}`);
      }
    }
    const started = serverLog.split('\n').find((l) => l.includes('Starting the language server')) ?? '';
    if (!/\/usr\/bin\/python3 \S+bundled\/tool\/lsp_server\.py --stdio/.test(started)) {
      throw new Error(`the server was not the bundled one run by /usr/bin/python3: ${started || serverLog}`);
    }
    const line = serverLog.split('\n').find((l) => l.includes('ignoring your user setting quiver.interpreter')) ?? '';
    return `${diagnostic}; no marker; ${line.replace(/^.*Restricted Mode/, 'Restricted Mode')}`;
  });
}

async function main() {
  log(`server: ${MODE === 'real' ? `${VENV_PYTHON} -m quiver.server (via the workspace .venv)` : `STUB ${path.relative(ROOT, STUB)}`}`);
  fs.rmSync(RUN, { recursive: true, force: true });
  fs.rmSync(SHOTS, { recursive: true, force: true });
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.mkdirSync(RUN, { recursive: true });
  const extensions = installExtension();
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    if (SESSIONS.includes('trusted')) {
      await withSession(prepareSession('trusted', { trusted: true }), extensions, browser, trustedScenarios);
    }
    if (MODE === 'real' && SESSIONS.includes('bundled')) {
      await withSession(prepareBundledSession(), extensions, browser, bundledScenarios);
    }
    if (SESSIONS.includes('restricted')) {
      await withSession(prepareSession('restricted', { trusted: false }), extensions, browser, restrictedScenarios);
    }
    if (MODE === 'real' && SESSIONS.includes('restricted-hostile')) {
      await withSession(prepareHostileSession(), extensions, browser, hostileScenarios);
    }
  } finally {
    await browser.close().catch(() => undefined);
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

function findFiles(dir, test) {
  const found = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        walk(p);
      } else if (test(e.name)) {
        found.push(p);
      }
    }
  };
  try {
    walk(dir);
  } catch {
    // no such folder yet
  }
  return found;
}

/** VS Code keeps every output channel in the logs folder: keep the Quiver ones with the results. */
function copyOutputLogs(session) {
  for (const f of findFiles(path.join(session.userData, 'logs'), (n) => /Quiver/.test(n))) {
    fs.copyFileSync(f, path.join(session.base, path.basename(f).replace(/^\d+-/, '')));
  }
}

const watchdog = setTimeout(() => {
  console.error('e2e: gave up after 12 minutes');
  process.exit(2);
}, 12 * 60_000);

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
