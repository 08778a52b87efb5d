package inject_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps inject pure: its non-test files import only the standard library, the kv
// record types, the harness vocabulary's constants and inject/heading, and never touch a
// kv.Store or open one.
func TestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/heirloom-dev/heirloom/kv":             true,
		"github.com/heirloom-dev/heirloom/adapters":       true,
		"github.com/heirloom-dev/heirloom/inject/heading": true,
		"github.com/heirloom-dev/heirloom/inject/textcut": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			first, _, _ := strings.Cut(path, "/")
			if !allowed[path] && strings.Contains(first, ".") {
				t.Errorf("%s imports %s: inject may import only the standard library and %v", name, path, allowed)
			}
			if noIO[path] {
				t.Errorf("%s imports %s: inject does no I/O and reads no randomness", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "kv" {
				if sel.Sel.Name == "Store" || strings.HasPrefix(sel.Sel.Name, "Open") {
					t.Errorf("%s: uses kv.%s: inject takes records, never a store", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && sel.Sel.Name == "Now" {
				t.Errorf("%s: calls time.Now: take now as a parameter", fset.Position(sel.Pos()))
			}
			return true
		})
	}
}

// noIO are standard packages inject must not import.
var noIO = map[string]bool{
	"os": true, "os/exec": true, "io/ioutil": true, "net": true, "net/http": true, "syscall": true,
	"log": true, "log/slog": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true,
}
