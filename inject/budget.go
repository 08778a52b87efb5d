package inject

import "github.com/heirloom-dev/heirloom/adapters"

// Default budgets, in UTF-16 units (see Len).
const (
	DefaultTailChars = DefaultMaxChars                 // the transcript tail of the inherited block: what the rest leaves
	DefaultMaxChars  = adapters.DefaultMaxContextChars // a whole reply: under Claude Code's 10,000-unit additionalContext cap
)

// Budget caps the size of a block, in UTF-16 units (see Len). A field that is zero or negative
// takes its default.
type Budget struct {
	TailChars int // cap for the transcript-tail section (default DefaultTailChars)
	MaxChars  int // cap for the whole block (default DefaultMaxChars)
}

// withDefaults returns b with zero and negative fields set to their defaults.
func (b Budget) withDefaults() Budget {
	if b.TailChars <= 0 {
		b.TailChars = DefaultTailChars
	}
	if b.MaxChars <= 0 {
		b.MaxChars = DefaultMaxChars
	}
	return b
}
