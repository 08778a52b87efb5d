package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
	"unicode"
)

// The corpus file is JSON lines: a header, then for each session a "session" record and its
// turns, one "append" record per hook's worth of turns (a prompt's exchange), in the order
// heirloom would have stored them. Both engines load the same file.

// corpusHeader is the file's first line.
type corpusHeader struct {
	Version   int    `json:"version"`
	Seed      uint64 `json:"seed"`
	Target    int64  `json:"target_bytes"`
	GoVersion string `json:"go_version"` // the Go source tree the real code was read from
	Fixtures  int    `json:"fixture_turns"`
}

const corpusVersion = 1

// corpusSession is a session's description.
type corpusSession struct {
	ID        string `json:"id"`
	Parent    string `json:"parent,omitempty"`
	Depth     int    `json:"depth,omitempty"`
	Harness   string `json:"harness"`
	Project   string `json:"project"`
	Title     string `json:"title"`
	Objective string `json:"objective"`
	Start     int64  `json:"start"`
}

// corpusTurn is one turn as heirloom stores it (kv.Turn without Seq).
type corpusTurn struct {
	SourceID string   `json:"id"`
	Role     string   `json:"r"`
	Tool     string   `json:"tool,omitempty"`
	Text     string   `json:"t"`
	Files    []string `json:"f,omitempty"`
	At       int64    `json:"at"` // Unix seconds
}

// corpusRecord is one line after the header: a session, or turns to append to one.
type corpusRecord struct {
	Session *corpusSession `json:"session,omitempty"`
	ID      string         `json:"id,omitempty"`
	Turns   []corpusTurn   `json:"turns,omitempty"`
}

// indexedText is what both engines index for a turn: heirloom's kv indexes the tool's name and
// the text (kv.indexedText); the FTS5 table gets the same string.
func (t *corpusTurn) indexedText() string {
	if t.Tool == "" {
		return t.Text
	}
	return t.Tool + "\n" + t.Text
}

// maxToolText is heirloom's bound on a tool turn's text (claudecode.MaxToolText,
// opencode.MaxToolText), with the same marker.
const maxToolText = 4096

func bound(s string) string {
	if len(s) <= maxToolText {
		return s
	}
	cut := maxToolText
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n…[%d bytes truncated]", len(s)-cut)
}

// realDirs are the Go source directories (under GOROOT/src) whose files stand for the code of
// the "real" projects: real identifiers, comments and code shapes.
var realDirs = []string{
	"net/http", "encoding/json", "go/types", "database/sql", "crypto/tls", "compress/flate",
	"text/template", "os/exec", "archive/tar", "log/slog", "net/netip", "regexp/syntax",
	"go/parser", "image/png", "mime/multipart", "net/url",
}

// project is a code base sessions work in.
type project struct {
	name   string
	root   string // as the harness reports the working directory
	module string
	real   bool
	files  []string            // paths relative to root
	lines  map[string][]string // real projects: each file's lines
	fileZ  *rand.Zipf
	idents []string // functions, methods and types, most used first
	identZ *rand.Zipf
	nouns  []string
	nounZ  *rand.Zipf
}

// generator writes a corpus. Everything it draws comes from one seeded source, in a fixed
// order, so a seed and a size give the same file on every run (with the same Go tree).
type generator struct {
	r        *rand.Rand
	seed     uint64
	eng      *rand.Zipf
	nounZ    *rand.Zipf
	verbZ    *rand.Zipf
	errZ     *rand.Zipf
	toolZ    *rand.Zipf
	real     []realTurn
	projects []*project
	projZ    *rand.Zipf
	ids      uint64
	clock    int64

	w       *bufio.Writer
	written int64 // text bytes written (indexed text of every turn)
	turns   int64
	target  int64
	stats   corpusStats
}

// corpusStats describe a generated corpus.
type corpusStats struct {
	Sessions, SubAgents, Turns, TextBytes int64
	ByRole                                map[string]int64
	RealTurns                             int64
	Sizes                                 []int // turn text sizes
}

