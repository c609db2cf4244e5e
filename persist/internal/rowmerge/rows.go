package rowmerge

// LastCopies returns rows with one copy of each ID: the last one sent, at
// the place of the first (the last copy of a row in a push wins).
func LastCopies[T any](rows []T, id func(*T) string) []T {
	out := make([]T, 0, len(rows))
	at := make(map[string]int, len(rows))
	for i := range rows {
		if j, ok := at[id(&rows[i])]; ok {
			out[j] = rows[i]
			continue
		}
		at[id(&rows[i])] = len(out)
		out = append(out, rows[i])
	}
	return out
}

// DropDeleted removes from rows, in place, those whose ID is in deleted:
// rows upserted and then deleted in one push end deleted.
func DropDeleted[T any](rows []T, deleted []string, id func(*T) string) []T {
	gone := make(map[string]bool, len(deleted))
	for _, d := range deleted {
		gone[d] = true
	}
	kept := rows[:0]
	for i := range rows {
		if !gone[id(&rows[i])] {
			kept = append(kept, rows[i])
		}
	}
	return kept
}

// NilIfEmpty returns nil for an empty list: the form of a change's
// connector and frame lists when they have nothing (they are left out of
// its JSON either way), so that a push's change equals a pull's.
func NilIfEmpty[T any](rows []T) []T {
	if len(rows) == 0 {
		return nil
	}
	return rows
}
