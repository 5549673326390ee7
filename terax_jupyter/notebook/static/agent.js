// The agent's view in a notebook cell (anywidget). State comes from the kernel; approval
// decisions go straight to the Terax server, because the kernel is busy inside ask() and
// would only read a widget message after the cell ends.

function pageConfig() {
  const element = document.getElementById("jupyter-config-data");
  if (!element) return {};
  try {
    return JSON.parse(element.textContent || "{}");
  } catch {
    return {};
  }
}

function xsrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)_xsrf=([^;]*)/);
  return match ? decodeURIComponent(match[1]) : "";
}

function apiUrl(path) {
  let base = pageConfig().baseUrl || "/";
  if (!base.endsWith("/")) base += "/";
  return `${base}terax/api/${path}`;
}

async function request(path, options = {}) {
  // As @jupyterlab/services does: the login cookie with the XSRF token, and the page's
  // token when it has one.
  const headers = { "Content-Type": "application/json", "X-XSRFToken": xsrfToken() };
  const token = pageConfig().token;
  if (token) headers.Authorization = `token ${token}`;
  const response = await fetch(apiUrl(path), {
    credentials: "same-origin",
    ...options,
    headers: { ...headers, ...(options.headers || {}) },
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = (body && body.message) || `HTTP ${response.status}`;
    throw new Error(message);
  }
  return body;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

// How a finished run ended (the run's finish reason), in words.
const FINISH_WORDS = {
  stop: "done",
  length: "stopped at the output limit",
  max_steps: "stopped at the step limit",
  cancelled: "cancelled",
  error: "failed",
};

const STATUS_WORDS = {
  running: "running",
  pending_approval: "waiting for approval",
  done: "done",
  denied: "denied",
  error: "failed",
  queued: "queued in the plan",
};

function render({ model, el }) {
  const root = element("div", "terax-nb-agent");
  el.appendChild(root);
  // Whether the page's server holds the session: only then can its buttons decide.
  let reachable = null;
  let checkedSession = "";
  const sent = new Map(); // approval id -> "approve" | "deny" | error text

  async function checkServer(sessionId) {
    if (!sessionId || checkedSession === sessionId) return;
    checkedSession = sessionId;
    try {
      await request(`ai/sessions/${encodeURIComponent(sessionId)}`, { method: "GET" });
      reachable = true;
    } catch {
      reachable = false;
    }
    draw();
  }

  async function decide(approvalId, decision, message) {
    sent.set(approvalId, decision);
    draw();
    const body = { decision };
    if (message) body.message = message;
    try {
      await request(`ai/approvals/${encodeURIComponent(approvalId)}`, {
        method: "POST",
        body: JSON.stringify(body),
      });
    } catch (error) {
      sent.set(approvalId, `error: ${error.message}`);
      draw();
    }
  }

  function drawApproval(approval) {
    const card = element("div", `terax-nb-approval terax-nb-approval-${approval.status}`);
    card.dataset.approvalId = approval.id;
    card.appendChild(element("div", "terax-nb-approval-summary", approval.summary));
    if (approval.command) {
      card.appendChild(element("pre", "terax-nb-command", `$ ${approval.command}`));
    } else if (approval.diff) {
      const diff = element("pre", "terax-nb-diff");
      for (const line of approval.diff.replace(/\n$/, "").split("\n")) {
        let kind = "";
        if (line.startsWith("+") && !line.startsWith("+++")) kind = "terax-nb-added";
        else if (line.startsWith("-") && !line.startsWith("---")) kind = "terax-nb-removed";
        diff.appendChild(element("div", kind, line || " "));
      }
      card.appendChild(diff);
    }
    const state = sent.get(approval.id);
    if (approval.status !== "pending") {
      const who = approval.by ? ` (${approval.by})` : "";
      card.appendChild(
        element("div", "terax-nb-approval-status", `${approval.status.replace("_", " ")}${who}`),
      );
      if (approval.message && approval.status === "denied") {
        card.appendChild(element("div", "terax-nb-approval-note", approval.message));
      }
    } else if (approval.waiting) {
      if (state && state.startsWith("error: ")) {
        card.appendChild(element("div", "terax-nb-error", state.slice(7)));
      }
      if (reachable === false) {
        card.appendChild(
          element(
            "div",
            "terax-nb-approval-note",
            "Decide in the Terax AI panel of the server this kernel uses.",
          ),
        );
      } else {
        const row = element("div", "terax-nb-buttons");
        const note = element("input", "terax-nb-note");
        note.type = "text";
        note.placeholder = "Note for the agent (optional)";
        const busy = Boolean(state && !state.startsWith("error: ")) || reachable !== true;
        const approve = element("button", "terax-nb-approve", "Approve");
        const deny = element("button", "terax-nb-deny", "Deny");
        approve.disabled = deny.disabled = busy;
        approve.addEventListener("click", () => decide(approval.id, "approve", note.value));
        deny.addEventListener("click", () => decide(approval.id, "deny", note.value));
        row.append(approve, deny, note);
        card.appendChild(row);
      }
    }
    return card;
  }

  function drawCall(call) {
    const card = element("div", `terax-nb-call terax-nb-call-${call.status}`);
    card.dataset.callId = call.id;
    card.appendChild(element("span", "terax-nb-call-name", call.name));
    card.appendChild(element("span", "terax-nb-call-target", call.target));
    card.appendChild(
      element("span", "terax-nb-call-status", STATUS_WORDS[call.status] || call.status),
    );
    if (call.error) card.appendChild(element("div", "terax-nb-error", call.error));
    return card;
  }

  function draw() {
    const state = model.get("state") || {};
    checkServer(state.session_id);
    root.replaceChildren();
    root.dataset.status = state.status || "";
    const header = element("div", "terax-nb-header");
    header.appendChild(element("span", "terax-nb-prompt", state.prompt || ""));
    const finish = state.finish ? FINISH_WORDS[state.finish] || state.finish : "done";
    const status = state.status === "finished" ? finish : state.status || "";
    header.appendChild(element("span", "terax-nb-status", status));
    root.appendChild(header);
    const items = element("div", "terax-nb-items");
    for (const item of state.items || []) {
      if (item.kind === "text") {
        items.appendChild(element("div", "terax-nb-text", item.text));
      } else if (item.kind === "call") {
        items.appendChild(drawCall(item));
      } else if (item.kind === "approval") {
        items.appendChild(drawApproval(item));
      }
    }
    root.appendChild(items);
    if (state.error) root.appendChild(element("div", "terax-nb-error", state.error));
    const usage = state.usage || {};
    let footer = `${usage.input_tokens || 0} in / ${usage.output_tokens || 0} out tokens`;
    if (usage.cost !== null && usage.cost !== undefined) footer += ` · $${usage.cost.toFixed(4)}`;
    if ((state.files_changed || []).length) footer += ` · changed ${state.files_changed.join(", ")}`;
    root.appendChild(element("div", "terax-nb-footer", footer));
  }

  model.on("change:state", draw);
  draw();
  return () => model.off("change:state", draw);
}

export default { render };
