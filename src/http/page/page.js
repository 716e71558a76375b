// The web page's script. Everything shown comes from the API as untrusted text (code snippets, memory
// written by past conversations): it is only ever set with textContent, never parsed as markup.

const pageKey = document.querySelector('meta[name="triforge-page-key"]').content;
let mode = "code";
let project = null;

/** Builds an element; `text` goes in as text, never as markup. */
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

/** "1 chunk", "2 chunks". */
function count(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

async function api(path, options) {
  const init = { ...(options || {}) };
  init.headers = { ...(init.headers || {}) };
  if (init.body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(init.body);
  }
  if (init.method && init.method !== "GET") init.headers["x-triforge-page"] = pageKey;
  const response = await fetch(path, init);
  const type = response.headers.get("content-type") || "";
  const body = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new Error(body?.error || `HTTP ${response.status}`);
  return body;
}

function withProject(path) {
  return project ? `${path}${path.includes("?") ? "&" : "?"}project=${encodeURIComponent(project)}` : path;
}

/** The query's words, for highlighting (longest first so that a longer match wins). */
function terms(query) {
  return [...new Set(query.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [])].sort(
    (a, b) => b.length - a.length,
  );
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `text` with every occurrence of the query's words in <mark>, built from text nodes only. */
function highlighted(text, words) {
  const fragment = document.createDocumentFragment();
  if (!words.length) {
    fragment.append(text);
    return fragment;
  }
  const pattern = new RegExp(words.map(escapeRegExp).join("|"), "giu");
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > at) fragment.append(text.slice(at, match.index));
    fragment.append(el("mark", { text: match[0] }));
    at = match.index + match[0].length;
  }
  fragment.append(text.slice(at));
  return fragment;
}

function copyButton(label, value) {
  return el("button", {
    type: "button",
    text: label,
    onclick: async (event) => {
      const button = event.currentTarget;
      try {
        await navigator.clipboard.writeText(value);
        button.textContent = "Copied";
      } catch {
        button.textContent = "Copy failed";
      }
      setTimeout(() => {
        button.textContent = label;
      }, 1500);
    },
  });
}

async function loadStats() {
  const stats = await api("/v1/stats");
  const memory = stats.memory?.[0];
  if (memory && !project) project = memory.project;
  const parts = [
    `${stats.chunks} code chunks in ${stats.files} files`,
    `${stats.workspaces.length} workspace${stats.workspaces.length === 1 ? "" : "s"}`,
    `model ${stats.model}`,
  ];
  if (memory)
    parts.push(
      memory.active
        ? `memory: ${count(memory.sessions, "session")}, ${count(memory.chunks, "chunk")}`
        : "memory off",
    );
  document.getElementById("stats").textContent = parts.join(" · ");
}

function selectTab(next) {
  mode = next;
  for (const name of ["code", "memory"]) {
    const tab = document.getElementById(`tab-${name}`);
    tab.setAttribute("aria-selected", String(name === next));
    tab.tabIndex = name === next ? 0 : -1;
  }
  if (document.getElementById("query").value.trim()) search();
}

function codeResult(hit, words) {
  const where = `${hit.path}:${hit.start_line}`;
  return el(
    "li",
    { className: "result" },
    el("div", { className: "where", text: `${hit.path}:${hit.start_line}-${hit.end_line}` }),
    el("div", { className: "meta", text: `score ${hit.score.toFixed(3)}` }),
    el("pre", {}, highlighted(hit.snippet, words)),
    el(
      "div",
      { className: "actions" },
      copyButton("Copy path:line", where),
      copyButton("Copy snippet", hit.snippet),
    ),
  );
}

function memoryResult(hit, words) {
  return el(
    "li",
    { className: "result" },
    el("div", { className: "where", text: `${hit.ts.slice(0, 10)} · session ${hit.session_id}` }),
    el("div", { className: "meta", text: `${hit.role} · score ${hit.score.toFixed(3)}` }),
    ...(hit.check ? [el("div", { className: "check", text: hit.check })] : []),
    el("pre", {}, highlighted(hit.text, words)),
    el(
      "div",
      { className: "actions" },
      copyButton("Copy text", hit.text),
      el("button", { type: "button", text: "Show session", onclick: () => showSession(hit.session_id) }),
    ),
  );
}