func zipf(r *rand.Rand, s float64, n int) *rand.Zipf {
	return rand.NewZipf(r, s, 1, uint64(n-1))
}

// generateCorpus writes a corpus of about target bytes of turn text to out.
func generateCorpus(out io.Writer, target int64, seed uint64, fixtures string) (corpusStats, error) {
	real, err := readFixtures(fixtures)
	if err != nil {
		return corpusStats{}, err
	}
	g := &generator{
		r:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		seed:   seed,
		real:   real,
		w:      bufio.NewWriterSize(out, 1<<20),
		target: target,
		clock:  time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC).Unix(),
		stats:  corpusStats{ByRole: map[string]int64{}},
	}
	g.eng = zipf(g.r, 1.07, len(englishWords))
	g.nounZ = zipf(g.r, 1.1, len(domainNouns))
	g.verbZ = zipf(g.r, 1.1, len(domainVerbs))
	g.errZ = zipf(g.r, 1.3, len(errorTexts))
	g.toolZ = zipf(g.r, 1.4, len(toolNames))
	if err := g.makeProjects(); err != nil {
		return corpusStats{}, err
	}
	hdr, _ := json.Marshal(corpusHeader{Version: corpusVersion, Seed: seed, Target: target, GoVersion: runtime.Version(), Fixtures: len(real)})
	g.w.Write(hdr)
	g.w.WriteByte('\n')
	for g.written < target {
		if err := g.session("", 0, nil); err != nil {
			return corpusStats{}, err
		}
	}
	if err := g.w.Flush(); err != nil {
		return corpusStats{}, err
	}
	g.stats.Turns, g.stats.TextBytes = g.turns, g.written
	return g.stats, nil
}

// pick returns a uniformly chosen element.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *generator) english() string { return englishWords[g.eng.Uint64()] }
func (g *generator) noun() string    { return domainNouns[g.nounZ.Uint64()] }
func (g *generator) verb() string    { return domainVerbs[g.verbZ.Uint64()] }
func (g *generator) errText() string { return errorTexts[g.errZ.Uint64()] }

