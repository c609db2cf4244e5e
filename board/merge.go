package board

import (
	"bytes"
	"slices"
	"strings"
)

// A push that carries baseVersion on a row asks for a merge instead of a
// replace: the row is the client's edit (mine) of the server copy it had at
// baseVersion (base), and the server merges it into what was committed
// since (theirs). docs/sync.md, "How a push is merged", is the contract;
// testdata/merge/vectors.json holds the golden vectors that this file and
// the browser's web/src/sync/merge.ts must both pass.

// MergeNote merges mine, an edit of base, into theirs, the row as committed
// since base. A field mine did not change keeps theirs; a field only mine
// changed takes mine; x and y move together as one position, and w and h
// as one size, apart from it (a move and a resize both survive); color, type
// and each extra field are one value each, and mine (the later push) wins
// when both changed one. title and content merge line by line (MergeText).
// overlap reports that both sides changed the same lines of a text field,
// so that some of theirs was overwritten by mine. The ID, version and
// deletedAt of the result are theirs; updatedAt is mine.
func MergeNote(base, theirs, mine Note) (merged Note, overlap bool) {
	merged = theirs
	merged.UpdatedAt = mine.UpdatedAt
	merged.BaseVersion = 0
	merged.X, merged.Y = mergePair(base.X, base.Y, theirs.X, theirs.Y, mine.X, mine.Y)
	merged.W, merged.H = mergePair(base.W, base.H, theirs.W, theirs.H, mine.W, mine.H)
	merged.Color = mergeValue(base.Color, theirs.Color, mine.Color)
	merged.Type = mergeValue(base.Type, theirs.Type, mine.Type)
	var o1, o2 bool
	merged.Title, o1 = MergeText(base.Title, theirs.Title, mine.Title)
	merged.Content, o2 = MergeText(base.Content, theirs.Content, mine.Content)
	merged.Extra = mergeExtra(base.Extra, theirs.Extra, mine.Extra)
	// createdBy stays theirs (the store keeps it as stored); locked is one
	// value, set or cleared by the owner only (rights.go).
	merged.Locked = mergeValue(base.Locked, theirs.Locked, mine.Locked)
	return merged, o1 || o2
}

// MergeItem merges a tracker item the way MergeNote merges a note: key,
// type, status, parentId and each extra field are one value each; summary
// and description merge line by line.
func MergeItem(base, theirs, mine TrackerItem) (merged TrackerItem, overlap bool) {
	merged = theirs
	merged.UpdatedAt = mine.UpdatedAt
	merged.BaseVersion = 0
	merged.Key = mergeValue(base.Key, theirs.Key, mine.Key)
	merged.Type = mergeValue(base.Type, theirs.Type, mine.Type)
	merged.Status = mergeValue(base.Status, theirs.Status, mine.Status)
	merged.ParentID = mergeValue(base.ParentID, theirs.ParentID, mine.ParentID)
	var o1, o2 bool
	merged.Summary, o1 = MergeText(base.Summary, theirs.Summary, mine.Summary)
	merged.Description, o2 = MergeText(base.Description, theirs.Description, mine.Description)
	merged.Extra = mergeExtra(base.Extra, theirs.Extra, mine.Extra)
	return merged, o1 || o2
}

// mergeValue is the rule for a field that is one value: mine when mine
// changed it, else theirs.
func mergeValue[T comparable](base, theirs, mine T) T {
	if mine != base {
		return mine
	}
	return theirs
}

// mergePair merges two fields that move together as one value (a
// position, a size, a connector's two ends): mine's pair when mine changed
// either of them, else theirs'.
func mergePair[T comparable](baseA, baseB, theirsA, theirsB, mineA, mineB T) (T, T) {
	if mineA != baseA || mineB != baseB {
		return mineA, mineB
	}
	return theirsA, theirsB
}

// mergeExtra merges extra fields one by one, each as one value (a field
// absent on a side is that side's value too, so a field mine removed is
// removed and one theirs added is kept). The result lists mine's fields in
// mine's order, then theirs' other fields in theirs' order.
func mergeExtra(base, theirs, mine []Field) []Field {
	if len(base) == 0 && len(theirs) == 0 {
		return mine
	}
	find := func(fs []Field, name string) (json []byte, ok bool) {
		for _, f := range fs {
			if f.Name == name {
				return f.Value, true
			}
		}
		return nil, false
	}
	same := func(a []byte, aok bool, b []byte, bok bool) bool {
		return aok == bok && bytes.Equal(a, b)
	}
	var out []Field
	take := func(name string) {
		b, bok := find(base, name)
		t, tok := find(theirs, name)
		m, mok := find(mine, name)
		v, ok := m, mok
		if same(m, mok, b, bok) {
			v, ok = t, tok
		}
		if ok {
			out = append(out, Field{Name: name, Value: v})
		}
	}
	for _, f := range mine {
		take(f.Name)
	}
	for _, f := range theirs {
		if _, ok := find(mine, f.Name); !ok {
			take(f.Name)
		}
	}
	return out
}