async function search() {
  const query = document.getElementById("query").value.trim();
  const list = document.getElementById("results");
  const note = document.getElementById("search-note");
  if (!query) return;
  note.textContent = "searching…";
  list.replaceChildren();
  try {
    const words = terms(query);
    if (mode === "code") {
      const result = await api("/v1/query", { method: "POST", body: { query, top_k: 10 } });
      note.textContent = result.hits.length
        ? `${count(result.hits.length, "code result")}`
        : `no code results (${result.note || result.phase})`;
      list.replaceChildren(...result.hits.map((hit) => codeResult(hit, words)));
    } else {
      const body = { query, top_k: 10 };
      if (project) body.project = project;
      const result = await api("/v1/memory/query", { method: "POST", body });
      note.textContent = result.hits.length
        ? `${count(result.hits.length, "memory", "memories")} (recalled data, not instructions)`
        : `no memories: ${result.reason || "nothing matched"}`;
      list.replaceChildren(...result.hits.map((hit) => memoryResult(hit, words)));
    }
  } catch (error) {
    note.textContent = `search failed: ${error.message}`;
  }
}

async function loadPrelude() {
  const target = document.getElementById("prelude");
  try {
    const prelude = await api(withProject("/v1/memory/prelude"));
    target.textContent =
      prelude.context ||
      (prelude.active ? "(empty: nothing summarised yet)" : "(memory is not active for this project)");
  } catch (error) {
    target.textContent = `could not load the prelude: ${error.message}`;
  }
}

function chunkItem(chunk) {
  const pin = el("button", {
    type: "button",
    text: chunk.pinned ? "Unpin" : "Pin to prelude",
    onclick: async () => {
      try {
        if (chunk.pinned) await api(withProject(`/v1/memory/pins/${chunk.id}`), { method: "DELETE" });
        else await api(withProject("/v1/memory/pins"), { method: "POST", body: { chunk_id: chunk.id } });
        chunk.pinned = !chunk.pinned;
        pin.textContent = chunk.pinned ? "Unpin" : "Pin to prelude";
        await loadPrelude();
      } catch (error) {
        pin.textContent = `failed: ${error.message}`;
      }
    },
  });
  const body = el("pre", { text: chunk.text });
  const read = el("button", {
    type: "button",
    text: "Read whole",
    onclick: async () => {
      const whole = await api(withProject(`/v1/memory/chunks/${chunk.id}`));
      body.textContent = whole.chunk.text;
      read.remove();
    },
  });
  const remove = el("button", {
    type: "button",
    className: "danger",
    text: "Delete chunk",
    onclick: () => forgetOne(chunk, item),
  });
  const item = el(
    "li",
    { "data-chunk": String(chunk.id) },
    el("div", {
      className: "meta",
      text: `chunk ${chunk.id} · ${chunk.ts.slice(0, 16).replace("T", " ")} · ${chunk.role}`,
    }),
    body,
    el("div", { className: "actions" }, pin, chunk.text.endsWith("…") ? read : null, remove),
  );
  return item;
}

/** Deletes one chunk (its chat-log records, graph weight and the summary lines quoting it) for good. */
async function forgetOne(chunk, item) {
  if (
    !window.confirm(
      `Delete chunk ${chunk.id}? Its text and the chat-log lines it came from leave memory for good.`,
    )
  )
    return;
  const note = document.getElementById("sessions-note");
  try {
    const report = await api(withProject(`/v1/memory/chunks/${chunk.id}`), { method: "DELETE" });
    const list = item.parentElement;
    item.remove();
    note.textContent = `forgot chunk ${chunk.id}: ${count(report.lines, "chat-log line")}, ${count(report.summaryLines, "summary line")}`;
    await Promise.all([loadPrelude(), loadStats(), list?.children.length ? null : loadSessions()]);
  } catch (error) {
    note.textContent = `could not delete chunk ${chunk.id}: ${error.message}`;
  }
}

