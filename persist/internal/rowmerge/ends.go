package rowmerge

import (
	"fmt"

	"corkboard/board"
)

// A connector joins two live rows, notes or frames (docs/sync.md,
// "Connectors and frames"). Both stores keep that true the same way, with
// the functions below: a push whose connector names an end that will not
// be live once its upserts apply is refused whole (the client named
// something the board does not have), and a connector whose end goes away
// is deleted by the push that takes it away, so that no client ever pulls
// a dangling one.

// Ends are a connector's ID and the IDs of its ends.
type Ends struct{ ID, From, To string }

// EndsOf reads the ID and ends of a stored connector's JSON.
func EndsOf(data []byte) (Ends, error) {
	var c board.Connector
	if err := decode(data, &c); err != nil {
		return Ends{}, fmt.Errorf("decode connector: %w", err)
	}
	return Ends{ID: c.ID, From: c.From, To: c.To}, nil
}

// Upserted is the set of note and frame IDs a push upserts: ends that are
// live once it applies, whatever the store holds.
func Upserted(p *board.Push) map[string]bool {
	set := make(map[string]bool, len(p.Notes.Upserted)+len(p.Frames.Upserted))
	for i := range p.Notes.Upserted {
		set[p.Notes.Upserted[i].ID] = true
	}
	for i := range p.Frames.Upserted {
		set[p.Frames.Upserted[i].ID] = true
	}
	return set
}

// Gone is the set of note and frame IDs a push deletes: the connectors
// attached to them go with them.
func Gone(p *board.Push) map[string]bool {
	set := make(map[string]bool, len(p.Notes.Deleted)+len(p.Frames.Deleted))
	for _, id := range p.Notes.Deleted {
		set[id] = true
	}
	for _, id := range p.Frames.Deleted {
		set[id] = true
	}
	return set
}

// EndIDs lists the ends of the connectors a push writes (merged: a
// revived connector's ends are its last live state's) that the push does
// not upsert itself: the IDs whose liveness the store looks up.
func EndIDs(p *board.Push, merged []board.Connector) []string {
	up := Upserted(p)
	var out []string
	seen := map[string]bool{}
	for i := range merged {
		for _, id := range []string{merged[i].From, merged[i].To} {
			if !up[id] && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// CheckEnds decides the fate of the connectors a push writes: mine are
// their last copies as pushed, merged the same rows as merged (same
// order), and live reports whether a note or frame of the board is live as
// stored. It returns MissingEnd for the first connector whose pushed end
// is not live once the push's upserts apply (the push is refused), and
// the IDs of those whose end came from the stored row (a merge, a
// revival) and is gone: the push deletes them. p locates a refused
// connector in the request.
func CheckEnds(p *board.Push, mine, merged []board.Connector, live func(id string) bool) (dangling []string, err error) {
	up := Upserted(p)
	ok := func(id string) bool { return up[id] || live(id) }
	for i := range merged {
		for _, e := range []struct{ name, mine, merged string }{
			{"from", mine[i].From, merged[i].From},
			{"to", mine[i].To, merged[i].To},
		} {
			if ok(e.merged) {
				continue
			}
			if e.mine == e.merged {
				return nil, board.MissingEnd(fmt.Sprintf("connectors.upserted[%d]", lastIndex(p.Connectors.Upserted, mine[i].ID)), e.name, e.mine)
			}
			dangling = append(dangling, merged[i].ID)
			break
		}
	}
	return dangling, nil
}

// lastIndex is the place in rows of the last copy of id (the one applied).
func lastIndex(rows []board.Connector, id string) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].ID == id {
			return i
		}
	}
	return -1
}

// Cascade lists the connectors a push deletes because an end goes: its
// own deletions first, then the dangling ones CheckEnds found, then those
// it writes (merged) with an end in gone, then the stored live ones
// (stored; those the push writes are judged on what it writes) with an end
// in gone. Each ID once.
func Cascade(p *board.Push, dangling []string, merged []board.Connector, stored []Ends) []string {
	gone := Gone(p)
	out := make([]string, 0, len(p.Connectors.Deleted)+len(dangling))
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, id := range p.Connectors.Deleted {
		add(id)
	}
	for _, id := range dangling {
		add(id)
	}
	written := make(map[string]bool, len(merged))
	for i := range merged {
		written[merged[i].ID] = true
		if gone[merged[i].From] || gone[merged[i].To] {
			add(merged[i].ID)
		}
	}
	for _, e := range stored {
		if !written[e.ID] && (gone[e.From] || gone[e.To]) {
			add(e.ID)
		}
	}
	return out
}
