package archtest_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"corkboard/internal/archtest"
)

// module is the module path; the graph keeps the path inside it.
const module = "corkboard"

// TestImportGraphMatchesDoc checks every import of one of our packages by
// another (tests excluded) against the table in docs/architecture.md.
func TestImportGraphMatchesDoc(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.Open(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer doc.Close()
	allowed, err := archtest.ParseTable(doc)
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	g := listGraph(t, root)
	if problems := archtest.Check(g, allowed); len(problems) > 0 {
		t.Fatalf("the import graph does not match docs/architecture.md (\"Packages and what they may import\"); "+
			"fix the import, or change the table if the new arrow is intended:\n\t%s", strings.Join(problems, "\n\t"))
	}
}

// listGraph runs go list over the module in root and returns the graph of
// our packages' non-test imports of our packages.
func listGraph(tb testing.TB, root string) archtest.Graph {
	tb.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	g := archtest.Graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			tb.Fatalf("go list output: %v", err)
		}
		from, ok := ours(p.ImportPath)
		if !ok {
			tb.Fatalf("go list ./... listed %s, outside module %s", p.ImportPath, module)
		}
		g[from] = []string{}
		for _, imp := range p.Imports {
			if to, ok := ours(imp); ok {
				g[from] = append(g[from], to)
			}
		}
	}
	if len(g) == 0 {
		tb.Fatal("go list listed no packages")
	}
	return g
}

// ours returns the path inside the module of one of our packages.
func ours(importPath string) (string, bool) {
	if rest, ok := strings.CutPrefix(importPath, module+"/"); ok {
		return rest, true
	}
	return "", false
}

// table is a small doc in the shape of docs/architecture.md.
const table = "# Architecture\n\nIntro.\n\n" +
	"## Packages and what they may import\n\n" +
	"| package | holds | imports (of ours) |\n" +
	"|---|---|---|\n" +
	"| `board` | domain types | — (standard library only) |\n" +
	"| `persist` | the store | `board` |\n" +
	"| `rooms` | actors | `board`, `persist` (the `SyncStore` interface) |\n" +
	"| `transport` | HTTP | all of the above |\n" +
	"| `web` | the client | — |\n" +
	"| `cmd/app` | wiring | all |\n" +
	"| `examples/a`, `examples/b` | clients | none |\n" +
	"\nNo adapter imports another.\n\n## Next\n\n| `x` | y | `board` |\n"

func TestParseTable(t *testing.T) {
	allowed, err := archtest.ParseTable(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]bool) []string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		slices.Sort(s)
		return s
	}
	for _, tt := range []struct {
		pkg  string
		want []string
	}{
		{"board", nil},
		{"persist", []string{"board"}},
		{"rooms", []string{"board", "persist"}},
		{"transport", []string{"board", "persist", "rooms"}},
		{"web", nil},
		{"cmd/app", []string{"board", "examples/a", "examples/b", "persist", "rooms", "transport", "web"}},
		{"examples/a", nil},
		{"examples/b", nil},
	} {
		set, ok := allowed[tt.pkg]
		if !ok {
			t.Errorf("%s: no row", tt.pkg)
			continue
		}
		if got := keys(set); !slices.Equal(got, tt.want) {
			t.Errorf("%s may import %v, want %v", tt.pkg, got, tt.want)
		}
	}
	if _, ok := allowed["x"]; ok {
		t.Errorf("a table in a later section was read")
	}
	if got, want := len(allowed), 8; got != want {
		t.Errorf("%d rows, want %d", got, want)
	}
}

func TestParseTableErrors(t *testing.T) {
	head := "## Packages and what they may import\n\n| package | holds | imports |\n|---|---|---|\n"
	for _, tt := range []struct {
		name, doc, want string
	}{
		{"NoTable", "# Architecture\n\nNothing here.\n", "no table"},
		{"UnknownImport", head + "| `board` | types | — |\n| `persist` | store | `bord` |\n", "bord is not a package of the table"},
		{"TwoRows", head + "| `board` | types | — |\n| `board` | again | — |\n", "two rows"},
		{"NoPackage", head + "| board | types | — |\n", "no `package`"},
		{"Unreadable", head + "| `board` | types | whatever it likes |\n", "cannot read"},
		{"Cells", head + "| `board` | types |\n", "2 cells"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := archtest.ParseTable(strings.NewReader(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err=%v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	allowed, err := archtest.ParseTable(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	good := archtest.Graph{
		"board": {}, "persist": {"board"}, "rooms": {"board", "persist"},
		"transport": {"board", "rooms"}, "web": {}, "cmd/app": {"transport", "web"},
		"examples/a": {}, "examples/b": {},
	}
	t.Run("OK", func(t *testing.T) {
		if problems := archtest.Check(good, allowed); len(problems) > 0 {
			t.Fatalf("problems in a graph the table allows: %q", problems)
		}
	})
	for _, tt := range []struct {
		name   string
		change func(archtest.Graph)
		want   string
	}{
		{"ErrBackwardArrow", func(g archtest.Graph) { g["persist"] = []string{"board", "transport"} },
			"forbidden arrow persist → transport"},
		{"ErrAdapterToAdapter", func(g archtest.Graph) { g["rooms"] = []string{"web"} },
			"forbidden arrow rooms → web"},
		{"ErrIntoExamples", func(g archtest.Graph) { g["examples/a"] = []string{"examples/b"} },
			"forbidden arrow examples/a → examples/b"},
		{"ErrNoRow", func(g archtest.Graph) { g["ratelimit"] = []string{} },
			"ratelimit has no row"},
		{"ErrStaleRow", func(g archtest.Graph) { delete(g, "web"); g["cmd/app"] = []string{"transport"} },
			"row for web, which is not a package"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := archtest.Graph{}
			for k, v := range good {
				g[k] = slices.Clone(v)
			}
			tt.change(g)
			problems := archtest.Check(g, allowed)
			if len(problems) != 1 || !strings.Contains(problems[0], tt.want) {
				t.Fatalf("problems=%q, want one containing %q", problems, tt.want)
			}
		})
	}
}
