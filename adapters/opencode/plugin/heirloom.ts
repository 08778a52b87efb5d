// heirloom plugin for OpenCode: hands every child session its parent's context.
//
// Installed by `heirloom install opencode` into .opencode/plugin/ (one project) or the global
// OpenCode plugin dir; OpenCode loads it at server start. It asks the heirloom sidecar over
// loopback and never waits on it for long: every call has a short timeout, and any failure
// (sidecar down, slow, an error status, a reply it cannot read) leaves OpenCode as it was.
//
// Environment: HEIRLOOM_URL (default http://127.0.0.1:7433), HEIRLOOM_TOKEN (sent as a bearer
// token when set).
//
// Hooks (OpenCode 1.18):
//   event                               remembers each session's parentID from session.created,
//                                       so requests can name the parent explicitly
//   experimental.chat.system.transform  POST /api/inject → push the context onto output.system
//   experimental.session.compacting     POST /api/inject {purpose: "compacting"} → output.context
//   tool.execute.before (tool "task")   POST /api/spawn-check → throw only on {"allow": false},
//                                       with the reply's message as the error, as given
//
// No imports: it must load with nothing installed beside it. Every export of a plugin file must
// be a plugin function, so this file exports exactly one. Installed twice (global and project
// dir), both copies run: the same text is pushed once.

const BASE_URL = (process.env.HEIRLOOM_URL || "http://127.0.0.1:7433").replace(/\/+$/, "")
const TOKEN = process.env.HEIRLOOM_TOKEN || ""
const TIMEOUT_MS = 1000
const MAX_PARENTS = 1000

// Bun's fetch sends even loopback requests through HTTP_PROXY unless NO_PROXY names the host,
// and the proxy cannot reach our loopback sidecar. Naming a plain-http loopback sidecar as its
// own proxy sends each request straight to it (in absolute form, which any HTTP server accepts).
const DIRECT = /^http:\/\/(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/i.test(BASE_URL) ? { proxy: BASE_URL } : {}

type Params = Record<string, string>

// call sends one request to heirloom and returns the decoded JSON reply, or undefined on any
// error, timeout or non-2xx status. It never throws.
async function call(method: "GET" | "POST", path: string, params: Params, body?: unknown): Promise<any> {
  const abort = new AbortController()
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS)
  try {
    const headers: Record<string, string> = { accept: "application/json" }
    if (TOKEN) headers.authorization = `Bearer ${TOKEN}`
    if (body !== undefined) headers["content-type"] = "application/json"
    const query = Object.keys(params).length > 0 ? `?${new URLSearchParams(params)}` : ""
    const res = await fetch(`${BASE_URL}${path}${query}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: abort.signal,
      ...DIRECT,
    })
    if (!res.ok) {
      await res.body?.cancel()
      return undefined
    }
    return await res.json()
  } catch {
    return undefined
  } finally {
    clearTimeout(timer)
  }
}

// contextOf returns the reply's non-blank "context" string, or "".
function contextOf(reply: any): string {
  const text = reply && typeof reply === "object" ? reply.context : undefined
  return typeof text === "string" && text.trim() !== "" ? text : ""
}

// refusal is the text of a spawn-check refusal: the sidecar's message as given, else its
// reason (an older sidecar, or a reply without one).
function refusal(reply: any): string {
  if (typeof reply.message === "string" && reply.message) return reply.message
  return typeof reply.reason === "string" && reply.reason ? reply.reason : "no reason given"
}

export const HeirloomPlugin = async (ctx?: { directory?: string }) => {
  // The instance's directory is every session's project: sent along so heirloom has it even
  // when OpenCode's events about a session have not said it.
  const directory = typeof ctx?.directory === "string" ? ctx.directory : ""

  // parents maps a session id to its parent's, learnt from session.created events. Oldest
  // entries go first once it is full; a session missing here is simply asked about without
  // a parent, and heirloom uses what it learnt from OpenCode's event stream.
  const parents = new Map<string, string>()

  const params = (sessionID: string, extra: Params = {}): Params => {
    const p: Params = { harness: "opencode", session: sessionID, ...extra }
    if (directory) p.directory = directory
    const parent = parents.get(sessionID)
    if (parent) p.parent = parent
    return p
  }

  return {
    event: async ({ event }: { event: any }) => {
      try {
        const info = event?.properties?.info
        if (event?.type === "session.created" && typeof info?.id === "string" && typeof info?.parentID === "string") {
          if (parents.size >= MAX_PARENTS) parents.delete(parents.keys().next().value as string)
          parents.set(info.id, info.parentID)
        } else if (event?.type === "session.deleted" && typeof info?.id === "string") {
          parents.delete(info.id)
        }
      } catch {
        // an event of an unexpected shape is not ours to fail on
      }
    },

    "experimental.chat.system.transform": async (input: { sessionID?: string }, output: { system: string[] }) => {
      if (!input?.sessionID || !Array.isArray(output?.system)) return
      const text = contextOf(await call("POST", "/api/inject", {}, params(input.sessionID)))
      if (text && !output.system.includes(text)) output.system.push(text)
    },

    "experimental.session.compacting": async (input: { sessionID: string }, output: { context: string[] }) => {
      if (!input?.sessionID || !Array.isArray(output?.context)) return
      const text = contextOf(await call("POST", "/api/inject", {}, params(input.sessionID, { purpose: "compacting" })))
      if (text && !output.context.includes(text)) output.context.push(text)
    },

    "tool.execute.before": async (input: { tool: string; sessionID: string; callID?: string }, output: { args: any }) => {
      if (input?.tool !== "task" || !input.sessionID) return
      const reply = await call("POST", "/api/spawn-check", params(input.sessionID), {
        tool: input.tool,
        call_id: input.callID ?? "",
        args: output?.args ?? {},
      })
      if (reply && typeof reply === "object" && reply.allow === false) {
        // The sidecar words the refusal (message): shown as given, the same in every harness.
        throw new Error(refusal(reply))
      }
    },
  }
}