// MergeText merges mine, an edit of base, into theirs line by line (a
// three-way merge, diff3). Changes to different lines both survive. Where
// both sides changed the same stretch of lines and it has as many lines in
// base, theirs and mine, each changed in place (no changed line is another
// line of the base's stretch, which would mean lines moved), the lines are
// merged one by one, so neighbouring edits (two ticks in a checklist) both
// survive; otherwise mine wins the stretch and overlap is true. Two
// insertions at the same place with no base lines between are both kept,
// theirs first (one that already holds the other is taken alone, and
// mine's lines that theirs already holds are not added again, so merging
// the same edit twice adds nothing).
// Lines are compared whole, line break included ("\r\n" is not "\n").
//
// A merge is idempotent: merging mine again into the result gives the
// result. diff3 alone is not where lines repeat or move (a second diff can
// align an insertion with another copy of a line), so a result that would
// change when merged again is not taken: mine wins the whole text and
// overlap is true, which loses nothing (theirs goes to the changelog).
//
// The check is the second diff3 of base, the result and mine, done
// without repeating what the first one already knows: the lines of base
// and mine and their match (the same, since diff3 is deterministic), and
// the result's lines (the first diff3's, which splitting the result gives
// back). web/src/sync/merge.ts runs both diff3 whole; the two give
// the same (merge_ref_test.go compares them). Every merged push runs this,
// so the three texts' lines share one allocation and the line matches
// share their scratch space (differ).
func MergeText(base, theirs, mine string) (merged string, overlap bool) {
	if theirs == base || mine == theirs {
		return mine, false
	}
	if mine == base {
		return theirs, false
	}
	b, t, m := splitLines3(base, theirs, mine)
	d := newDiffer(len(b), 3, max(len(t), len(m)))
	mt, mm := d.matchLines(b, t), d.matchLines(b, m)
	out, overlap := diff3Lines(b, t, m, mt, mm)
	merged = joinLines(out)
	if merged == theirs || merged == mine {
		return merged, overlap
	}
	// diff3(base, merged, mine), whose early answers are mine (merged is
	// base) or a merge of lines.
	if merged == base {
		return mine, true
	}
	// The result's lines are out, except for "" (out ["\n"]), which has none.
	ml := out
	if merged == "" {
		ml = nil
	}
	if again, _ := diff3Lines(b, ml, m, d.matchLines(b, ml), mm); !joinsTo(again, merged) {
		return mine, true
	}
	return merged, overlap
}

// diff3 is the three-way merge of MergeText without its idempotence check.
func diff3(base, theirs, mine string) (merged string, overlap bool) {
	if theirs == base || mine == theirs {
		return mine, false
	}
	if mine == base {
		return theirs, false
	}
	b, t, m := splitLines(base), splitLines(theirs), splitLines(mine)
	out, overlap := diff3Lines(b, t, m, matchLines(b, t), matchLines(b, m))
	return joinLines(out), overlap
}

// diff3Lines is diff3 on lines: b, t and m are the lines of base, theirs
// and mine, mt and mm matchLines(b, t) and matchLines(b, m).
func diff3Lines(b, t, m []string, mt, mm []int) (out []string, overlap bool) {
	out = make([]string, 0, max(len(t), len(m)))
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
		var o bool
		out, o = mergeChunk(out, b[i:j], t[ti:tEnd], m[mi:mEnd])
		overlap = overlap || o
		if j == len(b) {
			break
		}
		out = append(out, b[j])
		i, ti, mi = j+1, mt[j]+1, mm[j]+1
	}
	return out, overlap
}

// mergeChunk resolves one unstable stretch, base lines b that theirs
// replaced with t and mine with m, and appends its lines to out.
func mergeChunk(out, b, t, m []string) ([]string, bool) {
	switch {
	case equalLines(t, b):
		return append(out, m...), false
	case equalLines(m, b), equalLines(t, m):
		return append(out, t...), false
	case len(b) == 0:
		// Both inserted at the same place: keep both, unless one holds the
		// other already.
		if containsRun(t, m) {
			return append(out, t...), false
		}
		if containsRun(m, t) {
			return append(out, m...), false
		}
		// Theirs, then mine's lines that theirs does not already hold (an
		// edit pushed again on an older base carries lines theirs has).
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
	case len(t) == len(b) && len(m) == len(b) && inPlace(b, t) && inPlace(b, m):
		overlap := false
		for k := range b {
			switch {
			case m[k] == b[k]:
				out = append(out, t[k])
			case t[k] == b[k] || t[k] == m[k]:
				out = append(out, m[k])
			default:
				out = append(out, m[k])
				overlap = true
			}
		}
		return out, overlap
	}
	return append(out, m...), true
}

