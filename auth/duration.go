package auth

import (
	"strconv"
	"strings"
	"time"
)

// durationForPeople writes d the way a person would in a sentence: whole
// days, hours, minutes and seconds, the zero ones left out ("10 minutes",
// "1 hour and 30 minutes", "1 day, 2 hours and 5 seconds"), rather than
// Go's "10m0s". d is rounded to the second; less than half a second is
// "0 seconds".
func durationForPeople(d time.Duration) string {
	d = d.Round(time.Second)
	if d <= 0 {
		return "0 seconds"
	}
	var parts []string
	for _, u := range []struct {
		size time.Duration
		name string
	}{
		{24 * time.Hour, "day"},
		{time.Hour, "hour"},
		{time.Minute, "minute"},
		{time.Second, "second"},
	} {
		n := d / u.size
		d -= n * u.size
		switch {
		case n == 1:
			parts = append(parts, "1 "+u.name)
		case n > 1:
			parts = append(parts, strconv.FormatInt(int64(n), 10)+" "+u.name+"s")
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
