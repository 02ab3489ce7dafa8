// The live page of `mocklib serve` (src/page.rs): the handlers, and the
// journal as /__mocklib/events streams it. Plain JavaScript, served as it
// is: no build step, no dependency.

// Where this page's state is: /__mocklib/ for the server's own list, a
// scope's own origin or /__mocklib/scopes/ID/ for a scope's.
const BASE = globalThis.location ? location.pathname.replace(/[^/]*$/, "") : "/__mocklib/";
const HANDLERS = `${BASE}handlers`;
const EVENTS = `${BASE}events`;
const SCOPES = `${BASE}scopes`;
// With `mocklib serve --admin-token`, the page is opened as
// /__mocklib/#token=TOKEN (a fragment never leaves the browser) and sends it.
const TOKEN = globalThis.location ? new URLSearchParams(location.hash.slice(1)).get("token") : null;

/** `init` with the admin token, when there is one. */
function authorized(init = {}) {
  if (!TOKEN) return init;
  return { ...init, headers: { ...(init.headers || {}), authorization: `Bearer ${TOKEN}` } };
}

// The journal keeps this many requests; the page keeps no more.
const MAX_SHOWN = 1000;

const byId = (id) => document.getElementById(id);

/** An element with attributes and children (strings become text, never HTML). */
function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
}

// --- Handler-file entries as YAML -------------------------------------

/**
 * A YAML double-quoted scalar. JSON's string syntax is YAML's, except that
 * YAML 1.1 parsers read U+2028 and U+2029 (which JSON leaves raw) as line
 * breaks.
 */
