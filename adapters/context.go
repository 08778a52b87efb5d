package adapters

// DefaultMaxContextChars is the default cap on the context heirloom adds to one model call, in
// UTF-16 code units (JavaScript string length): under Claude Code's 10,000-character
// additionalContext cap, over which Claude Code replaces the text with a file reference, the
// tightest cap of the harnesses. It is the one definition of this default.
const DefaultMaxContextChars = 9500

// The sidecar's default address: where `heirloom serve` listens, and where hooks, plugins and
// the command line look for it when HEIRLOOM_URL does not say. The one definition of it.
const (
	DefaultSidecarAddr = "127.0.0.1:7433"
	DefaultSidecarURL  = "http://" + DefaultSidecarAddr
)