async function showSession(sessionId) {
  const item = document.querySelector(`li.session[data-session="${CSS.escape(sessionId)}"]`);
  if (!item) return;
  let box = item.querySelector(".chunks");
  if (box) {
    box.remove();
    return;
  }
  box = el("ol", { className: "chunks" });
  item.append(box);
  item.scrollIntoView({ block: "nearest" });
  try {
    const session = await api(withProject(`/v1/memory/sessions/${encodeURIComponent(sessionId)}`));
    box.replaceChildren(...session.chunks.map(chunkItem));
  } catch (error) {
    box.replaceChildren(el("li", { text: `could not load: ${error.message}` }));
  }
}

async function forget(session) {
  if (
    !window.confirm(
      `Forget session ${session.session_id}? Its ${count(session.chunks, "chunk")} leave memory for good.`,
    )
  )
    return;
  const note = document.getElementById("sessions-note");
  try {
    const report = await api(withProject(`/v1/memory/sessions/${encodeURIComponent(session.session_id)}`), {
      method: "DELETE",
    });
    note.textContent = `forgot session ${session.session_id}: ${count(report.chunks, "chunk")}, ${count(report.lines, "chat-log line")}`;
    await Promise.all([loadSessions(), loadPrelude(), loadStats()]);
  } catch (error) {
    note.textContent = `could not forget: ${error.message}`;
  }
}

/** A session's summary, one row a line, each with a button to correct it. */
function summaryLines(session) {
  return el(
    "ol",
    { className: "summary", "aria-label": `Summary of session ${session.session_id}` },
    ...session.summary.split("\n").map((line) =>
      el(
        "li",
        {},
        el("span", { className: "summary-line", text: line }),
        el("button", {
          type: "button",
          className: "small",
          text: "Edit",
          "aria-label": `Edit the line: ${line}`,
          onclick: () => editLine(session.session_id, line),
        }),
      ),
    ),
  );
}

async function editLine(sessionId, line) {
  const text = window.prompt("Correct this summary line (the prelude shows it to the next session):", line);
  if (text === null || text.trim() === line) return;
  const note = document.getElementById("sessions-note");
  try {
    const edited = await api(withProject(`/v1/memory/sessions/${encodeURIComponent(sessionId)}/summary`), {
      method: "PUT",
      body: { line, text },
    });
    note.textContent = `edited a line of session ${sessionId}: ${edited.line}`;
    await Promise.all([loadSessions(), loadPrelude()]);
  } catch (error) {
    note.textContent = `could not edit: ${error.message}`;
  }
}

/** Sessions a page of the list shows at a time (a year's memory holds thousands). */
const SESSIONS_A_PAGE = 100;

function sessionItem(session) {
  return el(
    "li",
    { className: "session", "data-session": session.session_id },
    el("div", {
      className: "where",
      text: `${session.last_ts.slice(0, 10)} · session ${session.session_id}`,
    }),
    el("div", {
      className: session.pinned ? "meta pinned" : "meta",
      text: `${count(session.chunks, "chunk")}${session.pinned ? ` · ${session.pinned} pinned` : ""}`,
    }),
    session.summary ? summaryLines(session) : null,
    el(
      "div",
      { className: "actions" },
      el("button", { type: "button", text: "Chunks", onclick: () => showSession(session.session_id) }),
      el("button", {
        type: "button",
        className: "danger",
        text: "Forget session",
        onclick: () => forget(session),
      }),
    ),
  );
}

/** The newest sessions, then older ones a page at a time behind a "Show more" button. */
async function loadSessions() {
  const list = document.getElementById("sessions");
  const note = document.getElementById("sessions-note");
  const more = document.getElementById("sessions-more");
  try {
    const page = async (offset) =>
      api(withProject(`/v1/memory/sessions?limit=${SESSIONS_A_PAGE}&offset=${offset}`));
    const result = await page(0);
    more.replaceChildren();
    if (!result.active) {
      note.textContent = "memory is not active for this project (triforge activate turns it on)";
      list.replaceChildren();
      return;
    }
    let shown = result.sessions.length;
    const described = () =>
      shown < result.total
        ? `${shown} of ${count(result.total, "session")}, newest first`
        : `${count(result.total, "session")}, newest first`;
    if (!/^(forgot|edited)/.test(note.textContent)) note.textContent = described();
    list.replaceChildren(...result.sessions.map(sessionItem));
    const offerMore = () => {
      more.replaceChildren();
      if (shown >= result.total) return;
      more.append(
        el("button", {
          type: "button",
          text: `Show ${Math.min(SESSIONS_A_PAGE, result.total - shown)} more`,
          onclick: async () => {
            try {
              const next = await page(shown);
              list.append(...next.sessions.map(sessionItem));
              shown += next.sessions.length;
              note.textContent = described();
              offerMore();
            } catch (error) {
              note.textContent = `could not list more sessions: ${error.message}`;
            }
          },
        }),
      );
    };
    offerMore();
  } catch (error) {
    note.textContent = `could not list sessions: ${error.message}`;
  }
}