func title(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// ident makes a fresh identifier from the vocabulary: parseLedgerHeader, SegmentIndex,
// flush_wal_batch.
func (g *generator) ident(nouns []string, nz *rand.Zipf) string {
	n1 := nouns[nz.Uint64()]
	n2 := nouns[nz.Uint64()]
	for n2 == n1 {
		n2 = nouns[g.r.IntN(len(nouns))]
	}
	v := g.verb()
	switch x := g.r.IntN(20); {
	case x < 9:
		return v + title(n1) + title(n2)
	case x < 13:
		return title(v) + title(n1)
	case x < 16:
		return title(n1) + title(n2)
	case x < 18:
		return v + title(n1)
	default:
		return v + "_" + n1 + "_" + n2
	}
}

var funcName = regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?([A-Za-z_][A-Za-z0-9_]*)|^type ([A-Za-z_][A-Za-z0-9_]*)`)

// makeProjects sets up the code bases: the real ones from the Go tree (their files, lines and
// function names), and synthetic ones named from the domain vocabulary.
func (g *generator) makeProjects() error {
	goroot := runtime.GOROOT()
	for _, d := range realDirs {
		ents, err := os.ReadDir(filepath.Join(goroot, "src", d))
		if err != nil {
			continue
		}
		p := &project{name: d, real: true, root: "/home/dev/src/go/src/" + d, module: d, lines: map[string][]string{}}
		seen := map[string]bool{}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(goroot, "src", d, e.Name()))
			if err != nil {
				return err
			}
			p.files = append(p.files, e.Name())
			p.lines[e.Name()] = strings.Split(string(b), "\n")
			for _, m := range funcName.FindAllStringSubmatch(string(b), -1) {
				name := m[1] + m[2]
				if name != "" && name != "_" && !seen[name] {
					seen[name] = true
					p.idents = append(p.idents, name)
				}
			}
		}
		if len(p.files) == 0 || len(p.idents) < 10 {
			continue
		}
		g.r.Shuffle(len(p.files), func(i, j int) { p.files[i], p.files[j] = p.files[j], p.files[i] })
		g.r.Shuffle(len(p.idents), func(i, j int) { p.idents[i], p.idents[j] = p.idents[j], p.idents[i] })
		p.nouns = domainNouns
		p.nounZ = g.nounZ
		g.finish(p)
		g.projects = append(g.projects, p)
	}
	if len(g.projects) == 0 {
		return fmt.Errorf("no Go source under %s/src: the real-code projects need it", goroot)
	}
	// Synthetic projects, interleaved with the real ones by popularity. The first is "ledger",
	// whose names the query set uses.
	names := []string{"ledger"}
	for len(names) < 24 {
		n := pick(g.r, domainNouns)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var synth []*project
	for _, name := range names {
		p := &project{name: name, root: "/home/dev/src/" + name, module: "github.com/acme/" + name}
		// The project's own nouns: its name first, then a random subset, in a random order.
		p.nouns = []string{name}
		for _, i := range g.r.Perm(len(domainNouns))[:40] {
			if domainNouns[i] != name {
				p.nouns = append(p.nouns, domainNouns[i])
			}
		}
		p.nounZ = zipf(g.r, 1.15, len(p.nouns))
		pkgs := 4 + g.r.IntN(9)
		for range pkgs {
			pkg := p.nouns[p.nounZ.Uint64()]
			for range 2 + g.r.IntN(7) {
				f := pkg + "/" + p.nouns[p.nounZ.Uint64()]
				if g.r.IntN(3) == 0 {
					f += "_" + p.nouns[p.nounZ.Uint64()]
				}
				for _, name := range []string{f + ".go", f + "_test.go"} {
					if !slices.Contains(p.files, name) {
						p.files = append(p.files, name)
					}
				}
			}
		}
		seen := map[string]bool{}
		if name == "ledger" {
			for _, id := range []string{"parseLedgerHeader", "LedgerHeader", "compactSegments", "openLedger"} {
				seen[id] = true
				p.idents = append(p.idents, id)
			}
		}
		want := 300 + g.r.IntN(900)
		for len(p.idents) < want {
			id := g.ident(p.nouns, p.nounZ)
			if !seen[id] {
				seen[id] = true
				p.idents = append(p.idents, id)
			}
		}
		g.finish(p)
		synth = append(synth, p)
	}
	var all []*project
	for i := 0; i < len(synth) || i < len(g.projects); i++ {
		if i < len(synth) {
			all = append(all, synth[i])
		}
		if i < len(g.projects) {
			all = append(all, g.projects[i])
		}
	}
	g.projects = all
	g.projZ = zipf(g.r, 1.05, len(all))
	return nil
}

func (g *generator) finish(p *project) {
	p.fileZ = zipf(g.r, 1.2, len(p.files))
	p.identZ = zipf(g.r, 1.05, len(p.idents))
}

func (p *project) file() string  { return p.files[p.fileZ.Uint64()] }
func (p *project) ident() string { return p.idents[p.identZ.Uint64()] }
func (p *project) pnoun() string { return p.nouns[p.nounZ.Uint64()] }

// id returns a fresh deterministic id with prefix.
func (g *generator) id(prefix string) string {
	g.ids++
	h := fnv.New64a()
	fmt.Fprintf(h, "%d:%d", g.seed, g.ids)
	return fmt.Sprintf("%s%016x", prefix, h.Sum64())
}

// tick moves the clock on by a few seconds to a few minutes.
func (g *generator) tick() int64 {
	g.clock += int64(2 + g.r.ExpFloat64()*40)
	return g.clock
}

// session writes one session (and the sub-agents it spawns) with its exchanges.
func (g *generator) session(parent string, depth int, pp *project) error {
	harness := "claude-code"
	switch x := g.r.IntN(10); {
	case x == 0:
		harness = "openclaw"
	case x < 3:
		harness = "opencode"
	}
	p := pp
	if p == nil {
		p = g.projects[g.projZ.Uint64()]
	}
	s := &corpusSession{Harness: harness, Project: p.root, Parent: parent, Depth: depth}
	switch harness {
	case "claude-code":
		s.ID = g.uuid()
		if parent != "" {
			s.ID = parent + ":a" + g.id("")[:16]
		}
	case "opencode":
		s.ID = g.id("ses_")
	default:
		s.ID = "agent:main:" + g.uuid()
		if parent != "" {
			s.ID = "agent:main:subagent:" + g.uuid()
		}
	}
	if parent == "" {
		// Top-level sessions start at scattered times over three months.
		g.clock = time.Date(2026, 8, 1, 9, 0, 0, 0, time.UTC).Unix() + g.r.Int64N(90*24*3600)
	}
	s.Start = g.tick()
	first := g.userPrompt(p)
	s.Objective = first
	s.Title = firstWords(first, 8)
	if err := g.emit(corpusRecord{Session: s}); err != nil {
		return err
	}
	if parent == "" {
		g.stats.Sessions++
	} else {
		g.stats.SubAgents++
	}
	n := 1 + int(math.Exp(2.3+0.9*g.r.NormFloat64()))
	if parent != "" {
		n = 1 + g.r.IntN(12)
	}
	n = min(n, 300)
	spawnAt := -1
	if depth < 2 && g.r.IntN(8) == 0 {
		spawnAt = g.r.IntN(n)
	}
	for i := range n {
		prompt := first
		if i > 0 {
			prompt = g.userPrompt(p)
		}
		turns := g.exchange(s, p, prompt)
		if err := g.emit(corpusRecord{ID: s.ID, Turns: turns}); err != nil {
			return err
		}
		if i == spawnAt {
			for range 1 + g.r.IntN(2) {
				saved := g.clock
				if err := g.session(s.ID, depth+1, p); err != nil {
					return err
				}
				g.clock = saved + 5
			}
		}
		if g.written >= g.target && parent == "" {
			break
		}
	}
	return nil
}

func (g *generator) uuid() string {
	a, b := g.r.Uint64(), g.r.Uint64()
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, a>>16&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

func (g *generator) emit(rec corpusRecord) error {
	for i := range rec.Turns {
		t := &rec.Turns[i]
		n := int64(len(t.indexedText()))
		g.written += n
		g.turns++
		g.stats.ByRole[t.Role]++
		g.stats.Sizes = append(g.stats.Sizes, int(n))
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	g.w.Write(b)
	return g.w.WriteByte('\n')
}

// exchange is one prompt and what follows it until the reply: a hook's worth of turns.
func (g *generator) exchange(s *corpusSession, p *project, prompt string) []corpusTurn {
	var out []corpusTurn
	add := func(role, tool, text string, files []string) {
		out = append(out, corpusTurn{SourceID: g.uuid(), Role: role, Tool: tool, Text: text, Files: files, At: g.tick()})
	}
	// One exchange in fifty carries a turn of the recorded transcripts, as they were recorded.
	if g.r.IntN(50) == 0 {
		rt := pick(g.r, g.real)
		g.stats.RealTurns++
		add(rt.Role, rt.Tool, rt.Text, nil)
	}
	add("user", "", prompt, nil)
	steps := int(g.r.ExpFloat64() * 3)
	for range min(steps, 25) {
		tool := toolNames[g.toolZ.Uint64()]
		file := p.file()
		text := ""
		if g.r.IntN(3) > 0 {
			text = g.prose(p, 1+g.r.IntN(2))
		}
		result, files := g.toolResult(p, tool, file)
		switch s.Harness {
		case "opencode":
			// One tool turn: the title, the input as JSON, then the output.
			if text != "" {
				add("assistant", "", text, nil)
			}
			in, _ := json.Marshal(map[string]string{"filePath": path.Join(p.root, file)})
			add("tool", strings.ToLower(tool), bound(tool+" "+file+"\n"+string(in)+"\n"+result), files)
		default:
			add("assistant", tool, text, files)
			resTool := ""
			if tool == "Agent" {
				resTool = "Agent"
			}
			add("tool", resTool, bound(result), files)
		}
	}
	add("assistant", "", g.reply(p), nil)
	return out
}

// userPrompt is a prompt: a request naming the project's code, a short follow-up, or a request
// with pasted output.
func (g *generator) userPrompt(p *project) string {
	switch x := g.r.IntN(20); {
	case x < 5:
		return pick(g.r, userShort)
	case x < 7:
		var b strings.Builder
		b.WriteString(fill(pick(g.r, userOpeners), "`"+p.ident()+"`", p.pnoun()))
		b.WriteString(":\n\n")
		target := int(math.Exp(7 + 1.2*g.r.NormFloat64())) // pasted output, median ~1 KB
		target = min(target, 60_000)
		for b.Len() < target {
			switch g.r.IntN(4) {
			case 0:
				b.WriteString(g.testOutput(p))
			case 1:
				b.WriteString(g.stackTrace(p))
			default:
				b.WriteString(g.logLines(p, 5+g.r.IntN(30)))
			}
		}
		return b.String()
	default:
		a := p.ident()
		var c string
		if g.r.IntN(2) == 0 {
			c = p.file()
		} else {
			c = p.pnoun()
		}
		s := fill(pick(g.r, userOpeners), "`"+a+"`", c)
		if g.r.IntN(2) == 0 {
			s += ". " + g.sentence(p)
		}
		return s
	}
}

// sentence is one sentence of prose: common English words with the project's names, paths,
// errors and numbers among them.
func (g *generator) sentence(p *project) string {
	n := 5 + g.r.IntN(18)
	words := make([]string, 0, n+2)
	for i := range n {
		var w string
		switch x := g.r.IntN(100); {
		case x < 66:
			w = g.english()
		case x < 78:
			w = p.pnoun()
		case x < 82:
			w = g.verb()
		case x < 90:
			w = "`" + p.ident() + "`"
		case x < 94:
			w = "`" + p.file() + "`"
		case x < 96:
			w = g.errText()
		case x < 98:
			w = fmt.Sprint(g.r.IntN(1000))
		default:
			w = goStdIdents[g.r.IntN(len(goStdIdents))]
		}
		if i == 0 {
			w = title(w)
		}
		words = append(words, w)
	}
	end := "."
	if g.r.IntN(8) == 0 {
		end = ":"
	}
	return strings.Join(words, " ") + end
}

func (g *generator) prose(p *project, sentences int) string {
	var b strings.Builder
	for i := range sentences {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.sentence(p))
	}
	return b.String()
}

// reply is the assistant's answer at the end of an exchange: paragraphs, sometimes a list of
// changed files or a code block.
func (g *generator) reply(p *project) string {
	var b strings.Builder
	paras := 1 + int(g.r.ExpFloat64()*1.5)
	for i := range min(paras, 12) {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(g.prose(p, 1+g.r.IntN(4)))
		switch g.r.IntN(6) {
		case 0:
			b.WriteString("\n\n```go\n")
			b.WriteString(g.codeLines(p, 4+g.r.IntN(30)))
			b.WriteString("```")
		case 1:
			for range 2 + g.r.IntN(4) {
				b.WriteString("\n- `" + p.file() + "`: " + g.sentence(p))
			}
		}
	}
	return b.String()
}

