package board

// The merge as it was written first (commit 2c3cb44), kept verbatim but
// for its names as the reference the optimised MergeText must match
// exactly: the browser's port (web/src/sync/merge.ts) follows these steps,
// and the server may only make them cheaper, never change what they give.

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// refMergeText merges mine, an edit of base, into theirs line by line (a
// three-way merge, refDiff3). Changes to different lines both survive. Where
// both sides changed the same stretch of lines and it has as many lines in
// base, theirs and mine, the lines are merged one by one, so neighbouring
// edits (two ticks in a checklist) both survive; otherwise mine wins the
// stretch and overlap is true. Two insertions at the same place with no
// base lines between are both kept, theirs first (one that already holds
// the other is taken alone, so merging the same edit twice adds nothing).
// Lines are compared whole, line break included ("\r\n" is not "\n").
//
// A merge is idempotent: merging mine again into the result gives the
// result. refDiff3 alone is not where lines repeat or move (a second diff can
// align an insertion with another copy of a line), so a result that would
// change when merged again is not taken: mine wins the whole text and
// overlap is true, which loses nothing (theirs goes to the changelog).
func refMergeText(base, theirs, mine string) (merged string, overlap bool) {
	merged, overlap = refDiff3(base, theirs, mine)
	if merged == theirs || merged == mine {
		return merged, overlap
	}
	if again, _ := refDiff3(base, merged, mine); again != merged {
		return mine, true
	}
	return merged, overlap
}

// refDiff3 is the three-way merge of refMergeText without its idempotence check.
func refDiff3(base, theirs, mine string) (merged string, overlap bool) {
	if theirs == base || mine == theirs {
		return mine, false
	}
	if mine == base {
		return theirs, false
	}
	b, t, m := refSplitLines(base), refSplitLines(theirs), refSplitLines(mine)
	mt := refMatchLines(b, t)
	mm := refMatchLines(b, m)

	var out []string
	i, ti, mi := 0, 0, 0
	for {
		// The next base line kept by both sides ends the unstable stretch.
		j := i
		for j < len(b) && (mt[j] < 0 || mm[j] < 0) {
			j++
		}
		tEnd, mEnd := len(t), len(m)
		if j < len(b) {
			tEnd, mEnd = mt[j], mm[j]
		}
		lines, o := refMergeChunk(b[i:j], t[ti:tEnd], m[mi:mEnd])
		out = append(out, lines...)
		overlap = overlap || o
		if j == len(b) {
			break
		}
		out = append(out, b[j])
		i, ti, mi = j+1, mt[j]+1, mm[j]+1
	}
	return refJoinLines(out), overlap
}

// refMergeChunk resolves one unstable stretch: base lines b that theirs
// replaced with t and mine with m.
func refMergeChunk(b, t, m []string) ([]string, bool) {
	switch {
	case refEqualLines(t, b):
		return m, false
	case refEqualLines(m, b), refEqualLines(t, m):
		return t, false
	case len(b) == 0:
		// Both inserted at the same place: keep both, unless one holds the
		// other already.
		if refContainsRun(t, m) {
			return t, false
		}
		if refContainsRun(m, t) {
			return m, false
		}
		out := make([]string, 0, len(t)+len(m))
		out = append(out, t...)
		have := map[string]int{}
		for _, l := range t {
			have[l]++
		}
		for _, l := range m {
			if have[l] > 0 {
				have[l]--
				continue
			}
			out = append(out, l)
		}
		return out, false
	case len(t) == len(b) && len(m) == len(b) && refInPlace(b, t) && refInPlace(b, m):
		out := make([]string, len(b))
		overlap := false
		for k := range b {
			switch {
			case m[k] == b[k]:
				out[k] = t[k]
			case t[k] == b[k] || t[k] == m[k]:
				out[k] = m[k]
			default:
				out[k] = m[k]
				overlap = true
			}
		}
		return out, overlap
	}
	return m, true
}

func refInPlace(b, s []string) bool {
	for k := range s {
		if s[k] != b[k] && slices.Contains(b, s[k]) {
			return false
		}
	}
	return true
}

func refEqualLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refContainsRun reports whether sub appears in s as consecutive lines.
func refContainsRun(s, sub []string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if refEqualLines(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// refSplitLines cuts s into lines that each end with "\n", as if s had one
// more "\n" at its end: "a\nb" is ["a\n", "b\n"] and "a\nb\n" is ["a\n",
// "b\n", "\n"]. So a text that does not end with a line break can grow
// lines below its last one without changing it, and every text has one
// list of lines: "" has none.
func refSplitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s+"\n", "\n")
	return lines[:len(lines)-1] // SplitAfter leaves "" after the last "\n"
}

