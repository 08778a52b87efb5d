package soak

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// words is the vocabulary of generated text: code-review English with identifiers, so that it
// compresses and tokenizes about as a real session's does, and so that searches built from the
// same words find something.
var words = strings.Fields(`the parser reads each token and returns a node for the caller; we keep
	offsets stable across calls so that errors name the right line. check vendor tests before the
	refactor lands, then move the lexer state into its own struct with a reset method and a small
	buffer of lookahead runes. func return error nil if else for range map slice string byte int
	context deadline timeout retry budget file path line column span width height index ledger
	header checksum migration schema cursor batch commit snapshot replica quorum leader follower
	compaction tombstone iterator prefix bloom filter cache eviction latency throughput backoff
	jitter watchdog heartbeat resync session lineage checkpoint objective constraint decision
	parseLedgerHeader readBlock writeFrame decodeEvent applyBatch flushMemtable openStore`)

// searchWords are the words searches ask for: frequent enough to hit, varied enough to rank.
var searchWords = strings.Fields(`parser lexer ledger header checksum migration schema cursor
	compaction tombstone iterator bloom cache eviction watchdog heartbeat resync lineage checkpoint
	parseLedgerHeader readBlock writeFrame decodeEvent applyBatch flushMemtable openStore`)

// rareTokens is how many distinct rare tokens prose mixes in: identifiers such as ledger1234,
// each in a small share of the turns, as a session's own names are. Without them every search
// word would be in nearly every turn, the worst case for search, not the usual one.
const rareTokens = 20000

// rareToken returns one of the rare tokens.
func rareToken(r *rand.Rand) string {
	return fmt.Sprintf("%s%d", searchWords[r.IntN(len(searchWords))], r.IntN(rareTokens))
}

// prose returns about n bytes of space-separated words drawn from r, one in ten a rare token.
// It holds only letters, digits and ".; " so it needs no escaping in JSON.
func prose(r *rand.Rand, n int) string {
	var sb strings.Builder
	sb.Grow(n + 16)
	for sb.Len() < n {
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		if r.IntN(10) == 0 {
			sb.WriteString(rareToken(r))
		} else {
			sb.WriteString(words[r.IntN(len(words))])
		}
	}
	return sb.String()
}

// query returns a search query: half of them one rare token (a name the user remembers), the
// others one or two common search words (many hits to rank).
func query(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return rareToken(r)
	}
	q := searchWords[r.IntN(len(searchWords))]
	if r.IntN(2) == 0 {
		q += " " + searchWords[r.IntN(len(searchWords))]
	}
	return q
}

// uuid returns a random version-4 UUID.
func uuid(r *rand.Rand) string {
	a, b := r.Uint64(), r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xfff, 0x8000|(b>>48)&0x3fff, b&0xffffffffffff)
}

// base62 is the alphabet of OpenCode's ids after their prefix.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// sizeBetween returns a size in [lo, hi) drawn from r, skewed towards lo as real turns are:
// most are short, a few are long.
func sizeBetween(r *rand.Rand, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	f := r.Float64()
	return lo + int(f*f*float64(hi-lo))
}
