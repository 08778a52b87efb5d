package inject

import "github.com/heirloom-dev/heirloom/inject/textcut"

// Head returns s cut to at most max UTF-16 units (see Len), keeping the start, with " […]"
// appended when cut; see textcut.Head.
func Head(s string, max int) string { return textcut.Head(s, max) }

// Tail returns s cut to at most max UTF-16 units, keeping the end, with "[…] " prefixed when cut;
// see textcut.Tail.
func Tail(s string, max int) string { return textcut.Tail(s, max) }

// head is Head; with cut set it marks s as cut even when s already fits (its source was clipped
// before s was made).
func head(s string, max int, cut bool) string {
	if cut {
		return textcut.HeadMarked(s, max)
	}
	return textcut.Head(s, max)
}

// tail is Tail; cut as for head.
func tail(s string, max int, cut bool) string {
	if cut {
		return textcut.TailMarked(s, max)
	}
	return textcut.Tail(s, max)
}
