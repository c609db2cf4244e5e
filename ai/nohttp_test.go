package ai_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// serverHTTP are the net/http names of the serving side. ai answers
// through an ai.Sink, so that a WebSocket, a CLI or a test can use it
// without an HTTP response; the wire formats live in transport. Its
// http.Client to Ollama is fine.
var serverHTTP = []string{
	"ResponseWriter", "Request", "Handler", "HandlerFunc", "Flusher", "Hijacker",
	"ResponseController", "NewResponseController", "ServeMux", "Server",
}

// TestNoHTTPServerTypes fails when a non-test file of package ai uses a
// serving-side net/http name or imports net/http/httptest.
func TestNoHTTPServerTypes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		httpName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch path {
			case "net/http/httptest":
				t.Errorf("%s imports %s", name, path)
			case "net/http":
				httpName = "http"
				if imp.Name != nil {
					httpName = imp.Name.Name
				}
			}
		}
		if httpName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == httpName && slices.Contains(serverHTTP, sel.Sel.Name) {
				t.Errorf("%s: uses http.%s; answer through an ai.Sink instead", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no Go files of package ai found")
	}
}
