/**
 * The HTML shell of the extension's webviews (mask view, dashboard, template check): one bundled
 * script and stylesheet from `dist/`, a strict Content-Security-Policy (no remote content, no inline
 * script; scripts by nonce), VS Code's theme variables for colours.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/** The page of `dist/<name>.js` + `dist/<name>.css` inside `webview`. */
export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, name: string, title: string): string {
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', `${name}.js`));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', `${name}.css`));
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>${title.replace(/[<>&"]/g, '')}</title>
</head>
<body>
<div id="app" data-nonce="${nonce}"><p class="loading">Loading…</p></div>
<script type="module" nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
}

/** Options of the extension's webview panels: scripts on, resources from `dist/` only. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist')] };
}
