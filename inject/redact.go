package inject

import (
	"regexp"
	"strings"
)

// Redacted is what Redact puts in place of a secret.
const Redacted = "[REDACTED]"

// A redaction rule: every match of re is replaced by Redacted. With value > 0, only that
// submatch (the value) is replaced and the rest of the match (a key name, a scheme, a separator)
// stays; with check set, a match is replaced only when check says its value is a secret.
type redaction struct {
	re *regexp.Regexp
	// any lists literals of which the text must hold one for re to match at all, so most text
	// skips re entirely.
	any []string
	// fold means re is anchored (^) and starts with any[0] in any case: it is tried only where
	// any[0] (lower case) occurs, ignoring ASCII case. The regexp engine cannot skip ahead to a
	// case-insensitive literal by itself.
	fold bool
	// wordStart rejects a match that follows a letter, digit or '_': the \b of these rules, kept
	// out of re so that re starts with a literal the regexp engine can scan for quickly.
	wordStart bool
	value     int                    // the submatch holding the value; 0 means the whole match
	check     func(c candidate) bool // nil means always a secret
}

// candidate is one value a checked rule found.
type candidate struct {
	value string // the value as written, quotes included
	sep   string // the separator before it ("=", ": ", …); "" when the rule has none
	next  byte   // the byte after the value; 0 at the end of the text
}

// The rules, applied in order, before assignments (see redactAssignments). They are compiled once
// and never changed.
var redactions = []redaction{
	// PEM private key blocks, BEGIN line through END line; a block with no END line runs to the
	// end of the text, so a cut-off key is never half shown.
	{re: regexp.MustCompile(`(?s)-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*)`),
		any: []string{"PRIVATE KEY"}},
	// JSON Web Tokens: header.payload.signature, the first two base64url JSON objects.
	{re: regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`),
		any: []string{"eyJ"}, wordStart: true},
	// Anthropic and OpenAI keys.
	{re: regexp.MustCompile(`sk-(?:ant|proj|svcacct|admin)-[A-Za-z0-9_-]{16,}`), any: []string{"sk-"}, wordStart: true},
	{re: regexp.MustCompile(`sk-[A-Za-z0-9]{20,}`), any: []string{"sk-"}, wordStart: true},
	// Stripe-style keys.
	{re: regexp.MustCompile(`[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), any: []string{"k_live_", "k_test_"}, wordStart: true},
	// GitHub tokens.
	{re: regexp.MustCompile(`gh[opsur]_[A-Za-z0-9]{20,}`), any: []string{"ghp_", "gho_", "ghs_", "ghu_", "ghr_"}, wordStart: true},
	{re: regexp.MustCompile(`github_pat_[A-Za-z0-9_]{20,}`), any: []string{"github_pat_"}, wordStart: true},
	// Slack tokens.
	{re: regexp.MustCompile(`xox[abposr]-[A-Za-z0-9-]{10,}`), any: []string{"xox"}, wordStart: true},
	// Google API keys.
	{re: regexp.MustCompile(`AIza[0-9A-Za-z_-]{30,}`), any: []string{"AIza"}, wordStart: true},
	// AWS access key ids.
	{re: regexp.MustCompile(`(?:AKIA|ASIA)[A-Z0-9]{16}\b`), any: []string{"AKIA", "ASIA"}, wordStart: true},
	// AWS secret access keys, by their key name.
	{re: regexp.MustCompile(`(?i)^(aws_secret_access_key["']?[ \t]*[:=][ \t]*["']?)([A-Za-z0-9/+=]{30,})`),
		any: []string{"aws_secret_access_key"}, fold: true, value: 2},
	// Authorization headers, whatever the scheme.
	{re: regexp.MustCompile(`(?i)^(authorization["']?[ \t]*[:=][ \t]*["']?(?:(?:bearer|basic|token|bot|digest|negotiate)[ \t]+)?)([^\s"'` + "`" + `,;]+)`),
		any: []string{"authorization"}, fold: true, wordStart: true, value: 2, check: randomCredential},
	// Bearer tokens anywhere.
	{re: regexp.MustCompile(`(?i)^(bearer[ \t]+)([A-Za-z0-9._~+/=-]*[A-Za-z0-9_~+/=-])`),
		any: []string{"bearer"}, fold: true, wordStart: true, value: 2, check: randomCredential},
}