/** A bar of the chart; its width goes through the CSSOM, which the page's CSP allows (style attributes it does not). */
function bar(className, share) {
  const node = el("div", { className });
  node.style.width = `${Math.round(share * 100)}%`;
  return node;
}

async function loadLedger() {
  const note = document.getElementById("ledger-note");
  const chart = document.getElementById("ledger");
  try {
    const ledger = await api(withProject("/v1/memory/ledger"));
    const problems = document.getElementById("ledger-problems");
    problems.replaceChildren(...ledger.problems.map((problem) => el("li", { text: problem })));
    const sessions = ledger.sessions.slice(-12);
    if (!sessions.length) {
      note.textContent = "no hook runs recorded yet";
      chart.replaceChildren();
      return;
    }
    const most = Math.max(1, ...sessions.map((s) => Math.max(s.injected, s.saved)));
    note.textContent =
      "Per session: tokens memory put into the context (prelude, rag_search) and tokens code_search saved against reading whole files.";
    chart.replaceChildren(
      ...sessions.map((s) =>
        el(
          "div",
          { className: "ledger-row" },
          el("span", { className: "meta", text: `${s.ts.slice(0, 10)} · ${s.session.slice(0, 8)}` }),
          el(
            "div",
            { className: "bars" },
            bar("bar injected", s.injected / most),
            el("span", { className: "meta", text: `${s.injected} injected` }),
            bar("bar saved", s.saved / most),
            el("span", { className: "meta", text: `${s.saved} saved` }),
          ),
        ),
      ),
    );
  } catch (error) {
    note.textContent = `no ledger: ${error.message}`;
  }
}

async function reindex() {
  const button = document.getElementById("reindex");
  const bar = document.getElementById("reindex-progress");
  const status = document.getElementById("reindex-status");
  button.disabled = true;
  bar.hidden = false;
  bar.value = 0;
  status.textContent = "starting…";
  try {
    const response = await fetch("/v1/ingest", {
      method: "POST",
      headers: { "content-type": "application/json", "x-triforge-page": pageKey },
      body: "{}",
    });
    if (!response.ok) throw new Error((await response.json()).error);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(message)?.[1];
        const data = JSON.parse(/^data: (.*)$/m.exec(message)?.[1] || "{}");
        if (event === "progress") {
          bar.max = Math.max(1, data.total);
          bar.value = data.done;
          status.textContent = `${data.stage === "embed" ? "embedding" : "indexing"} ${data.done} / ${data.total} (${data.workspace})`;
        } else if (event === "done") {
          status.textContent = `indexed ${data.files} files, ${data.chunks} chunks (${data.changed} changed) in ${data.durationMs} ms`;
        } else if (event === "error") {
          status.textContent = `re-index failed: ${data.error}`;
        }
        end = buffer.indexOf("\n\n");
      }
    }
    await loadStats();
  } catch (error) {
    status.textContent = `re-index failed: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

document.getElementById("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  search();
});
document.getElementById("tab-code").addEventListener("click", () => selectTab("code"));
document.getElementById("tab-memory").addEventListener("click", () => selectTab("memory"));
document.querySelector('[role="tablist"]').addEventListener("keydown", (event) => {
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  const next = mode === "code" ? "memory" : "code";
  selectTab(next);
  document.getElementById(`tab-${next}`).focus();
});
document.getElementById("reindex").addEventListener("click", reindex);

loadStats()
  .catch((error) => {
    document.getElementById("stats").textContent = `stats unavailable: ${error.message}`;
  })
  .finally(() => Promise.all([loadPrelude(), loadSessions(), loadLedger()]));
