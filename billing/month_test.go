package billing_test

import (
	"testing"
	"time"

	"corkboard/billing"
)

func TestMonthKey(t *testing.T) {
	plus1 := time.FixedZone("UTC+1", 3600)
	minus5 := time.FixedZone("UTC-5", -5*3600)
	tests := []struct {
		name      string
		t         time.Time
		wantKey   string
		wantReset time.Time
	}{
		{"MidMonth", time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC),
			"2026-11", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"FirstInstant", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			"2026-11", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"LastNanosecond", time.Date(2026, 11, 30, 23, 59, 59, 999999999, time.UTC),
			"2026-11", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{"December", time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC),
			"2026-12", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"January", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
			"2027-01", time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)},
		{"LeapFebruary", time.Date(2028, 2, 29, 10, 0, 0, 0, time.UTC),
			"2028-02", time.Date(2028, 3, 1, 0, 0, 0, 0, time.UTC)},
		// Local midnight of 1 December in UTC+1 is still November in UTC.
		{"AheadOfUTC", time.Date(2026, 12, 1, 0, 30, 0, 0, plus1),
			"2026-11", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		// Evening of 31 October in UTC-5 is already November in UTC.
		{"BehindUTC", time.Date(2026, 10, 31, 21, 0, 0, 0, minus5),
			"2026-11", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := billing.MonthKey(tt.t); got != tt.wantKey {
				t.Errorf("MonthKey=%q, want %q", got, tt.wantKey)
			}
			got := billing.MonthResetsAt(tt.t)
			if !got.Equal(tt.wantReset) || got.Location() != time.UTC {
				t.Errorf("MonthResetsAt=%v, want %v", got, tt.wantReset)
			}
			// The reset instant starts the next month's key.
			if billing.MonthKey(got) == billing.MonthKey(tt.t) {
				t.Errorf("MonthKey(reset)=%q equals MonthKey(t)", billing.MonthKey(got))
			}
			if billing.MonthKey(got.Add(-time.Nanosecond)) != billing.MonthKey(tt.t) {
				t.Errorf("the instant before the reset is not in t's month")
			}
		})
	}
}
