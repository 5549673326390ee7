// A live view of a Terax terminal session in a notebook cell (anywidget): xterm.js on the
// session's stream WebSocket, as a Lab terminal tab of the same session. The page connects
// itself (its own Jupyter login), so the view streams while the kernel is busy.
// XTERM_SOURCE (xterm.js's ES module) is prepended by terax_jupyter/notebook/terminal_view.py.

function pageConfig() {
  const element = document.getElementById("jupyter-config-data");
  if (!element) return {};
  try {
    return JSON.parse(element.textContent || "{}");
  } catch {
    return {};
  }
}

let xtermModule = null;

async function loadXterm() {
  if (!xtermModule) {
    const url = URL.createObjectURL(new Blob([XTERM_SOURCE], { type: "text/javascript" }));
    try {
      xtermModule = await import(url);
    } finally {
      URL.revokeObjectURL(url);
    }
  }
  return xtermModule;
}

function streamUrl(sessionId) {
  const config = pageConfig();
  let base = config.baseUrl || "/";
  if (!base.endsWith("/")) base += "/";
  let wsBase = config.wsUrl;
  if (!wsBase) {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    wsBase = `${scheme}//${window.location.host}${base}`;
  }
  if (!wsBase.endsWith("/")) wsBase += "/";
  let url = `${wsBase}terax/api/pty/${encodeURIComponent(sessionId)}/stream`;
  if (config.token) url += `?token=${encodeURIComponent(config.token)}`;
  return url;
}

function cssColor(name, fallback) {
  const value = getComputedStyle(document.body).getPropertyValue(name).trim();
  return value || fallback;
}

// Lab's Terax extension answers this event by opening the session in a terminal tab.
const OPEN_SESSION_EVENT = "terax:open-terminal-session";

function openInTab(sessionId) {
  const event = new CustomEvent(OPEN_SESSION_EVENT, {
    detail: { sessionId },
    cancelable: true,
  });
  return !document.dispatchEvent(event);
}

// What xterm.js answers when output asks it something (colours, modes, the cursor
// position, device attributes): typed into the shell if it answers a replay. The same
// pattern as the Lab pane's (labextension/src/common/terminal/reports.ts, unit-tested there).
// eslint-disable-next-line no-control-regex
const REPORTS = /^(?:\x1b\[[?>=]?[\d;]*\$?[Rcnyt]|\x1b\[\?\d*u|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1bP[^\x1b]*\x1b\\)+$/;
// The view is as tall as what the terminal shows (at least this many rows), up to its size.
const MIN_ROWS = 3;

function isTerminalReport(data) {
  return data.length > 2 && data.charCodeAt(0) === 0x1b && REPORTS.test(data);
}

// Rows in use: up to the cursor or the last line with text, all of them once the screen
// has scrolled or a full-screen program draws.
function usedRows(term) {
  const buffer = term.buffer.active;
  if (buffer.type !== "normal" || buffer.baseY > 0) return term.rows;
  let last = buffer.cursorY;
  for (let y = term.rows - 1; y > last; y--) {
    const line = buffer.getLine(y);
    if (line && line.translateToString(true).trim()) {
      last = y;
      break;
    }
  }
  return Math.min(term.rows, Math.max(MIN_ROWS, last + 1));
}

function labTheme() {
  return {
    background: cssColor("--jp-layout-color0", "#ffffff"),
    foreground: cssColor("--jp-ui-font-color0", "#000000"),
    cursor: cssColor("--jp-ui-font-color0", "#000000"),
  };
}

async function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "terax-nb-terminal";
  const status = document.createElement("div");
  status.className = "terax-nb-terminal-status";
  const screen = document.createElement("div");
  screen.className = "terax-nb-terminal-screen";
  const open = document.createElement("button");
  open.className = "terax-nb-terminal-open jp-mod-styled";
  open.textContent = "Open in a terminal tab";
  open.title = "Open this session in a Terax terminal tab of JupyterLab";
  open.onclick = () => {
    if (!openInTab(model.get("session_id"))) {
      status.textContent =
        "Only JupyterLab with Terax opens terminal tabs; there, use 'Attach to Running Terminal…'.";
    }
  };
  const bar = document.createElement("div");
  bar.className = "terax-nb-terminal-bar";
  bar.append(status, open);
  root.append(screen, bar);
  el.appendChild(root);
  const { Terminal } = await loadXterm();
  const term = new Terminal({
    cols: model.get("columns"),
    rows: model.get("rows"),
    convertEol: false,
    scrollback: 5000,
    fontFamily: cssColor("--jp-code-font-family", "monospace"),
    fontSize: 13,
    theme: labTheme(),
  });
  term.open(screen);
  const fitHeight = () => {
    const drawn = screen.querySelector(".xterm-screen");
    const rowHeight = drawn ? drawn.offsetHeight / term.rows : 0;
    const rows = usedRows(term);
    screen.style.height = rows < term.rows && rowHeight > 0 ? `${Math.ceil(rows * rowHeight)}px` : "";
    screen.dataset.rows = String(rows);
  };
  const parsed = term.onWriteParsed(fitHeight);
  const resized = term.onResize(fitHeight);
  fitHeight();
  // Until the scrollback replay is parsed, what xterm answers answers old output.
  let replaying = false;
  // Lab's theme can change while the view shows: follow it, as a terminal tab does.
  const themeWatch = new MutationObserver(() => {
    requestAnimationFrame(() => {
      term.options.theme = labTheme();
    });
  });
  themeWatch.observe(document.body, {
    attributes: true,
    attributeFilter: ["data-jp-theme-name", "data-jp-theme-light"],
  });
  let socket = null;
  let closed = false;

  function connect() {
    replaying = true;
    socket = new WebSocket(streamUrl(model.get("session_id")));
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      status.textContent = "";
      root.dataset.connected = "true";
    };
    socket.onmessage = (event) => {
      if (typeof event.data === "string") {
        let message = null;
        try {
          message = JSON.parse(event.data);
        } catch {
          return;
        }
        // The terminal's size is the session's: a Lab tab of it may have resized it.
        const size = message && message.type === "attached" ? message.session : message;
        if (
          message &&
          (message.type === "size" || message.type === "attached") &&
          Number.isInteger(size.columns) &&
          Number.isInteger(size.rows)
        ) {
          term.resize(size.columns, size.rows);
        }
        if (message && message.type === "replayed") {
          term.write("", () => {
            replaying = false;
          });
        }
        if (message && (message.type === "exit" || message.type === "closed")) {
          status.textContent = message.type === "exit" ? "The shell exited." : "Closed.";
          root.dataset.connected = "false";
        }
        return;
      }
      term.write(new Uint8Array(event.data));
    };
    socket.onclose = () => {
      root.dataset.connected = "false";
      if (!closed && !status.textContent) status.textContent = "Disconnected.";
    };
  }

  const input = term.onData((data) => {
    if (replaying && isTerminalReport(data)) return;
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ type: "input", data }));
    }
  });
  connect();
  return () => {
    closed = true;
    themeWatch.disconnect();
    input.dispose();
    parsed.dispose();
    resized.dispose();
    if (socket) socket.close();
    term.dispose();
  };
}

export default { render };
