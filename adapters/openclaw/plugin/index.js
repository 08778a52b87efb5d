// heirloom plugin for OpenClaw: hands every sub-agent its parent's context, and refuses spawns
// past heirloom's spawn limits.
//
// Installed by `heirloom install openclaw`, which copies this folder (openclaw.plugin.json,
// package.json, index.js) to <OpenClaw state dir>/extensions/heirloom and enables it in
// openclaw.json. It runs inside the Gateway, asks the heirloom sidecar over loopback and never
// waits on it for long: every call has a 1500 ms timeout, and any failure (sidecar down, slow,
// an error status, a reply it cannot read) leaves OpenClaw as it was, with one rate-limited
// warning in OpenClaw's log.
//
// Config (plugins.entries.heirloom.config): url (default: $HEIRLOOM_URL, else
// http://127.0.0.1:7433), token (default: $HEIRLOOM_TOKEN; sent as a bearer token when set).
// The typed hooks it uses need plugins.entries.heirloom.hooks.allowConversationAccess: true.
//
// Hooks (OpenClaw 2026.9):
//   before_prompt_build  POST /api/inject {"harness":"openclaw","session":<ctx.sessionKey>
//                        [,"directory":<ctx.workspaceDir>]}; a non-blank
//                        {"context"} comes back as {prependSystemContext}: the top of the
//                        system prompt, on every model request (never saved to history)
//   before_tool_call     for sessions_spawn (called itself, or through Tool Search's tool_call):
//                        POST /api/spawn-check?harness=openclaw&session=<ctx.sessionKey>
//                        {tool, call_id, args: {description: label, prompt: task,
//                        subagent_type: agentId}}; on {"allow": false} it returns {block: true,
//                        blockReason: <the reply's message, as given>}, which the model reads
//                        as the call's result. Any failure lets the call run.
//   subagent_spawned     POST /hooks/openclaw {hook, event, ctx}: names the child's parent
//   before_compaction    POST /hooks/openclaw, likewise (observe only)
//   after_compaction     POST /hooks/openclaw, likewise (observe only)
//
// OpenClaw calls register() several times in one process (startup, discovery, reloads), and a
// reload may evaluate this module again. Registrations never stack up effects: the host passes
// one event object to every handler of a dispatch, and only the first of ours to see it acts.
//
// Plain JavaScript with no dependencies (node: built-ins only), so it loads without a build step
// or an npm install. Requests go through node:http with a private agent rather than fetch: the
// Gateway may route fetch through an HTTP(S)_PROXY, which cannot reach a loopback sidecar.

import http from "node:http"
import https from "node:https"

const PLUGIN_ID = "heirloom"
const DEFAULT_URL = "http://127.0.0.1:7433"
const TIMEOUT_MS = 1500
const WARN_EVERY_MS = 60_000
const MAX_REPLY_BYTES = 4 << 20
// Limits on what is POSTed: the sidecar needs keys, ids and counts, never transcripts.
const MAX_DEPTH = 6
const MAX_STRING = 4096
const MAX_ITEMS = 64
const DROPPED_KEYS = new Set(["messages", "hookInvocation", "toolAuthority"])

// State shared by every copy of this module in the process.
const STATE = Symbol.for("heirloom.openclaw.plugin.v1")
const shared = (globalThis[STATE] ??= {
  // events a handler of ours has already acted on (one dispatch = one event object)
  seen: new WeakSet(),
  lastWarn: 0,
  suppressed: 0,
})

const agents = {
  "http:": new http.Agent({ keepAlive: false }),
  "https:": new https.Agent({ keepAlive: false }),
}

// claim reports whether this handler is the first of ours to see event.
function claim(event) {
  if (event === null || typeof event !== "object") return true
  if (shared.seen.has(event)) return false
  shared.seen.add(event)
  return true
}

