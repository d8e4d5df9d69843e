/**
 * The console's page and its styles: static, the same for every emulator, with nothing of the emulator in them (no
 * URL, key or token). What it shows is drawn by its script (browser/app.ts) from `GET /_emulator/console`.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>gpu-rental emulator console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/uplot.css">
<link rel="stylesheet" href="/console/assets/console.css">
</head>
<body>
<div id="app"><p class="note">Loading the console...</p></div>
<script src="/console/assets/uplot.js"></script>
<script src="/console/assets/preact.js"></script>
<script src="/console/assets/console.js"></script>
</body>
</html>
`;

export const CONSOLE_CSS = `
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f4f5f8; }
header { display: flex; flex-wrap: wrap; gap: 16px; align-items: center; padding: 10px 16px; background: #1d2330; color: #fff; }
header h1 { font-size: 15px; margin: 0 12px 0 0; }
header label { display: flex; gap: 6px; align-items: center; }
header input, header select { font: inherit; }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; padding: 12px 16px; }
section { background: #fff; border: 1px solid #dde0e6; border-radius: 6px; padding: 8px 12px; min-width: 0; overflow-x: auto; }
section.wide { grid-column: 1 / -1; }
h2 { font-size: 13px; margin: 2px 0 8px; text-transform: uppercase; letter-spacing: .04em; color: #5a6272; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid #eef0f3; white-space: nowrap; }
th { color: #5a6272; font-weight: 600; }
td.num, th.num { text-align: right; }
code { font-size: 12px; }
.status { padding: 1px 6px; border-radius: 8px; background: #e3e6eb; }
.status-running { background: #c9f0d4; color: #13582a; }
.status-loading, .status-provisioning { background: #fdf0c4; color: #6b5200; }
.status-exited, .status-stopped { background: #e3e6eb; }
.status-unknown, .status-offline { background: #f8cfcf; color: #7a1010; }
.figures { display: flex; gap: 24px; margin-bottom: 6px; }
.figures b { font-size: 16px; display: block; }
.note { color: #5a6272; }
.refused { color: #a01616; }
.controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.controls fieldset { border: 1px solid #dde0e6; border-radius: 4px; display: flex; gap: 6px; align-items: center; }
.controls input[type=number] { width: 5em; }
.clock { font-variant-numeric: tabular-nums; }
`;
