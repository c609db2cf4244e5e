// Package archtest holds the check that Corkboard's import graph is the one
// docs/architecture.md draws: the table "Packages and what they may import"
// is parsed into the allowed arrows, and every import of one of our
// packages by another is checked against it. The doc is the only copy of
// the rules, so the doc and the check cannot disagree.
package archtest

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Allowed is the table of allowed arrows: for each of our packages (its
// path inside the module, e.g. "transport/jsondec"), the set of our
// packages it may import.
type Allowed map[string]map[string]bool

// Graph is an import graph: for each of our packages (path inside the
// module), the packages of ours it imports.
type Graph map[string][]string

// tableHeading is the heading of the section that holds the table.
const tableHeading = "## Packages and what they may import"

// backticked finds `x` spans in a table cell.
var backticked = regexp.MustCompile("`([^`]+)`")

// packagePath says whether a backticked word is a package path of ours (all
// lower case, slashes between words) rather than a type or a file name.
var packagePath = regexp.MustCompile(`^[a-z][a-z0-9-]*(/[a-z][a-z0-9-]*)*$`)

// ParseTable reads the table under "## Packages and what they may import"
// from a Markdown document. Each row is `package` (one or more, backticked)
// | what it holds | what it may import. The last cell is a list of
// backticked packages, or one of: "—" or "none" (nothing of ours), "all of
// the above" (every package in an earlier row), "all" (any package of
// ours). Text outside backticks, such as "(types)", is a comment. A
// package named in the last cell that has no row of its own is an error,
// so a typo cannot allow an arrow silently.
func ParseTable(r io.Reader) (Allowed, error) {
	rows, err := readRows(r)
	if err != nil {
		return nil, err
	}
	known, err := knownPackages(rows)
	if err != nil {
		return nil, err
	}
	allowed := Allowed{}
	var above []string
	for _, rw := range rows {
		set, err := rw.allowedImports(known, above)
		if err != nil {
			return nil, err
		}
		for _, p := range rw.pkgs {
			delete(set, p) // "all" does not mean itself
			allowed[p] = set
		}
		above = append(above, rw.pkgs...)
	}
	return allowed, nil
}

// tableRow is one row of the table: the packages it is about, its imports
// cell as written, and its line in the document for error messages.
type tableRow struct {
	pkgs    []string
	imports string
	line    int
}

// readRows returns the rows of the table under tableHeading, in order.
func readRows(r io.Reader) ([]tableRow, error) {
	var rows []tableRow
	sc := bufio.NewScanner(r)
	inSection, inTable, lineNo := false, false, 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			if inTable {
				break
			}
			inSection = line == tableHeading
			continue
		}
		if !inSection {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break // the table ended
			}
			continue
		}
		inTable = true
		rw, ok, err := parseRow(line, lineNo)
		if err != nil {
			return nil, err
		}
		if ok {
			rows = append(rows, rw)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no table under %q", tableHeading)
	}
	return rows, nil
}

// parseRow reads one line of the table; ok is false for the header and
// the separator line.
func parseRow(line string, lineNo int) (rw tableRow, ok bool, err error) {
	cells := strings.Split(strings.Trim(line, "|"), "|")
	if len(cells) != 3 {
		return tableRow{}, false, fmt.Errorf("line %d: %d cells, want 3 (package | holds | imports)", lineNo, len(cells))
	}
	first := strings.TrimSpace(cells[0])
	if first == "package" || strings.Trim(first, "-: ") == "" {
		return tableRow{}, false, nil
	}
	var pkgs []string
	for _, m := range backticked.FindAllStringSubmatch(first, -1) {
		if !packagePath.MatchString(m[1]) {
			return tableRow{}, false, fmt.Errorf("line %d: %q is not a package path", lineNo, m[1])
		}
		pkgs = append(pkgs, m[1])
	}
	if len(pkgs) == 0 {
		return tableRow{}, false, fmt.Errorf("line %d: no `package` in the first cell", lineNo)
	}
	return tableRow{pkgs: pkgs, imports: strings.TrimSpace(cells[2]), line: lineNo}, true, nil
}

// knownPackages is the set of packages with a row; a package with two rows
// is an error, since the two could allow different arrows.
func knownPackages(rows []tableRow) (map[string]bool, error) {
	known := map[string]bool{}
	for _, rw := range rows {
		for _, p := range rw.pkgs {
			if known[p] {
				return nil, fmt.Errorf("line %d: %s has two rows", rw.line, p)
			}
			known[p] = true
		}
	}
	return known, nil
}

// allowedImports reads the row's imports cell into the set of packages it
// allows, given every package of the table and those in earlier rows.
func (rw tableRow) allowedImports(known map[string]bool, above []string) (map[string]bool, error) {
	set := map[string]bool{}
	cell := strings.ToLower(rw.imports)
	switch {
	case cell == "all":
		for p := range known {
			set[p] = true
		}
	case strings.HasPrefix(cell, "all of the above"):
		for _, p := range above {
			set[p] = true
		}
	case strings.HasPrefix(cell, "—"), strings.HasPrefix(cell, "none"):
	default:
		names := backticked.FindAllStringSubmatch(rw.imports, -1)
		if len(names) == 0 {
			return nil, fmt.Errorf("line %d: cannot read the imports cell %q", rw.line, rw.imports)
		}
		for _, m := range names {
			if !packagePath.MatchString(m[1]) {
				continue // a type or a file, e.g. (the `SyncStore` interface)
			}
			if !known[m[1]] {
				return nil, fmt.Errorf("line %d: %s is not a package of the table", rw.line, m[1])
			}
			set[m[1]] = true
		}
	}
	return set, nil
}

// Check returns one line per problem in g: an arrow the table does not
// allow, a package the table has no row for, or a row for a package that
// does not exist. The lines are sorted; none means the graph matches the
// doc.
func Check(g Graph, allowed Allowed) []string {
	var problems []string
	for p := range allowed {
		if _, ok := g[p]; !ok {
			problems = append(problems, fmt.Sprintf("the table has a row for %s, which is not a package: remove it", p))
		}
	}
	for from, imports := range g {
		may, ok := allowed[from]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no row in the table: add one saying what it holds and what it may import", from))
			continue
		}
		for _, to := range imports {
			if !may[to] {
				problems = append(problems, fmt.Sprintf("forbidden arrow %s → %s: the table does not let %s import %s", from, to, from, to))
			}
		}
	}
	slices.Sort(problems)
	return problems
}
