package inject

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Packet is what a sub-agent is told of itself in its inherited block: the spawn packet. The
// zero value adds nothing.
type Packet struct {
	// Task is the sub-agent's task prompt: the objective heirloom keeps for it (the objective
	// reinforcement restates it after a compaction). "" omits the section.
	Task string
	// Files are the files the task names (see TaskFiles), in the order it names them.
	Files []string
	// Workspace is the sub-agent's working directory; "" omits the section.
	Workspace string
	// Depth is the sub-agent's depth: 1 for a child of a top-level session. 0 means unknown and
	// omits the section.
	Depth int
	// MaxDepth is the deepest a sub-agent may be (spawn.max_depth); 0 means no limit.
	MaxDepth int
}

// Caps of the packet's sections, in UTF-16 units.
const (
	taskChars    = 1500 // the task
	maxTaskFiles = 10   // files listed at most
)

// Packet section headings, each preceded by a blank line.
const (
	taskHeading      = "\n\n### Your task\n"
	taskFilesHeading = "\n\n### Files your task names\n"
	workspaceHeading = "\n\n### Your workspace\n"
	depthHeading     = "\n\n### Your depth\n"
)

// taskNote follows the task: why it is restated.
const taskNote = "\n(heirloom keeps this as your objective: it is restated to you after a compaction)"

// packetSections are the packet's rendered parts.
type packetSections struct {
	task  string   // the task section, heading and note included; "" for none
	files []string // "- path" lines of the files it names
	place string   // the workspace and depth sections, headings included
}

// renderPacket renders p's sections; every piece is redacted and bounded.
func renderPacket(p Packet) packetSections {
	var s packetSections
	if task := fitHead(p.Task, taskChars, normalizeLines); task != "" {
		s.task = taskHeading + task + taskNote
	}
	if ws := fitTail(p.Workspace, pathChars, flatten); ws != "" {
		s.place = workspaceHeading + ws
	}
	if d := depthLine(p.Depth, p.MaxDepth); d != "" {
		s.place += depthHeading + d
	}
	if s.files = fileList(p.Files); len(s.files) > maxTaskFiles {
		s.files = s.files[:maxTaskFiles]
	}
	return s
}

// depthLine states a sub-agent's depth against the limit: "depth 1 of 3 (spawn.max_depth)",
// at the limit with what that means for its own spawns, "depth 1 (no spawn.max_depth)"
// without one; "" when the depth is unknown.
func depthLine(depth, max int) string {
	switch {
	case depth <= 0:
		return ""
	case max <= 0:
		return "depth " + strconv.Itoa(depth) + " (no spawn.max_depth)"
	case depth >= max:
		return "depth " + strconv.Itoa(depth) + " of " + strconv.Itoa(max) + " (spawn.max_depth): a sub-agent you spawn would be deeper than the limit"
	}
	return "depth " + strconv.Itoa(depth) + " of " + strconv.Itoa(max) + " (spawn.max_depth)"
}

// taskFilesBytes is how much of a task TaskFiles reads: its first 64 KiB.
const taskFilesBytes = 64 << 10

// TaskFiles returns the file paths text names (in its first 64 KiB), in order, each once, at
// most maxTaskFiles: words
// that look like a path with a directory ("internal/parse.go", "./run.sh", "docs/", "~/.zshrc")
// or like a file name with a known extension ("main.go", "README.md", "Makefile"). Quotes,
// brackets, emphasis and trailing punctuation around a word are dropped, and so is a ":line" or
// ":line:col" suffix; URLs, "and/or"-like pairs of words, dates, version numbers, words with
// invalid UTF-8 and library names such as "Node.js" are not paths.
func TaskFiles(text string) []string {
	text, _ = clipHead(text, taskFilesBytes)
	var out []string
	seen := map[string]bool{}
	for _, word := range strings.FieldsFunc(clean(text), func(r rune) bool { return unicode.IsSpace(r) || r == ',' || r == ';' }) {
		p := pathOf(word)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if out = append(out, p); len(out) == maxTaskFiles {
			break
		}
	}
	return out
}