// refJoinLines is the inverse of refSplitLines.
func refJoinLines(lines []string) string {
	return strings.TrimSuffix(strings.Join(lines, ""), "\n")
}

// MaxDiffWork bounds the work of one line diff (steps of Myers' algorithm,
// diagonals tried plus lines matched along them). Past it the lines between
// the common start and end count as all changed, which is always safe (the
// merge then takes one side's stretch whole) and keeps a hostile push from
// costing more than a bounded time per row. web/src/sync/merge.ts uses the
// same bound and the same steps, so the two merges agree even there.
const refMaxDiffWork = MaxDiffWork

// refMatchLines returns, for every line of a, the index of the line of b it is
// matched with in a shortest edit script (Myers, "An O(ND) Difference
// Algorithm"), or -1 for a line b does not keep. Lines are matched in
// order. Where a line could match one of several equal lines, it is
// matched with the last (the search runs from the ends of a and b), so
// that lines inserted before a repeated line are seen as insertions the
// same way on both sides of a merge, and merging an edit that is already
// in theirs adds nothing.
func refMatchLines(a, b []string) []int {
	ra, rb := refReversed(a), refReversed(b)
	rm := refMatchFromStart(ra, rb)
	match := make([]int, len(a))
	for i, j := range rm {
		if j >= 0 {
			j = len(b) - 1 - j
		}
		match[len(a)-1-i] = j
	}
	return match
}

func refReversed(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// refMatchFromStart is refMatchLines without the reversal: equal lines match as
// early as they can. The common start is matched without search.
func refMatchFromStart(a, b []string) []int {
	match := make([]int, len(a))
	for i := range match {
		match[i] = -1
	}
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		match[pre] = pre
		pre++
	}
	x0, n := pre, len(a)-pre
	y0, m := pre, len(b)-pre
	if n == 0 || m == 0 {
		return match
	}

	trace, ok := refSearch(a[x0:], b[y0:])
	if ok {
		refWalkBack(match, trace, x0, y0, n, m)
	}
	return match
}

// refSearch is Myers' search over all of a and b; trace[d] keeps v's
// diagonals -d..d after step d for the walk back. It returns false when it
// gave up past refMaxDiffWork.
func refSearch(a, b []string) (trace [][]int32, ok bool) {
	n, m := len(a), len(b)
	// v[k+off] is the furthest x on diagonal k.
	off := n + m + 1
	v := make([]int, 2*off+1)
	work := 0
	found := false
	d := 0
	for ; d <= n+m && !found; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[k-1+off] < v[k+1+off] {
				x = v[k+1+off]
			} else {
				x = v[k-1+off] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
				work++
			}
			v[k+off] = x
			work++
			if x >= n && y >= m {
				found = true
				break
			}
		}
		snap := make([]int32, 2*d+1)
		for i := range snap {
			snap[i] = int32(v[off-d+i])
		}
		trace = append(trace, snap)
		if !found && work > refMaxDiffWork {
			return nil, false
		}
	}
	return trace, true
}

