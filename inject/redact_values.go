package inject

import (
	"regexp"
	"strings"
)

// assignmentKey matches a whole assignment head, KEY SEP: KEY contains one of the secret words as
// a whole part of an identifier (snake, kebab, dotted or camelCase: "db_password", "apiToken",
// but not "tokenizer" or "max_tokens"), in any ASCII case, optionally closed by a quote; SEP is
// "=", ":=" or ":" with blanks around it. Submatch 1 is SEP. The value after it is read by
// assignmentValue.
var assignmentKey = regexp.MustCompile(`^[A-Za-z0-9_.-]*(?:` + foldASCII("password|passwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key") + `)` +
	`(?:[_.-][A-Za-z0-9]+|[A-Z][a-z0-9]+)*["']?([ \t]*(?::=|=|:)[ \t]*)$`)

// secretWords are what redactAssignments scans for before trying assignmentKey: every secret word
// of assignmentKey contains one of them.
var secretWords = []string{"password", "passwd", "secret", "token", "key"}

// Limits of an assignment: how far back from a secret word its key may start, and how far a
// quoted value may run before its closing quote (longer ones are not recognised).
const (
	assignmentKeyBack = 256
	quotedValueMax    = 4096
)

// foldASCII turns the letters of a regexp without classes into ASCII case-insensitive classes:
// "ab" becomes "[Aa][Bb]". Unlike (?i) it never matches non-ASCII letters (the Kelvin sign for
// k), so a match is always where an ASCII scan for the word found it.
func foldASCII(re string) string {
	var b strings.Builder
	for _, c := range re {
		if 'a' <= c && c <= 'z' {
			b.WriteString("[" + string(c-'a'+'A') + string(c) + "]")
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// urlUserinfo matches a URL from its scheme through the "@" after its userinfo; submatch 1 is the
// password.
var urlUserinfo = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@`)

// URL limits: how long a scheme may be, and how far past "://" the "@" may be.
const (
	schemeMax   = 32
	userinfoMax = 1024
)

// redactURLPasswords redacts the password of every scheme://user:password@host URL whose password
// is not a placeholder. It tries urlUserinfo only at each "://".
func redactURLPasswords(s string) string {
	var b strings.Builder
	changed := false
	last := 0 // s[:last] is in b or unchanged
	for from := 0; from < len(s); {
		k := strings.Index(s[from:], "://")
		if k < 0 {
			break
		}
		k += from
		from = k + 3
		start := k
		for start > last && k-start < schemeMax && isSchemeByte(s[start-1]) {
			start--
		}
		for start < k && !isLetter(s[start]) {
			start++
		}
		if start == k || start > 0 && isWordByte(s[start-1]) {
			continue
		}
		end := k + 3
		for end < len(s) && end-k < userinfoMax && !isSpaceByte(s[end]) {
			end++
		}
		m := urlUserinfo.FindStringSubmatchIndex(s[start:end])
		if m == nil {
			continue
		}
		vs, ve := start+m[2], start+m[3]
		from = start + m[1]
		if !urlPassword(candidate{value: s[vs:ve]}) {
			continue
		}
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

// redactAssignments redacts the values of assignments whose key names a secret (see
// assignmentKey, assignmentValue and assignedSecret). It scans for the secret words and tries
// assignmentKey only on the identifier around each, which keeps it fast on long text. lower
// is lowerASCII(s).
func redactAssignments(s, lower string) string {
	if !containsAny(lower, lower, secretWords, false) {
		return s
	}
	var b strings.Builder
	changed := false
	last := 0 // s[:last] is in b or unchanged
	done := 0 // no assignment starts before this
	for i := 0; i < len(lower); i++ {
		if !hasWordAt(lower, i) {
			continue
		}
		vs := valueStart(s, i)
		if vs < 0 {
			continue
		}
		start := i
		for start > done && start > i-assignmentKeyBack && isIdentByte(s[start-1]) {
			start--
		}
		m := assignmentKey.FindStringSubmatchIndex(s[start:vs])
		if m == nil {
			continue
		}
		ve := assignmentValue(s, vs)
		if ve < 0 {
			continue
		}
		done = ve
		i = ve - 1
		c := candidate{value: s[vs:ve], sep: s[start+m[2] : start+m[3]], next: byteAt(s, ve)}
		if !assignedSecret(c) {
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

// valueStart returns where the value would start if the identifier running through s[i] is the
// key of an assignment: after the identifier, an optional closing quote, blanks, a separator
// (":=", "=" or ":") and blanks. It returns -1 when no separator follows.
func valueStart(s string, i int) int {
	for i < len(s) && isIdentByte(s[i]) {
		i++
	}
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	switch {
	case strings.HasPrefix(s[i:], ":="):
		i += 2
	case i < len(s) && (s[i] == ':' || s[i] == '='):
		i++
	default:
		return -1
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// assignmentValue returns the end of the value starting at s[vs]: a "double" or 'single' quoted
// string on one line (closed within quotedValueMax bytes), or a bare run of bytes that are not
// blanks, quotes or the delimiters ,;&[]{}()<> and that does not start with '='. It returns -1
// when there is no value.
func assignmentValue(s string, vs int) int {
	if vs >= len(s) {
		return -1
	}
	switch q := s[vs]; {
	case q == '"' || q == '\'':
		rest := s[vs+1 : min(len(s), vs+1+quotedValueMax)]
		k := strings.IndexAny(rest, string(q)+"\n")
		if k < 0 || rest[k] != q {
			return -1
		}
		return vs + 1 + k + 1
	case q == '=' || !isBareValueByte(q):
		return -1
	}
	ve := vs
	for ve < len(s) && isBareValueByte(s[ve]) {
		ve++
	}
	return ve
}

// urlPassword accepts the password of a URL's userinfo unless it is a placeholder.
func urlPassword(c candidate) bool {
	return !placeholder(c.value)
}

// randomCredential accepts an Authorization or Bearer credential that looks random: not a
// placeholder, and 16 characters or more, or 6 or more with a digit or symbol in them. "Bearer
// instruments" in prose stays.
func randomCredential(c candidate) bool {
	return !placeholder(c.value) && looksRandom(c.value, 6)
}

// assignedSecret decides whether the value of a KEY SEP VALUE assignment with a secret-sounding
// key is a secret. Quoted values are, unless a placeholder. Unquoted values are not when they are
// a function call (`getpass()`) or template (`${X}`), a dotted reference (`config.token`) or a
// placeholder; after a tight "=" (env, INI and query-string style: `DB_PASSWORD=hunter2`) any
// other value is; after ":" or a spaced "=" (YAML, prose, code) the value must look random (see
// looksRandom, with no length floor), so "the token: it expires" stays.
func assignedSecret(c candidate) bool {
	v := c.value
	if q := v[0]; (q == '"' || q == '\'') && len(v) >= 2 && v[len(v)-1] == q {
		return !placeholder(v[1 : len(v)-1])
	}
	if c.next == '(' || c.next == '{' || placeholder(v) || dottedName.MatchString(v) {
		return false
	}
	if c.sep == "=" {
		return true
	}
	return looksRandom(v, 1)
}

// dottedName matches a dotted identifier path such as config.token or process.env.TOKEN.
var dottedName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$`)

// looksRandom reports whether v (trailing sentence punctuation ignored) is 16 characters or more,
// or at least min characters with a digit or symbol among them.
func looksRandom(v string, min int) bool {
	v = strings.TrimRight(v, ".,!?:")
	if len(v) >= 16 {
		return true
	}
	if len(v) < min {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return true
		}
	}
	return false
}

// placeholder reports whether v is not a secret whatever its key says: empty, already redacted, a
// number of fewer than 8 digits, a variable or template reference, an <angle-bracketed> hint, a
// mask such as "xxxx" or "****", or a type or literal name.
func placeholder(v string) bool {
	switch {
	case v == "", v == Redacted:
		return true
	case len(v) < 8 && strings.Trim(v, "0123456789") == "":
		return true
	case strings.HasPrefix(v, "${"), strings.HasPrefix(v, "$("), strings.HasPrefix(v, "{{"),
		strings.HasPrefix(v, "%("), envName.MatchString(v):
		return true
	case strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"):
		return true
	case strings.Trim(v, "*xX.•#_-") == "":
		return true
	}
	return notSecrets[strings.ToLower(v)]
}

// envName matches a bare environment variable reference: $NAME.
var envName = regexp.MustCompile(`^\$[A-Za-z_][A-Za-z0-9_]*$`)

// notSecrets are words that show up as values of secret-named keys in code and docs without being
// secrets: types, literals and hints.
var notSecrets = map[string]bool{
	"true": true, "false": true, "null": true, "nil": true, "none": true, "undefined": true,
	"string": true, "str": true, "int": true, "bool": true, "boolean": true, "number": true,
	"bytes": true, "any": true, "object": true, "optional": true, "required": true,
	"redacted": true, "hidden": true, "masked": true, "secret": true, "password": true, "token": true,
	"changeme": true, "example": true,
}