// toolResult is what a tool call returned, and the files it touched.
func (g *generator) toolResult(p *project, tool, file string) (string, []string) {
	full := path.Join(p.root, file)
	switch tool {
	case "Read":
		return g.readFile(p, file), []string{full}
	case "Edit", "Write":
		return "The file " + full + " has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" +
			g.numbered(p, file, g.r.IntN(200), 6+g.r.IntN(12)), []string{full}
	case "Grep":
		return g.grep(p), nil
	case "Glob":
		var b strings.Builder
		for range 3 + g.r.IntN(30) {
			b.WriteString(path.Join(p.root, p.file()) + "\n")
		}
		return b.String(), nil
	case "Bash":
		switch g.r.IntN(6) {
		case 0, 1:
			return g.testOutput(p), nil
		case 2:
			return g.buildErrors(p), nil
		case 3:
			return g.gitOutput(p), nil
		default:
			return g.logLines(p, 5+g.r.IntN(60)), nil
		}
	case "TodoWrite":
		return "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.", nil
	case "Agent":
		return g.reply(p), nil
	default:
		return g.prose(p, 3+g.r.IntN(10)), nil
	}
}

// readFile is a Read result: a window of the file with line numbers, as Claude Code shows it.
func (g *generator) readFile(p *project, file string) string {
	start := 0
	if g.r.IntN(3) == 0 {
		start = g.r.IntN(400)
	}
	return g.numbered(p, file, start, 40+g.r.IntN(160))
}

