// heirloom's lineage viewer: the session tree per project, live; for the session picked, what
// heirloom told it (its blocks), its runs, its transcript; a search box. Plain DOM, no build
// step, no CDN. Everything it shows comes from the sidecar's API on this origin.
"use strict";

const params = new URLSearchParams(location.search);
const scope = params.get("scope") || "";
const expanded = new Set();   // keys of the tree nodes open
let selected = "";            // the key of the session shown
let painted = false;

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v; else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(k ?? ""));
  return e;
};

// api asks the sidecar; a 401 asks the user for the token (kept in a cookie for this origin).
async function api(path, opts = {}) {
  const u = new URL(path, location.origin);
  if (scope && !u.searchParams.has("scope") && !path.startsWith("/api/sessions/search")) u.searchParams.set("scope", scope);
  const resp = await fetch(u, { credentials: "same-origin", ...opts });
  if (resp.status === 401) { $("#login").hidden = false; throw new Error("token required"); }
  if (!resp.ok) { const e = await resp.json().catch(() => ({})); throw new Error(e.error || resp.statusText); }
  return resp.json();
}

$("#login-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const resp = await fetch("/ui/session", { method: "POST", headers: { Authorization: "Bearer " + $("#token").value } });
  if (resp.ok) { $("#login").hidden = true; start(); if (!following) follow(); } else { $("#token").value = ""; $("#token").placeholder = "not that one"; }
});

const short = (id) => id.split(":").map((p) => {
  const j = p.lastIndexOf("_"); let pre = "";
  if (j > 0 && j < 8) { pre = p.slice(0, j + 1); p = p.slice(j + 1); }
  return pre + ([...p].length > 12 ? [...p].slice(0, 8).join("") : p);
}).join(":");
const leaf = (id) => { const i = id.lastIndexOf(":"); return short(i >= 0 && i < id.length - 1 ? id.slice(i + 1) : id); };
const ago = (t) => {
  if (!t) return "-";
  const s = (Date.now() - new Date(t)) / 1000;
  if (s < 5) return "just now"; if (s < 60) return Math.floor(s) + "s ago"; if (s < 3600) return Math.floor(s / 60) + "m ago";
  if (s < 86400) return Math.floor(s / 3600) + "h ago"; return Math.floor(s / 86400) + "d ago";
};
const title = (s) => s.title || s.objective || "";

// node renders one session of the tree, with its sub-agents below when it is open.
function node(s, run, kids) {
  const open = expanded.has(s.id);
  const row = el("div", { class: "node" + (s.id === selected ? " selected" : ""), "data-key": s.id, title: s.id },
    el("span", { class: "toggle", onclick: (ev) => { ev.stopPropagation(); toggle(s.id); } }, kids === null ? "" : open ? "▾" : "▸"),
    el("span", { class: "id" }, s.depth > 0 ? leaf(s.id) : short(s.id)),
    el("span", { class: "badge" + (s.status === "active" ? " status-active" : "") }, s.status),
    el("span", { class: "title" }, (run && (run.description || run.prompt)) || title(s)));
  row.addEventListener("click", () => select(s.id));
  const box = el("div", {}, row);
  if (open && kids) {
    const c = el("div", { class: "children" });
    for (const k of kids) c.append(node(k.session, k.run, k.children));
    box.append(c);
  }
  return box;
}

const lineages = new Map(); // key of an open top-level session → its descendants

async function toggle(key) {
  if (expanded.has(key)) expanded.delete(key); else expanded.add(key);
  await loadTree();
}

// loadTree lists the top-level sessions, newest first, grouped by project; open ones show
// their lineage.
async function loadTree() {
  const { sessions } = await api("/api/sessions?top_level=true&limit=1000"); // the newest 1,000
  for (const s of sessions) {
    if (expanded.has(s.id)) lineages.set(s.id, (await api("/api/sessions/" + encodeURIComponent(s.id) + "/lineage")).descendants);
  }
  const byProject = new Map();
  for (const s of sessions) {
    const p = s.project || "(no project)";
    if (!byProject.has(p)) byProject.set(p, []);
    byProject.get(p).push(s);
  }
  const tree = el("div");
  if (sessions.length === 0) tree.append(el("p", { class: "muted" }, "No session yet: heirloom records them as your harnesses run."));
  for (const [p, list] of byProject) {
    tree.append(el("div", { class: "project" }, p));
    for (const s of list) tree.append(node(s, null, expanded.has(s.id) ? lineages.get(s.id) || [] : []));
  }
  $("#tree").replaceChildren(tree);
  if (!painted) {
    painted = true; // the first frame drawn after the tree is in the document: its first paint
    requestAnimationFrame(() => requestAnimationFrame(() => { window.heirloomFirstPaint = performance.now(); }));
  }
}

async function select(key) {
  selected = key;
  document.querySelectorAll(".node.selected").forEach((n) => n.classList.remove("selected"));
  document.querySelectorAll(`.node[data-key="${CSS.escape(key)}"]`).forEach((n) => n.classList.add("selected"));
  await loadDetail(key);
}

