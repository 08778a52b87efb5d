package inject

import "github.com/heirloom-dev/heirloom/inject/textcut"

// Len returns the length of s in UTF-16 code units: what JavaScript's String.prototype.length
// reports, and so what Claude Code counts against its additionalContext cap (see textcut.Len).
func Len(s string) int { return textcut.Len(s) }