// fileLines returns a file's lines: the real file's, or, for a synthetic project, code over
// the project's names (drawn afresh on each read).
func (g *generator) fileLines(p *project, file string) []string {
	if p.real {
		return p.lines[file]
	}
	pkg := path.Base(path.Dir(file))
	src := "package " + pkg + "\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\n\t\"" + p.module + "/" + p.pnoun() + "\"\n)\n\n" +
		g.codeLines(p, 60+g.r.IntN(300))
	return strings.Split(src, "\n")
}

func (g *generator) numbered(p *project, file string, start, n int) string {
	lines := g.fileLines(p, file)
	if start >= len(lines) {
		start = 0
	}
	end := min(len(lines), start+n)
	var b strings.Builder
	for i := start; i < end; i++ {
		fmt.Fprintf(&b, "%6d→%s\n", i+1, lines[i])
	}
	return b.String()
}

// codeLines is synthetic Go: functions over the project's names.
func (g *generator) codeLines(p *project, n int) string {
	var b strings.Builder
	lines := 0
	for lines < n {
		recv := strings.ToLower(p.pnoun()[:1])
		typ := title(p.pnoun())
		fn := p.ident()
		arg := p.pnoun()
		other := p.ident()
		fmt.Fprintf(&b, "// %s %s\n", fn, strings.ToLower(g.sentence(p)))
		fmt.Fprintf(&b, "func (%s *%s) %s(ctx context.Context, %s *%s) (*%s, error) {\n", recv, typ, fn, arg, title(arg), title(p.pnoun()))
		lines += 2
		for range 3 + g.r.IntN(12) {
			v := p.pnoun()
			switch g.r.IntN(9) {
			case 0:
				fmt.Fprintf(&b, "\tif %s == nil {\n\t\treturn nil, fmt.Errorf(\"%s %s: %s\")\n\t}\n", arg, g.verb(), arg, g.errText())
			case 1:
				fmt.Fprintf(&b, "\t%s, err := %s.%s(ctx, %s)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n", v, recv, other, arg, strings.ToLower(other))
			case 2:
				fmt.Fprintf(&b, "\tfor _, %s := range %s.%ss {\n\t\t%s.%s[%s.ID] = %s\n\t}\n", v[:1], arg, title(v), recv, v, v[:1], v[:1])
			case 3:
				fmt.Fprintf(&b, "\t%s.mu.Lock()\n\tdefer %s.mu.Unlock()\n", recv, recv)
			case 4:
				fmt.Fprintf(&b, "\tif errors.Is(err, %s.Err%s) {\n\t\treturn nil, nil\n\t}\n", p.pnoun(), title(p.pnoun()))
			case 5:
				fmt.Fprintf(&b, "\t%s := make([]%s, 0, len(%s.%ss))\n", v, title(v), arg, title(v))
			case 6:
				fmt.Fprintf(&b, "\t// %s\n", strings.ToLower(g.sentence(p)))
			case 7:
				fmt.Fprintf(&b, "\t%s.%s += %d\n", recv, p.pnoun(), g.r.IntN(64))
			default:
				fmt.Fprintf(&b, "\treturn %s.%s(ctx, %s)\n", recv, p.ident(), arg)
			}
			lines += 3
		}
		b.WriteString("}\n\n")
		lines += 2
	}
	return b.String()
}