// pathOf returns the path word stands for, or "".
func pathOf(word string) string {
	w := strings.TrimLeft(word, "\"'`([{<*")
	w = strings.TrimRight(w, "\"'`)]}>*.,:;!?")
	if strings.Contains(w, "://") || len(w) > 300 || strings.ContainsRune(w, utf8.RuneError) || strings.IndexFunc(w, unicode.IsControl) >= 0 ||
		strings.IndexFunc(w, unicode.IsLetter) < 0 {
		return ""
	}
	w = stripLineSuffix(w)
	if w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "@") || strings.HasPrefix(w, "$") {
		return ""
	}
	if strings.ContainsRune(w, '/') {
		if strings.HasPrefix(w, "/") || strings.HasPrefix(w, "./") || strings.HasPrefix(w, "../") || strings.HasPrefix(w, "~/") {
			if len(strings.Trim(w, "/.~")) == 0 {
				return "" // "/", "./", "~/" alone
			}
			return w
		}
		base := w[strings.LastIndexByte(strings.TrimSuffix(w, "/"), '/')+1:]
		if strings.HasSuffix(w, "/") || hasExtension(base) || strings.Count(w, "/") >= 2 {
			return w // a directory, a file in one, or a deeper path: not "and/or"
		}
		return ""
	}
	if knownFileName(w) {
		return w
	}
	return ""
}

// stripLineSuffix drops a trailing ":12" or ":12:3".
func stripLineSuffix(w string) string {
	for range 2 {
		i := strings.LastIndexByte(w, ':')
		if i <= 0 || i == len(w)-1 || strings.TrimFunc(w[i+1:], func(r rune) bool { return r >= '0' && r <= '9' }) != "" {
			return w
		}
		w = w[:i]
	}
	return w
}

// hasExtension reports whether name ends in a dot and 1 to 10 letters or digits, at least one
// a letter, after at least one character.
func hasExtension(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || i == len(name)-1 || len(name)-i-1 > 10 {
		return false
	}
	letter := false
	for _, r := range name[i+1:] {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letter = true
		case r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return letter
}

// knownFileName reports whether a word without a slash is a file name: a name with one of the
// extensions code and its projects use, or a well-known extensionless file.
func knownFileName(w string) bool {
	switch w {
	case "Makefile", "Dockerfile", "Containerfile", "Justfile", "Rakefile", "Gemfile", "Procfile", "Vagrantfile",
		"LICENSE", "CODEOWNERS", "go.mod", "go.sum":
		return true
	}
	if !hasExtension(w) {
		return false
	}
	dot := strings.LastIndexByte(w, '.')
	if _, ok := fileExtensions[strings.ToLower(w[dot+1:])]; !ok {
		return false
	}
	_, library := jsLibraries[strings.ToLower(w)]
	return !library && strings.IndexFunc(w[:dot], unicode.IsLetter) >= 0
}

// jsLibraries are names of JavaScript projects that read like file names in prose.
var jsLibraries = map[string]struct{}{
	"node.js": {}, "next.js": {}, "nuxt.js": {}, "vue.js": {}, "react.js": {}, "express.js": {}, "three.js": {},
	"d3.js": {}, "chart.js": {}, "ember.js": {}, "backbone.js": {}, "angular.js": {}, "deno.js": {}, "nest.js": {},
}

// fileExtensions are the extensions that make a bare word a file name.
var fileExtensions = map[string]struct{}{
	"go": {}, "py": {}, "rb": {}, "rs": {}, "c": {}, "h": {}, "cc": {}, "cpp": {}, "hpp": {}, "cs": {}, "java": {},
	"kt": {}, "kts": {}, "scala": {}, "swift": {}, "m": {}, "mm": {}, "php": {}, "pl": {}, "lua": {}, "zig": {},
	"dart": {}, "ex": {}, "exs": {}, "erl": {}, "hs": {}, "ml": {}, "clj": {}, "r": {}, "jl": {}, "nim": {},
	"js": {}, "mjs": {}, "cjs": {}, "ts": {}, "tsx": {}, "jsx": {}, "vue": {}, "svelte": {}, "astro": {},
	"html": {}, "htm": {}, "css": {}, "scss": {}, "sass": {}, "less": {},
	"json": {}, "jsonc": {}, "json5": {}, "jsonl": {}, "yaml": {}, "yml": {}, "toml": {}, "ini": {}, "cfg": {},
	"conf": {}, "env": {}, "xml": {}, "csv": {}, "tsv": {}, "sql": {}, "proto": {}, "graphql": {}, "gql": {},
	"md": {}, "mdx": {}, "rst": {}, "txt": {}, "adoc": {}, "tex": {},
	"sh": {}, "bash": {}, "zsh": {}, "fish": {}, "ps1": {}, "bat": {}, "cmd": {},
	"tf": {}, "tfvars": {}, "hcl": {}, "nix": {}, "gradle": {}, "lock": {}, "mod": {}, "sum": {},
	"dockerfile": {}, "makefile": {}, "mk": {}, "cmake": {}, "bazel": {}, "bzl": {},
	"ipynb": {}, "log": {}, "diff": {}, "patch": {}, "pem": {}, "key": {}, "crt": {},
	"png": {}, "jpg": {}, "jpeg": {}, "gif": {}, "svg": {}, "pdf": {}, "wasm": {},
}
