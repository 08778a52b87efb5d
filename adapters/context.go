package adapters

// DefaultMaxContextChars is the default cap on the context heirloom adds to one model call, in
// UTF-16 code units (JavaScript string length): under Claude Code's 10,000-character
// additionalContext cap, over which Claude Code replaces the text with a file reference, the
// tightest cap of the harnesses. It is the one definition of this default.
const DefaultMaxContextChars = 9500

// MaxContextCharsMin and MaxContextCharsMax bound the cap a user may configure in place of
// DefaultMaxContextChars (adapters.claude_code.max_context_chars for the sidecar,
// HEIRLOOM_MAX_CONTEXT_CHARS for the hook shim's merging): below the minimum the blocks would be
// little more than their headings; the maximum is Claude Code's additionalContext cap, over
// which it replaces the text with a file reference. The one definition of both.
const (
	MaxContextCharsMin = 500
	MaxContextCharsMax = 10000
)

// The sidecar's default address: where `heirloom serve` listens, and where hooks, plugins and
// the command line look for it when HEIRLOOM_URL does not say. The one definition of it.
const (
	DefaultSidecarAddr = "127.0.0.1:7433"
	DefaultSidecarURL  = "http://" + DefaultSidecarAddr
)