// inPlace reports whether s, a stretch as long as b, changed b's lines in
// place: no line of s that differs from b's line at its place is one of b's
// other lines. A line that is would have moved, and merging by place would
// show it twice.
func inPlace(b, s []string) bool {
	// Short stretches (the usual edit) search b; long ones look lines up
	// in a set, or two long texts changed everywhere would cost the
	// square of their length.
	var lines map[string]struct{}
	for k := range s {
		if s[k] == b[k] {
			continue
		}
		if len(b) <= inPlaceScan {
			if slices.Contains(b, s[k]) {
				return false
			}
			continue
		}
		if lines == nil {
			lines = make(map[string]struct{}, len(b))
			for _, l := range b {
				lines[l] = struct{}{}
			}
		}
		if _, ok := lines[s[k]]; ok {
			return false
		}
	}
	return true
}

// inPlaceScan is the longest stretch inPlace searches line by line.
const inPlaceScan = 64

func equalLines(a, b []string) bool {
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

// containsRun reports whether sub appears in s as consecutive lines.
func containsRun(s, sub []string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if equalLines(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// splitLines cuts s into lines that each end with "\n", as if s had one
// more "\n" at its end: "a\nb" is ["a\n", "b\n"] and "a\nb\n" is ["a\n",
// "b\n", "\n"]. So a text that does not end with a line break can grow
// lines below its last one without changing it, and every text has one
// list of lines: "" has none. Every line but the last is a piece of s.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	if s == "" {
		return append(lines, "\n")
	}
	return append(lines, s+"\n")
}

// splitLines3 is splitLines of three texts in two allocations, whatever
// their number of lines: their lines share one array, and their last
// lines, with the "\n" splitLines adds, one string. Every other line is a
// piece of its text.
func splitLines3(x, y, z string) (xl, yl, zl []string) {
	texts := [3]string{x, y, z}
	n, size := 0, 0
	var lastAt [3]int // where each text's last line starts
	for k, s := range texts {
		if s != "" {
			n += strings.Count(s, "\n") + 1
			lastAt[k] = strings.LastIndexByte(s, '\n') + 1
			size += len(s) - lastAt[k] + 1
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	for k, s := range texts {
		if s != "" {
			sb.WriteString(s[lastAt[k]:])
			sb.WriteByte('\n')
		}
	}
	tails, lines := sb.String(), make([]string, 0, n)
	var split [3][]string
	for k, s := range texts {
		start := len(lines)
		if s != "" {
			for text := s[:lastAt[k]]; text != ""; {
				i := strings.IndexByte(text, '\n')
				lines = append(lines, text[:i+1])
				text = text[i+1:]
			}
			n := len(s) - lastAt[k] + 1
			lines = append(lines, tails[:n])
			tails = tails[n:]
		}
		split[k] = lines[start:len(lines):len(lines)]
	}
	return split[0], split[1], split[2]
}

// joinLines is the inverse of splitLines.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	n := -1 // the last line's "\n" is left out
	for _, l := range lines {
		n += len(l)
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, l := range lines[:len(lines)-1] {
		sb.WriteString(l)
	}
	sb.WriteString(strings.TrimSuffix(lines[len(lines)-1], "\n"))
	return sb.String()
}

// joinsTo reports whether joinLines(lines) is s, without building it.
func joinsTo(lines []string, s string) bool {
	if len(lines) == 0 {
		return s == ""
	}
	last := lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(s, l) {
			return false
		}
		s = s[len(l):]
	}
	return s == strings.TrimSuffix(last, "\n")
}

// MaxDiffWork bounds the work of one line diff (steps of Myers' algorithm,
// diagonals tried plus lines matched along them). Past it the lines between
// the common start and end count as all changed, which is always safe (the
// merge then takes one side's stretch whole) and keeps a hostile push from
// costing more than a bounded time per row. web/src/sync/merge.ts uses the
// same bound and the same steps, so the two merges agree even there.
const MaxDiffWork = 1_000_000

// matchLines returns, for every line of a, the index of the line of b it is
// matched with in a shortest edit script (Myers, "An O(ND) Difference
// Algorithm"), or -1 for a line b does not keep. Lines are matched in
// order. Where a line could match one of several equal lines, it is
// matched with the last (the search runs from the ends of a and b), so
// that lines inserted before a repeated line are seen as insertions the
// same way on both sides of a merge, and merging an edit that is already
// in theirs adds nothing.
func matchLines(a, b []string) []int {
	var d differ
	return d.matchLines(a, b)
}

// differ is the scratch space of the line matches of one merge: the
// search's furthest points and its trace, which no match keeps, so the
// matches of one merge reuse them instead of each allocating its own.
type differ struct {
	// matches is room for the next matches it returns.
	matches []int
	v       []int
	// trace holds v's diagonals -d..d after each step d, one after the
	// other: step d's 2d+1 values start at d*d.
	trace []int32
}

// newDiffer returns a differ with room, in one allocation, for count
// matches of a text of lines lines with texts of up to other lines, and
// for the search's first steps: what the merge of a few changed lines
// needs, whatever the texts' length.
func newDiffer(lines, count, other int) differ {
	ints := make([]int, count*lines+2*(lines+other+1)+1)
	return differ{matches: ints[:count*lines], v: ints[count*lines:], trace: make([]int32, 0, 64)}
}

// matchLines is the package's matchLines with d's scratch space.
func (d *differ) matchLines(a, b []string) []int {
	// Myers' search from the start of a and b reversed, read in place: the
	// reversed a's line i is a[ae-i] (ae = len(a)-1), b's line j is
	// b[be-j], and a match of the two is match[ae-i] = be-j. The common
	// start of the reversed lines is matched without search.
	ae, be := len(a)-1, len(b)-1
	match := d.takeMatches(len(a))
	pre := 0
	for pre < len(a) && pre < len(b) && a[ae-pre] == b[be-pre] {
		match[ae-pre] = be - pre
		pre++
	}
	n, m := len(a)-pre, len(b)-pre
	if n == 0 || m == 0 {
		return match
	}
	ae, be = ae-pre, be-pre // line x of the search is a[ae-x], line y b[be-y]
	steps, ok := d.search(a, b, ae, be, n, m)
	if ok {
		d.walkBack(match, steps, ae, be, n, m)
	}
	return match
}

// takeMatches returns room for the matches of n lines, all -1 (unmatched),
// from d's scratch space when it has room left.
func (d *differ) takeMatches(n int) []int {
	var match []int
	if len(d.matches) >= n {
		match, d.matches = d.matches[:n:n], d.matches[n:]
	} else {
		match = make([]int, n)
	}
	for i := range match {
		match[i] = -1
	}
	return match
}

// search runs Myers' search over the n lines of a and m of b left after
// the common start (line x is a[ae-x], line y b[be-y]), keeping each
// step's furthest points in d.trace. It returns the number of steps the
// shortest edit script takes plus one, or false when the search gave up
// past MaxDiffWork (every line left then counts as changed).
func (d *differ) search(a, b []string, ae, be, n, m int) (steps int, ok bool) {
	// v[k+off] is the furthest x on diagonal k.
	off := n + m + 1
	if cap(d.v) < 2*off+1 {
		d.v = make([]int, 2*off+1)
	}
	v := d.v[:2*off+1]
	clear(v)
	trace := d.trace[:0]
	work := 0
	found := false
	step := 0
	for ; step <= n+m && !found; step++ {
		for k := -step; k <= step; k += 2 {
			var x int
			if k == -step || k != step && v[k-1+off] < v[k+1+off] {
				x = v[k+1+off]
			} else {
				x = v[k-1+off] + 1
			}
			y := x - k
			for x < n && y < m && a[ae-x] == b[be-y] {
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
		for _, x := range v[off-step : off+step+1] {
			trace = append(trace, int32(x))
		}
		if !found && work > MaxDiffWork {
			d.trace = trace
			return 0, false
		}
	}
	d.trace = trace
	return step, true
}

// walkBack follows d.trace of a search of steps from (n, m) back to the
// start, matching the lines along each snake into match.
func (d *differ) walkBack(match []int, steps, ae, be, n, m int) {
	trace := d.trace
	x, y := n, m
	for step := steps - 1; step > 0; step-- {
		prev := trace[(step-1)*(step-1) : step*step] // diagonals -(step-1)..step-1 at index k+step-1
		k := x - y
		var pk int
		if k == -step || k != step && prev[k-1+step-1] < prev[k+1+step-1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := int(prev[pk+step-1])
		py := px - pk
		// The snake after the edit step: from the edit's end to (x, y).
		sx := px
		if pk == k-1 {
			sx = px + 1
		}
		for x > sx && y > sx-k {
			x--
			y--
			match[ae-x] = be - y
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		match[ae-x] = be - y
	}
}