// Redact returns s with secrets replaced by "[REDACTED]": PEM private key blocks (whole),
// Anthropic/OpenAI/Stripe-style keys, AWS access key ids and secret access keys, GitHub, Slack and
// Google API tokens, JWTs, Authorization header credentials and Bearer tokens, passwords in URLs,
// and the value (never the key name) of assignments whose key says secret: password, passwd,
// secret, token, api_key/apikey, access_key, private_key, as in `DB_PASSWORD=…`,
// `"apiToken": "…"` or `secret: …`.
//
// It leans away from false positives in prose and code: key names must contain a secret word as a
// whole part ("tokenizer", "max_tokens" are not), and an assigned value is left alone when it is a
// number of fewer than 8 digits, a placeholder (`${VAR}`, `<your-key>`, `xxxx`, `***`), a type or
// literal name (`string`, `null`, `true`), a function call, or, for an unquoted value after ": " or
// " = ", an ordinary word (letters only and shorter than 16). Bearer and Authorization credentials
// must likewise look random (a digit or symbol, or 16+ characters).
//
// Redact is idempotent: Redact(Redact(s)) == Redact(s). Invalid UTF-8 passes through unchanged.
func Redact(s string) string {
	// One pass catches everything in practice; a second runs only when the first changed something,
	// and the loop stops at a fixed point so the result is idempotent.
	for range 4 {
		t := redactOnce(s)
		if t == s {
			return t
		}
		s = t
	}
	return s
}

// redactOnce applies every rule once, in order, then redacts URL passwords and assignments.
func redactOnce(s string) string {
	lower := lowerASCII(s)
	for _, r := range redactions {
		if !containsAny(s, lower, r.any, r.fold) {
			continue
		}
		if t := r.apply(s, lower); t != s {
			s, lower = t, lowerASCII(t)
		}
	}
	if t := redactURLPasswords(s); t != s {
		s, lower = t, lowerASCII(t)
	}
	return redactAssignments(s, lower)
}

// apply redacts every match of r in s; lower is lowerASCII(s).
func (r redaction) apply(s, lower string) string {
	var b strings.Builder
	changed := false
	last := 0 // s[:last] is in b or unchanged
	for pos := 0; pos < len(s); {
		var m []int
		if r.fold {
			k := strings.Index(lower[pos:], r.any[0])
			if k < 0 {
				break
			}
			if m = r.re.FindStringSubmatchIndex(s[pos+k:]); m == nil {
				pos += k + 1
				continue
			}
			pos += k
		} else if m = r.re.FindStringSubmatchIndex(s[pos:]); m == nil {
			break
		}
		for i := range m {
			if m[i] >= 0 {
				m[i] += pos
			}
		}
		if r.wordStart && m[0] > 0 && isWordByte(s[m[0]-1]) {
			pos = m[0] + 1 // a later, overlapping match may still start at a word boundary
			continue
		}
		pos = max(m[1], m[0]+1)
		vs, ve := m[0], m[1]
		if r.value > 0 {
			vs, ve = m[2*r.value], m[2*r.value+1]
		}
		if vs < 0 || vs == ve {
			continue
		}
		if r.check != nil && !r.check(candidate{value: s[vs:ve], next: byteAt(s, ve)}) {
			continue
		}
		vs, ve = unquote(s, vs, ve)
		b.WriteString(s[last:vs])
		b.WriteString(Redacted)
		last, changed = ve, true
	}
	if !changed {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// unquote narrows s[vs:ve] to inside its quotes when it is quoted.
func unquote(s string, vs, ve int) (int, int) {
	if q := s[vs]; (q == '"' || q == '\'') && ve-vs >= 2 && s[ve-1] == q {
		return vs + 1, ve - 1
	}
	return vs, ve
}

// byteAt is s[i], or 0 past the end.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// hasWordAt reports whether one of secretWords starts at lower[i].
func hasWordAt(lower string, i int) bool {
	switch lower[i] {
	case 'p', 's', 't', 'k':
		for _, w := range secretWords {
			if strings.HasPrefix(lower[i:], w) {
				return true
			}
		}
	}
	return false
}

// containsAny reports whether s contains one of subs; with fold set it looks in lower, s in lower
// case (see lowerASCII), and subs are lower case. No subs means yes.
func containsAny(s, lower string, subs []string, fold bool) bool {
	if len(subs) == 0 {
		return true
	}
	if fold {
		s = lower
	}
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// lowerASCII lower-cases the ASCII letters of s and leaves every other byte, so offsets into the
// result are offsets into s.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for j := i; j < len(s); j++ {
		c := s[j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// isWordByte reports whether c is an ASCII letter, digit or '_'.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// isLetter reports whether c is an ASCII letter.
func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// isSchemeByte reports whether c can be part of a URL scheme.
func isSchemeByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'
}

// isSpaceByte reports whether c is ASCII whitespace as the regexp \s class has it.
func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// isIdentByte reports whether c can be part of an assignment's key.
func isIdentByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '-'
}

// isBareValueByte reports whether c can be part of an unquoted assigned value.
func isBareValueByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\f', '\r', '"', '\'', '`', ',', ';', '&', '[', ']', '{', '}', '(', ')', '<', '>':
		return false
	}
	return true
}
