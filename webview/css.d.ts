/** esbuild bundles CSS imports of the webview to dist/webview.css. */
declare module '*.css';
