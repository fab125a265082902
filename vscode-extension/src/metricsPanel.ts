// The "Quiver: Run Metrics" webview panel: shows the current run's charts
// (CurrentRunMetrics in metrics.ts decides what; webview/metricsView.ts draws).
// The page loads one local script, dist/metricsView.js, under a strict
// Content-Security-Policy with a fresh nonce; nothing remote.

import { randomBytes } from 'crypto';
import * as vscode from 'vscode';
import { CurrentRunMetrics, FromView, ToView } from './metrics';
import { displayName } from './runs';

export const METRICS_VIEW_TYPE = 'quiver.runMetrics';

export class MetricsPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  /**
   * Whether the page has loaded and said so: until then (and while the panel is
   * hidden, which unloads the page) nothing is posted, and the `ready` that follows
   * brings the whole run. So no record is lost or drawn twice.
   */
  private ready = false;
  readonly current: CurrentRunMetrics;

  constructor(private readonly extensionUri: vscode.Uri) {
    this.current = new CurrentRunMetrics({ post: (m) => this.post(m), open: () => this.show(true) }, displayName);
  }

  /** Opens the panel (beside the editor), or reveals it; `preserveFocus` keeps the editor focused. */
  show(preserveFocus = false): void {
    if (this.panel !== undefined) {
      this.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      METRICS_VIEW_TYPE,
      'Quiver: Run Metrics',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus },
      { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist')] },
    );
    this.panel = panel;
    this.ready = false;
    panel.webview.html = this.html(panel.webview);
    // The page says when it is ready (also after it was reloaded, when it had been
    // hidden): it then gets the whole run so far.
    panel.webview.onDidReceiveMessage((m: FromView) => {
      if (m?.type === 'ready' && this.panel === panel) {
        this.ready = true;
        for (const message of this.current.snapshot()) {
          void panel.webview.postMessage(message);
        }
      }
    });
    panel.onDidChangeViewState((e) => {
      if (!e.webviewPanel.visible && this.panel === panel) {
        this.ready = false; // hidden: the page is unloaded, and says `ready` again when shown
      }
    });
    panel.onDidDispose(() => {
      if (this.panel === panel) {
        this.panel = undefined;
        this.ready = false;
      }
    });
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private post(message: ToView): void {
    if (this.panel !== undefined && this.ready) {
      void this.panel.webview.postMessage(message);
    }
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'metricsView.js'));
    const csp = [`default-src 'none'`, `style-src 'nonce-${nonce}'`, `script-src 'nonce-${nonce}'`].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Quiver: Run Metrics</title>
<style nonce="${nonce}">
  body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 8px 16px; }
  header { display: flex; gap: 12px; align-items: baseline; margin-bottom: 8px; }
  #run-name { font-size: 1.2em; font-weight: 600; }
  .state { padding: 1px 8px; border-radius: 8px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
  .state-failed, .state-timeout { background: var(--vscode-inputValidation-errorBackground, #5a1d1d); }
  #charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 12px; }
  .chart { border: 1px solid var(--vscode-panel-border, #8884); border-radius: 4px; padding: 4px 8px; }
  .chart h2 { font-size: 1em; margin: 2px 0 4px; display: flex; justify-content: space-between; gap: 8px; }
  .chart .last { font-weight: normal; opacity: 0.8; font-variant-numeric: tabular-nums; }
  svg { width: 100%; height: auto; display: block; }
  .frame { fill: none; stroke: var(--vscode-panel-border, #8886); }
  .axis { fill: var(--vscode-descriptionForeground, #999); font-size: 11px; font-family: var(--vscode-editor-font-family, monospace); }
  .curve { fill: none; stroke: var(--vscode-charts-blue, #3794ff); stroke-width: 1.5; stroke-linejoin: round; }
  .dot { fill: var(--vscode-charts-blue, #3794ff); }
  .nonfinite { stroke: var(--vscode-charts-red, #f14c4c); stroke-dasharray: 3 3; }
  #empty { opacity: 0.7; }
</style>
</head>
<body>
<header><span id="run-name">No run yet</span><span id="run-state" class="state"></span></header>
<p id="empty">The steps a program logs appear here as it runs (log(step, loss=l) in the program).</p>
<div id="charts"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}
