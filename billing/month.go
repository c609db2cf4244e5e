package billing

import "time"

// MonthKey returns the calendar month (UTC) that t falls in, as "2026-11".
// Usage records are keyed by it, so a quota resets when the key changes.
func MonthKey(t time.Time) string {
	return t.UTC().Format("2006-01")
}

// MonthResetsAt returns the first instant of the UTC calendar month after
// the one t falls in: the moment the quota of MonthKey(t) resets.
func MonthResetsAt(t time.Time) time.Time {
	u := t.UTC()
	// time.Date normalises month 13 to January of the next year.
	return time.Date(u.Year(), u.Month()+1, 1, 0, 0, 0, 0, time.UTC)
}