export function quote(text) {
  return JSON.stringify(String(text))
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** A value in YAML's flow style, every string quoted. */
export function flow(value) {
  if (Array.isArray(value)) return `[${value.map(flow).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const pairs = Object.entries(value).map(([key, item]) => `${quote(key)}: ${flow(item)}`);
    return `{${pairs.join(", ")}}`;
  }
  if (typeof value === "string") return quote(value);
  // Numbers, booleans, null (JSON writes a number that is not finite as null).
  return JSON.stringify(value) ?? "null";
}

/** Handler-file entries as a YAML list, one field a line. */
export function toYaml(entries) {
  const field = (key) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : quote(key));
  return entries
    .map((entry) =>
      Object.entries(entry)
        .map(([key, value], index) => `${index === 0 ? "- " : "  "}${field(key)}: ${flow(value)}`)
        .join("\n"),
    )
    .join("\n") + "\n";
}

/**
 * The handler-file entry answering requests like this journal entry: its
 * method and path (the URL, for another origin; query left out), the status
 * it got when mocked, else 200, and an empty JSON body to edit (the journal
 * keeps requests, not what answered them). A gRPC call becomes a `grpc`
 * entry, with the replies it got when a `grpc` handler answered it.
 */
export function handlerFor(entry) {
  const url = new URL(entry.url);
  if (entry.grpc) {
    const { method, replies, status } = entry.grpc;
    if (status && status.code !== "OK") {
      return status.message
        ? { grpc: method, status: status.code, message: status.message }
        : { grpc: method, status: status.code };
    }
    return { grpc: method, json: replies.length === 1 ? replies[0] : replies };
  }
  if (/^application\/grpc($|[+;])/.test(entry.headers["content-type"] ?? "")) {
    return { grpc: url.pathname.slice(1), json: {} };
  }
  // Characters a mocklib pattern reads as syntax, made literal.
  const pathname = url.pathname.replace(/[\\:*+?#(){}]/g, "\\$&");
  return {
    method: entry.method,
    path: url.origin === location.origin ? pathname : url.origin + pathname,
    status: entry.answer === "mocked" && entry.status ? entry.status : 200,
    json: {},
  };
}

// --- Handlers ------------------------------------------------------------

/** Lists the handlers (the page's and the admin API's own counted apart). */
async function refreshHandlers() {
  const response = await fetch(HANDLERS, authorized());
  const handlers = await response.json();
  const own = `${location.origin}/__mocklib`;
  const list = byId("handlers");
  let hidden = 0;
  list.replaceChildren();
  handlers.forEach((handler, index) => {
    if (handler.handler.includes(own)) {
      hidden += 1;
      return;
    }
    const item = element("li", { value: String(index) }, element("code", {}, handler.handler));
    if (handler.added_at_runtime) item.append(element("span", { class: "tag" }, "added at runtime"));
    if (handler.once) item.append(element("span", { class: "tag" }, "once"));
    item.dataset.handler = handler.handler;
    list.append(item);
  });
  byId("own-handlers").textContent = hidden ? `And ${hidden} of mocklib's own, under ${own}/.` : "";
}

/** POSTs entries to the admin API; resolves to its answer's text. */
async function addHandlers(entries) {
  const response = await fetch(HANDLERS, authorized({
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(entries),
  }));
  const text = await response.text();
  if (!response.ok) {
    // A refused entry: `{error, pointer}`.
    let why = text.trim();
    try {
      const refused = JSON.parse(text);
      why = `${refused.error} (at ${refused.pointer || "/"})`;
    } catch {}
    throw new Error(why || `${response.status}`);
  }
  return text;
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard permission (an embedded or headless browser): select it.
    const area = element("textarea", {}, text);
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

// --- Journal ---------------------------------------------------------------

function answerText(entry) {
  if (entry.answer === "mocked") return `mocked ${entry.status}`;
  return entry.answer.replace("_", " ");
}

/** The closest handlers of an unhandled request, and how it differs from each. */
function closest(entry) {
  const box = element("div", { class: "closest" });
  if (entry.closest.length === 0) {
    box.append(element("p", { class: "hint" }, "No handler comes close to it."));
    return box;
  }
  const list = element("ul");
  for (const { handler, differences } of entry.closest) {
    const item = element("li", { "data-handler": handler }, element("code", {}, handler));
    item.append(
      differences.length
        ? element("pre", {}, differences.join("\n"))
        : element("span", { class: "hint" }, " matches it now"),
    );
    list.append(item);
  }
  box.append(element("p", {}, "Closest handlers, and how the request differs:"), list);
  return box;
}

/** "Turn into a handler": the entry as YAML, to copy or to add. */
function turnIntoHandler(entry) {
  const handler = handlerFor(entry);
  const yaml = toYaml([handler]);
  const result = element("span", { class: "result", role: "status" });
  const copyButton = element("button", { type: "button", class: "copy" }, "Copy YAML");
  const addButton = element("button", { type: "button", class: "add" }, "Add");
  copyButton.addEventListener("click", async () => {
    await copy(yaml);
    result.textContent = "copied";
  });
  addButton.addEventListener("click", async () => {
    addButton.disabled = true;
    try {
      await addHandlers([handler]);
      result.textContent = "added: the next such request is answered by it";
      await refreshHandlers();
    } catch (error) {
      result.textContent = `not added: ${error.message}`;
      addButton.disabled = false;
    }
  });
  return element(
    "details",
    { class: "to-handler" },
    element("summary", {}, "Turn into a handler"),
    element("pre", { class: "yaml" }, yaml),
    copyButton,
    addButton,
    result,
  );
}

function showEntry(entry) {
  const url = new URL(entry.url);
  const shown = url.origin === location.origin ? url.pathname + url.search : entry.url;
  const line = element(
    "div",
    { class: "line" },
    element("span", { class: "method" }, entry.method),
    element("code", { class: "url" }, shown),
    element("span", { class: `answer ${entry.answer}` }, answerText(entry)),
  );
  if (entry.handler) line.append(element("span", { class: "by" }, `by ${entry.handler}`));
  const item = element("li", {
    class: "entry",
    "data-sequence": String(entry.sequence),
    "data-method": entry.method,
    "data-url": entry.url,
    "data-answer": entry.answer,
  }, line);
  if (entry.closest) item.append(closest(entry));
  item.append(turnIntoHandler(entry));
  const journal = byId("journal");
  journal.prepend(item);
  while (journal.children.length > MAX_SHOWN) journal.lastElementChild.remove();
  countEntries();
}

function countEntries() {
  const count = byId("journal").children.length;
  byId("count").textContent = count ? `(${count})` : "";
  byId("empty").hidden = count > 0;
}

function connect() {
  const status = byId("status");
  const source = new EventSource(TOKEN ? `${EVENTS}?token=${encodeURIComponent(TOKEN)}` : EVENTS);
  source.addEventListener("open", () => {
    document.body.dataset.state = "live";
    status.textContent = "live";
    // What changed while the page was away (a reload of the files too).
    refreshHandlers().catch(() => {});
  });
  source.addEventListener("error", () => {
    // EventSource reconnects by itself, sending the last id it received.
    document.body.dataset.state = "reconnecting";
    status.textContent = "disconnected, reconnecting…";
  });
  source.addEventListener("entry", (event) => showEntry(JSON.parse(event.data)));
  source.addEventListener("cleared", () => {
    byId("journal").replaceChildren();
    countEntries();
    const notice = byId("notice");
    notice.textContent = "The journal was cleared: the requests before that are gone.";
    notice.hidden = false;
  });
}

// --- Scopes (on the server's own page only) ------------------------------

/** Lists the open scopes, each linking to its own page. */
async function refreshScopes() {
  const response = await fetch(SCOPES, authorized());
  // A scope's page: scopes are the server's.
  if (!response.ok) return;
  const scopes = await response.json();
  byId("scopes-section").hidden = scopes.length === 0;
  byId("scopes").replaceChildren(
    ...scopes.map((scope) => {
      const link = element("a", { href: `scopes/${scope.id}/${location.hash}` }, `scope ${scope.id}`);
      const item = element("li", {}, link, " ", element("code", {}, scope.url));
      item.dataset.scope = String(scope.id);
      return item;
    }),
  );
}

byId("refresh").addEventListener("click", () => {
  refreshHandlers();
  refreshScopes();
});
connect();
if (BASE === "/__mocklib/") {
  refreshScopes().catch(() => {});
  setInterval(() => refreshScopes().catch(() => {}), 2000);
}