// settings resolves the sidecar's URL and token from the plugin's config, then the environment.
function settings(api) {
  const config = api && typeof api.pluginConfig === "object" && api.pluginConfig !== null ? api.pluginConfig : {}
  const pick = (value, env) => (typeof value === "string" && value.trim() !== "" ? value.trim() : (process.env[env] || "").trim())
  const logger = api && api.logger && typeof api.logger.warn === "function" ? api.logger : console
  let base = pick(config.url, "HEIRLOOM_URL") || DEFAULT_URL
  try {
    const u = new URL(base)
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`unsupported scheme ${u.protocol}`)
  } catch (err) {
    logger.warn(`${PLUGIN_ID}: bad sidecar url ${JSON.stringify(base)} (${err && err.message}); using ${DEFAULT_URL}`)
    base = DEFAULT_URL
  }
  return { base: base.replace(/\/+$/, ""), token: pick(config.token, "HEIRLOOM_TOKEN"), logger }
}

// warn logs a failure to reach the sidecar, at most once a minute.
function warn(cfg, message) {
  const now = Date.now()
  if (now - shared.lastWarn < WARN_EVERY_MS) {
    shared.suppressed++
    return
  }
  const more = shared.suppressed > 0 ? `; ${shared.suppressed} more since the last warning` : ""
  shared.lastWarn = now
  shared.suppressed = 0
  try {
    cfg.logger.warn(`${PLUGIN_ID}: sidecar at ${cfg.base} unavailable: ${message} (OpenClaw goes on without it${more})`)
  } catch {
    // a logger that throws is not ours to fail on
  }
}

// call sends one request to the sidecar and resolves to the decoded JSON reply (null for an
// empty body), or undefined on any error, timeout or non-2xx status. It never rejects.
function call(cfg, method, path, params, body) {
  return new Promise((resolve) => {
    let done = false
    let req
    const finish = (value, failure) => {
      if (done) return
      done = true
      clearTimeout(timer)
      if (failure) warn(cfg, `${method} ${path}: ${failure}`)
      resolve(value)
    }
    const timer = setTimeout(() => {
      finish(undefined, `no reply within ${TIMEOUT_MS} ms`)
      if (req) req.destroy()
    }, TIMEOUT_MS)
    try {
      const url = new URL(cfg.base + path)
      if (params) url.search = new URLSearchParams(params).toString()
      const headers = { accept: "application/json" }
      if (cfg.token) headers.authorization = `Bearer ${cfg.token}`
      let payload
      if (body !== undefined) {
        payload = Buffer.from(JSON.stringify(body), "utf8")
        headers["content-type"] = "application/json"
        headers["content-length"] = String(payload.length)
      }
      const mod = url.protocol === "https:" ? https : http
      req = mod.request(url, { method, headers, agent: agents[url.protocol] }, (res) => {
        const chunks = []
        let size = 0
        res.on("data", (chunk) => {
          size += chunk.length
          if (size > MAX_REPLY_BYTES) {
            finish(undefined, `reply over ${MAX_REPLY_BYTES} bytes`)
            req.destroy()
            return
          }
          chunks.push(chunk)
        })
        res.on("error", (err) => finish(undefined, (err && err.message) || String(err)))
        res.on("end", () => {
          const status = res.statusCode || 0
          if (status < 200 || status > 299) return finish(undefined, `status ${status}`)
          const text = Buffer.concat(chunks).toString("utf8").trim()
          if (text === "") return finish(null)
          try {
            finish(JSON.parse(text))
          } catch {
            finish(undefined, "reply is not JSON")
          }
        })
      })
      req.on("error", (err) => finish(undefined, (err && err.message) || String(err)))
      req.end(payload)
    } catch (err) {
      finish(undefined, (err && err.message) || String(err))
    }
  })
}

// contextOf returns the reply's non-blank "context" string, or "".
function contextOf(reply) {
  const text = reply && typeof reply === "object" ? reply.context : undefined
  return typeof text === "string" && text.trim() !== "" ? text : ""
}