// grep is a Grep result: lines of the project's files that name one identifier.
func (g *generator) grep(p *project) string {
	id := p.ident()
	var b strings.Builder
	if p.real {
		for range 8 {
			f := p.file()
			for i, l := range p.lines[f] {
				if strings.Contains(l, id) {
					fmt.Fprintf(&b, "%s:%d:%s\n", path.Join(p.root, f), i+1, l)
					if b.Len() > 3000 {
						return b.String()
					}
				}
			}
		}
		if b.Len() > 0 {
			return b.String()
		}
		return "No matches found"
	}
	for range 1 + g.r.IntN(15) {
		fmt.Fprintf(&b, "%s:%d:\t%s\n", path.Join(p.root, p.file()), 1+g.r.IntN(600), strings.TrimSpace(strings.SplitN(g.codeLines(p, 1), "\n", 3)[1]))
	}
	return b.String()
}

func (g *generator) testName(p *project) string { return "Test" + title(p.ident()) }

func (g *generator) testOutput(p *project) string {
	var b strings.Builder
	pkg := path.Dir(p.file())
	for range 1 + g.r.IntN(8) {
		name := g.testName(p)
		fmt.Fprintf(&b, "=== RUN   %s\n", name)
		if g.r.IntN(3) == 0 {
			sub := strings.ReplaceAll(strings.ToLower(g.errText()), " ", "_")
			fmt.Fprintf(&b, "=== RUN   %s/%s\n", name, sub)
			fmt.Fprintf(&b, "    %s:%d: %s(%s): got %v, want %s\n", path.Base(p.file()), 10+g.r.IntN(400), p.ident(), p.pnoun(), g.r.IntN(10), g.errText())
			fmt.Fprintf(&b, "--- FAIL: %s (0.%02ds)\n    --- FAIL: %s/%s (0.00s)\n", name, g.r.IntN(100), name, sub)
		} else {
			fmt.Fprintf(&b, "--- PASS: %s (0.%02ds)\n", name, g.r.IntN(100))
		}
	}
	if g.r.IntN(3) == 0 {
		fmt.Fprintf(&b, "FAIL\nFAIL\t%s/%s\t0.%03ds\n", p.module, pkg, g.r.IntN(1000))
	} else {
		fmt.Fprintf(&b, "PASS\nok  \t%s/%s\t0.%03ds\n", p.module, pkg, g.r.IntN(1000))
	}
	return b.String()
}

