// Package textdiff writes unified diffs of small text files, for the installers' --dry-run:
// what a configuration or plugin file would become.
package textdiff

import (
	"fmt"
	"io"
	"strings"
)

// Unified writes a unified diff of old → new (old empty: a new file) with
// three lines of context.
func Unified(w io.Writer, path string, old, new []byte) {
	a, b := diffLines(old), diffLines(new)
	from := path
	if old == nil {
		from = "/dev/null"
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", from, path)
	ops := lineDiff(a, b)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from ctx lines before this change to ctx lines after the
		// last change that is at most 2*ctx lines further on.
		start := max(0, i-ctx)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*ctx {
				break
			}
		}
		end = min(len(ops), end+ctx)
		aStart, bStart, aN, bN := ops[start].a, ops[start].b, 0, 0
		for _, op := range ops[start:end] {
			if op.kind != '+' {
				aN++
			}
			if op.kind != '-' {
				bN++
			}
		}
		fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
		for _, op := range ops[start:end] {
			fmt.Fprintf(w, "%c%s\n", op.kind, op.text)
		}
		i = end
	}
}

// hunkRange formats a unified-diff range: start is 0-based, n the length.
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// diffLines splits data into lines without their newlines.
func diffLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// diffOp is one line of a diff: kind ' ', '-' or '+', with the 0-based
// line numbers in a and b where it sits.
type diffOp struct {
	kind rune
	text string
	a, b int
}

// lineDiff returns the edit script from a to b through a longest common
// subsequence (quadratic: plugin files are a few hundred lines; past that
// it reports everything replaced).
func lineDiff(a, b []string) []diffOp {
	var ops []diffOp
	if len(a)*len(b) > 4<<20 {
		for i, s := range a {
			ops = append(ops, diffOp{'-', s, i, 0})
		}
		for j, s := range b {
			ops = append(ops, diffOp{'+', s, len(a), j})
		}
		return ops
	}
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i], i, j})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j], i, j})
			j++
		}
	}
	return ops
}