// loadDetail shows a session: what it is, the blocks heirloom gave it, its runs, its transcript.
async function loadDetail(key) {
  const k = encodeURIComponent(key);
  const [{ session: s, run, children }, blocks, runs] = await Promise.all([
    api("/api/sessions/" + k), api("/api/sessions/" + k + "/blocks"), api("/api/runs?session=" + k),
  ]);
  if (key !== selected) return; // another session was picked meanwhile
  const d = el("div", { "data-session": s.id });
  d.append(el("h2", {}, s.id));
  const dl = el("dl");
  const row = (t, v) => { if (v !== "" && v !== undefined && v !== null) dl.append(el("dt", {}, t), el("dd", {}, String(v))); };
  row("harness", s.harness); row("status", s.status); row("objective", s.objective); row("project", s.project);
  row("parent", s.parent_id ? s.parent_id + (s.parent_scope ? " (scope " + s.parent_scope + ")" : "") : "");
  row("depth", s.depth); row("compactions", s.compactions); row("turns", s.turn_count); row("sub-agents", children); row("updated", ago(s.updated_at));
  if (run) row("its run", `${run.status}${run.end_reason && run.end_reason !== run.status ? " (" + run.end_reason + ")" : ""}`);
  d.append(dl);

  d.append(el("h3", {}, `Blocks heirloom gave it (${blocks.blocks.length})`));
  if (blocks.blocks.length === 0) d.append(el("p", { class: "muted" }, "None: a sub-agent gets one at its start, a session after a compaction or when its project has a recent checkpoint."));
  for (const b of blocks.blocks) {
    const head = `${new Date(b.time).toLocaleString()} via ${b.via}: ${b.blocks.join(" + ") || "context"}, ${b.chars} characters` +
      (b.parent ? `, from ${b.parent} (${b.pairing})` : "") + (b.cut ? " " + b.cut : "");
    d.append(el("div", { class: "block" }, el("div", {}, head), el("pre", {}, b.text)));
  }

  d.append(el("h3", {}, `Runs it spawned (${runs.runs.length})`));
  for (const r of runs.runs) {
    d.append(el("div", { class: "run", "data-run": r.id },
      el("div", {}, `${r.type || "sub-agent"}: ${r.description || r.prompt} — ${r.status}${r.end_reason && r.end_reason !== r.status ? " (" + r.end_reason + ")" : ""}`),
      r.result ? el("pre", {}, r.result) : el("span", { class: "muted" }, "no result yet")));
  }

  const turns = el("div");
  d.append(el("h3", {}, "Transcript"), turns);
  let from = 0;
  const more = el("button", { onclick: () => page() }, "more");
  async function page() {
    const t = await api("/api/sessions/" + k + "/transcript?from=" + from + "&limit=50");
    for (const x of t.turns) turns.append(el("div", { class: "turn" }, el("span", { class: "role" }, x.role + (x.tool ? " " + x.tool : "")), x.text || ""));
    from += t.turns.length;
    more.hidden = t.turns.length < 50;
  }
  d.append(more);
  await page();
  if (key !== selected) return;
  $("#detail").replaceChildren(d);
}

$("#search").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const q = $("#q").value.trim();
  if (!q) return;
  const body = { query: q, limit: 50 }; if (scope) body.scope = scope;
  const r = await api("/api/sessions/search", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const d = el("div", {}, el("h2", {}, `“${q}”: ${r.hits.length} turns`));
  for (const h of r.hits) d.append(el("div", { class: "hit" }, el("a", { href: "#", onclick: (e) => { e.preventDefault(); select(h.session); } }, `${short(h.session)} turn ${h.turn} ${h.role}`), el("pre", {}, h.snippet)));
  $("#detail").replaceChildren(d);
});

// follow the live feed: the tree and the session shown are read again when they change.
let pending = null;
let following = false;
function follow() {
  following = true;
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/events" + (scope ? "?scope=" + encodeURIComponent(scope) : ""));
  ws.onopen = () => { $("#live").className = "on"; $("#live").textContent = "● live"; };
  ws.onclose = () => {
    $("#live").className = "off"; $("#live").textContent = "○ reconnecting";
    if ($("#login").hidden) setTimeout(follow, 2000); else following = false; // after the token, start() follows again
  };
  ws.onmessage = (m) => {
    const ev = JSON.parse(m.data);
    clearTimeout(pending);
    pending = setTimeout(() => {
      loadTree().catch(() => {});
      if (selected && (ev.session === selected || (ev.data && ev.data.child === selected))) loadDetail(selected).catch(() => {});
    }, 150);
  };
}

function start() {
  loadTree().then(() => { if (params.get("session")) select(params.get("session")); }).catch((e) => {
    if (e.message !== "token required") $("#tree").replaceChildren(el("p", { class: "muted" }, "Cannot read sessions: " + e.message));
  });
}
start();
follow();