func (g *generator) buildErrors(p *project) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s/%s\n", p.module, path.Dir(p.file()))
	for range 1 + g.r.IntN(6) {
		f := p.file()
		switch g.r.IntN(4) {
		case 0:
			fmt.Fprintf(&b, "%s:%d:%d: undefined: %s\n", f, 1+g.r.IntN(500), 1+g.r.IntN(40), p.ident())
		case 1:
			fmt.Fprintf(&b, "%s:%d:%d: declared and not used: %s\n", f, 1+g.r.IntN(500), 1+g.r.IntN(40), p.pnoun())
		case 2:
			fmt.Fprintf(&b, "%s:%d:%d: cannot use %s (variable of type *%s) as %s value in argument to %s\n", f, 1+g.r.IntN(500), 1+g.r.IntN(40), p.pnoun(), title(p.pnoun()), title(p.pnoun()), p.ident())
		default:
			fmt.Fprintf(&b, "%s:%d:%d: too many arguments in call to %s\n", f, 1+g.r.IntN(500), 1+g.r.IntN(40), p.ident())
		}
	}
	return b.String()
}

func (g *generator) gitOutput(p *project) string {
	var b strings.Builder
	switch g.r.IntN(3) {
	case 0:
		for range 3 + g.r.IntN(15) {
			fmt.Fprintf(&b, "%07x %s: %s\n", g.r.Uint32()>>4, path.Dir(p.file()), strings.ToLower(strings.TrimSuffix(g.sentence(p), ".")))
		}
	case 1:
		b.WriteString("On branch main\nChanges not staged for commit:\n")
		for range 1 + g.r.IntN(8) {
			fmt.Fprintf(&b, "\tmodified:   %s\n", p.file())
		}
	default:
		f := p.file()
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %07x..%07x 100644\n--- a/%s\n+++ b/%s\n@@ -%d,7 +%d,9 @@ func %s(\n", f, f, g.r.Uint32()>>4, g.r.Uint32()>>4, f, f, 10+g.r.IntN(300), 10+g.r.IntN(300), p.ident())
		for _, l := range strings.Split(g.codeLines(p, 6), "\n") {
			switch g.r.IntN(4) {
			case 0:
				b.WriteString("-" + l + "\n")
			case 1:
				b.WriteString("+" + l + "\n")
			default:
				b.WriteString(" " + l + "\n")
			}
		}
	}
	return b.String()
}

var levels = []string{"INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"}

func (g *generator) logLines(p *project, n int) string {
	var b strings.Builder
	at := time.Unix(g.clock, 0).UTC()
	for range n {
		at = at.Add(time.Duration(g.r.IntN(3000)) * time.Millisecond)
		lvl := pick(g.r, levels)
		msg := strings.ToLower(strings.TrimSuffix(g.sentence(p), "."))
		if lvl == "ERROR" || lvl == "WARN" {
			msg = g.verb() + " " + p.pnoun() + ": " + g.errText()
		}
		fmt.Fprintf(&b, "%s %-5s %s:%d %s %s=%d %s=%s dur=%dms\n", at.Format("2006-01-02T15:04:05.000Z"), lvl, p.file(), 1+g.r.IntN(800), msg,
			p.pnoun(), g.r.IntN(10000), p.pnoun(), g.id("")[:8], g.r.IntN(5000))
	}
	return b.String()
}

func (g *generator) stackTrace(p *project) string {
	var b strings.Builder
	fmt.Fprintf(&b, "panic: runtime error: %s\n\ngoroutine %d [running]:\n", g.errText(), 1+g.r.IntN(900))
	for range 3 + g.r.IntN(10) {
		f := p.file()
		fmt.Fprintf(&b, "%s/%s.(*%s).%s(0x%x, {0x%x, 0x%x})\n\t%s:%d +0x%x\n", p.module, path.Dir(f), title(p.pnoun()), p.ident(),
			g.r.Uint32(), g.r.Uint32()&0xffff, g.r.Uint32(), path.Join(p.root, f), 1+g.r.IntN(900), g.r.IntN(4096))
	}
	return b.String()
}

// readCorpus streams a corpus file: the header, then each record in order.
func readCorpus(file string, fn func(corpusRecord) error) (corpusHeader, error) {
	f, err := os.Open(file)
	if err != nil {
		return corpusHeader{}, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var hdr corpusHeader
	line, err := r.ReadBytes('\n')
	if err != nil {
		return hdr, fmt.Errorf("%s: %w", file, err)
	}
	if err := json.Unmarshal(line, &hdr); err != nil || hdr.Version != corpusVersion {
		return hdr, fmt.Errorf("%s: not a corpus of version %d", file, corpusVersion)
	}
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var rec corpusRecord
			if err := json.Unmarshal(line, &rec); err != nil {
				return hdr, fmt.Errorf("%s: %w", file, err)
			}
			if err := fn(rec); err != nil {
				return hdr, err
			}
		}
		if err == io.EOF {
			return hdr, nil
		}
		if err != nil {
			return hdr, err
		}
	}
}

// fill formats tmpl with as many of args as it has %s verbs (the openers take one or two).
func fill(tmpl string, args ...string) string {
	n := min(strings.Count(tmpl, "%s"), len(args))
	vals := make([]any, n)
	for i := range n {
		vals[i] = args[i]
	}
	return fmt.Sprintf(tmpl, vals...)
}