// refWalkBack walks trace back from (n, m), matching the lines along each
// snake; line x of the search is a's x0+x, line y b's y0+y.
func refWalkBack(match []int, trace [][]int32, x0, y0, n, m int) {
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // diagonals -(d-1)..d-1 at index k+d-1
		k := x - y
		var pk int
		if k == -d || k != d && prev[k-1+d-1] < prev[k+1+d-1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := int(prev[pk+d-1])
		py := px - pk
		// The snake after the edit step: from the edit's end to (x, y).
		sx := px
		if pk == k-1 {
			sx = px + 1
		}
		for x > sx && y > sx-k {
			x--
			y--
			match[x0+x] = y0 + y
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		match[x0+x] = y0 + y
	}
}

// checkSameAsReference fails when MergeText and the reference disagree.
func checkSameAsReference(t *testing.T, base, theirs, mine string) {
	t.Helper()
	got, gotOverlap := MergeText(base, theirs, mine)
	want, wantOverlap := refMergeText(base, theirs, mine)
	if got != want || gotOverlap != wantOverlap {
		t.Fatalf("MergeText(%q, %q, %q) = %q, %v; the reference gives %q, %v", base, theirs, mine, got, gotOverlap, want, wantOverlap)
	}
	if a, b := diff3(base, theirs, mine); true {
		if c, d := refDiff3(base, theirs, mine); a != c || b != d {
			t.Fatalf("diff3(%q, %q, %q) = %q, %v; the reference gives %q, %v", base, theirs, mine, a, b, c, d)
		}
	}
	for _, s := range []string{base, theirs, mine} {
		if l := splitLines(s); !slices.Equal(l, refSplitLines(s)) || joinLines(l) != s || !joinsTo(l, s) || len(l) > 0 && joinsTo(l[1:], s) {
			t.Fatalf("splitLines(%q) = %q, the reference gives %q", s, l, refSplitLines(s))
		}
	}
	if b, th, m := splitLines3(base, theirs, mine); !slices.Equal(b, refSplitLines(base)) || !slices.Equal(th, refSplitLines(theirs)) || !slices.Equal(m, refSplitLines(mine)) {
		t.Fatalf("splitLines3(%q, %q, %q) = %q, %q, %q; not the reference's lines", base, theirs, mine, b, th, m)
	}
	bl, ml := splitLines(base), splitLines(mine)
	if got, want := matchLines(bl, ml), refMatchLines(bl, ml); !slices.Equal(got, want) {
		t.Fatalf("matchLines(%q, %q) = %v, the reference gives %v", bl, ml, got, want)
	}
}

// TestMergeTextSameAsReference compares the merge with the reference on
// the golden vectors' texts and on a sample of the bases, theirs and mines
// of up to three lines from a small alphabet (repeated lines, empty lines,
// with and without a final line break).
func TestMergeTextSameAsReference(t *testing.T) {
	data, err := os.ReadFile("../testdata/merge/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Kind               string
		Base, Theirs, Mine json.RawMessage
	}
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		var b, th, m string
		if v.Kind != "text" || json.Unmarshal(v.Base, &b) != nil || json.Unmarshal(v.Theirs, &th) != nil || json.Unmarshal(v.Mine, &m) != nil {
			continue
		}
		checkSameAsReference(t, b, th, m)
	}
	words := []string{"a", "b", "", "a\r"}
	var texts []string
	var build func(prefix []string)
	build = func(prefix []string) {
		s := strings.Join(prefix, "\n")
		texts = append(texts, s)
		if len(prefix) > 0 {
			texts = append(texts, s+"\n")
		}
		if len(prefix) == 3 {
			return
		}
		for _, w := range words {
			build(append(prefix, w))
		}
	}
	build(nil)
	for i, b := range texts {
		if i%3 != 0 {
			continue
		}
		for _, th := range texts {
			for j, m := range texts {
				if (j+i)%5 == 0 {
					checkSameAsReference(t, b, th, m)
				}
			}
		}
	}
}

// FuzzMergeMatchesReference: the optimised merge gives what the
// reference gives, on anything.
func FuzzMergeMatchesReference(f *testing.F) {
	f.Add("a\nb\nc", "a\nB\nc", "a\nb\nC")
	f.Add("x\ny\nx\ny", "x\nz\nx\ny\n", "y\nx\ny")
	f.Add("", "a", "b")
	f.Add("a\n", "a", "a\n\n")
	f.Fuzz(func(t *testing.T, base, theirs, mine string) {
		checkSameAsReference(t, base, theirs, mine)
	})
}

// TestMergeLongStretchesMatchReference covers stretches longer than
// inPlaceScan, where inPlace looks lines up in a set: lines changed in
// place on both sides, and a line that moved within the stretch.
func TestMergeLongStretchesMatchReference(t *testing.T) {
	const n = 3 * inPlaceScan
	var base, theirs, mine, moved strings.Builder
	for i := range n {
		fmt.Fprintf(&base, "line %d\n", i)
		if i%2 == 0 {
			fmt.Fprintf(&theirs, "theirs %d\n", i)
			fmt.Fprintf(&mine, "line %d\n", i)
		} else {
			fmt.Fprintf(&theirs, "line %d\n", i)
			fmt.Fprintf(&mine, "mine %d\n", i)
		}
		if i == n-1 {
			moved.WriteString("line 0\n")
		} else {
			fmt.Fprintf(&moved, "mine %d\n", i)
		}
	}
	for _, tc := range []struct{ name, theirs, mine string }{
		{"in place", theirs.String(), mine.String()},
		{"a line moved", theirs.String(), moved.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, gotOverlap := MergeText(base.String(), tc.theirs, tc.mine)
			want, overlap := refMergeText(base.String(), tc.theirs, tc.mine)
			if got != want || gotOverlap != overlap {
				t.Fatalf("MergeText differs from the reference: overlap %v, want %v", gotOverlap, overlap)
			}
		})
	}
}