// spawnArgs returns the sessions_spawn arguments of a before_tool_call event: the tool called
// by name, or through Tool Search's tool_call {id: "sessions_spawn", args}; undefined for any
// other call.
function spawnArgs(event) {
  const params = event && typeof event.params === "object" && event.params !== null ? event.params : {}
  if (event && event.toolName === "sessions_spawn") return params
  if (event && event.toolName === "tool_call" && params.id === "sessions_spawn") {
    return typeof params.args === "object" && params.args !== null ? params.args : {}
  }
  return undefined
}

// text returns value when it is a string, else "".
function text(value) {
  return typeof value === "string" ? value : ""
}

// slim copies a hook's event or context for the sidecar: JSON values only, transcripts
// (messages) and host capabilities dropped, long strings and lists cut, depth bounded.
function slim(value, depth = 0) {
  switch (typeof value) {
    case "string":
      return value.length > MAX_STRING ? value.slice(0, MAX_STRING) : value
    case "number":
      return Number.isFinite(value) ? value : null
    case "boolean":
      return value
    case "bigint":
      return value.toString()
    case "object":
      break
    default:
      return undefined // functions, symbols, undefined
  }
  if (value === null || depth >= MAX_DEPTH) return null
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => slim(v, depth + 1) ?? null)
  const out = {}
  let n = 0
  for (const key of Object.keys(value)) {
    if (DROPPED_KEYS.has(key)) continue
    if (n++ >= MAX_ITEMS) break
    let v
    try {
      v = slim(value[key], depth + 1)
    } catch {
      continue // a throwing getter
    }
    if (v !== undefined) out[key] = v
  }
  return out
}

// report POSTs one observed hook to the sidecar in the background; the hook returns at once.
function report(cfg, hook, event, ctx) {
  if (!claim(event)) return
  let body
  try {
    body = { hook, event: slim(event) ?? {}, ctx: slim(ctx) ?? {} }
  } catch (err) {
    warn(cfg, `${hook}: cannot encode the event: ${(err && err.message) || err}`)
    return
  }
  void call(cfg, "POST", "/hooks/openclaw", undefined, body)
}

export default {
  id: PLUGIN_ID,
  name: "heirloom",
  description: "Hands every sub-agent its parent's context, and keeps it alive across compaction, through the heirloom sidecar.",
  register(api) {
    if (!api || typeof api.on !== "function") return
    const cfg = settings(api)

    api.on("before_prompt_build", async (event, ctx) => {
      if (!claim(event)) return
      const session = ctx && typeof ctx.sessionKey === "string" ? ctx.sessionKey.trim() : ""
      if (session === "") return
      const request = { harness: "openclaw", session }
      // The Gateway's rows of top-level sessions carry no directory: the workspace tells
      // heirloom the session's project, which recovery at a session's start needs.
      if (ctx && typeof ctx.workspaceDir === "string" && ctx.workspaceDir.trim() !== "") {
        request.directory = ctx.workspaceDir.trim()
      }
      const text = contextOf(await call(cfg, "POST", "/api/inject", undefined, request))
      if (text === "") return
      return { prependSystemContext: text }
    })
    api.on("before_tool_call", async (event, ctx) => {
      const args = spawnArgs(event)
      const session = ctx && typeof ctx.sessionKey === "string" ? ctx.sessionKey.trim() : ""
      if (args === undefined || session === "") return
      const params = { harness: "openclaw", session }
      const body = {
        tool: "sessions_spawn",
        call_id: text(event.toolCallId),
        args: { description: text(args.label), prompt: text(args.task), subagent_type: text(args.agentId) },
      }
      const reply = await call(cfg, "POST", "/api/spawn-check", params, body)
      if (reply && typeof reply === "object" && reply.allow === false) {
        // The sidecar words the refusal (message): shown as given, the same in every harness.
        const reason = typeof reply.reason === "string" && reply.reason ? reply.reason : "no reason given"
        const message = typeof reply.message === "string" && reply.message ? reply.message : reason
        return { block: true, blockReason: message }
      }
    })
    for (const hook of ["subagent_spawned", "before_compaction", "after_compaction"]) {
      api.on(hook, (event, ctx) => {
        report(cfg, hook, event, ctx)
      })
    }
  },
}
