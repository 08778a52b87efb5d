package inject

import "strings"

// blockSep separates blocks in Join.
const blockSep = "\n\n"

// Join joins the blocks that are not empty (or only whitespace), in order, with a blank line
// between them, and guarantees Len(result) <= max. Earlier blocks have priority ("continuity
// sections first"): when the whole is too long, the last block is Head-cut to the room left, or
// dropped when no room is left for it, then the one before it, and so on. Nothing else is added.
// Join returns "" when max <= 0 or no block has text.
func Join(max int, blocks ...string) string {
	var bs []string
	for _, b := range blocks {
		if strings.TrimSpace(b) != "" {
			bs = append(bs, b)
		}
	}
	if max <= 0 {
		return ""
	}
	// used[i] is the length of bs[:i] joined.
	used := make([]int, len(bs)+1)
	for i, b := range bs {
		used[i+1] = used[i] + Len(b)
		if i > 0 {
			used[i+1] += len(blockSep)
		}
	}
	for len(bs) > 0 && used[len(bs)] > max {
		i := len(bs) - 1
		room := max - used[i]
		if i > 0 {
			room -= len(blockSep)
		}
		if cut := Head(bs[i], room); room > 0 && strings.TrimSpace(cut) != "" {
			bs[i] = cut
			break
		}
		bs = bs[:i]
	}
	return strings.Join(bs, blockSep)
}
