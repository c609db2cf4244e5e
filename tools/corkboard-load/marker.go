package main

import (
	"bytes"
	"math"
	"strconv"
)

// A marker is what a push carries in its note's content so that every
// receiver can tell which push it got and when it was sent, without a
// shared table: "cbload:<writer>.<seq>@<sentNs>;" where sentNs is
// nanoseconds since the run's start on the load tool's monotonic clock
// (senders and receivers are in one process). The characters need no JSON
// escaping, so the marker appears verbatim in the server's messages.
type marker struct {
	Writer int
	Seq    int64
	SentNs int64
}

const markerPrefix = "cbload:"

// appendMarker appends m's text to b.
func appendMarker(b []byte, m marker) []byte {
	b = append(b, markerPrefix...)
	b = strconv.AppendInt(b, int64(m.Writer), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, m.Seq, 10)
	b = append(b, '@')
	b = strconv.AppendInt(b, m.SentNs, 10)
	return append(b, ';')
}

// scanMarkers calls fn for every well-formed marker in msg and returns how
// many it found. Malformed ones are skipped.
func scanMarkers(msg []byte, fn func(marker)) int {
	n := 0
	for {
		i := bytes.Index(msg, []byte(markerPrefix))
		if i < 0 {
			return n
		}
		msg = msg[i+len(markerPrefix):]
		w, rest, ok := cutNumber(msg, '.')
		if !ok {
			continue
		}
		seq, rest, ok := cutNumber(rest, '@')
		if !ok {
			continue
		}
		sent, rest, ok := cutNumber(rest, ';')
		if !ok || w > 1<<30 {
			continue
		}
		fn(marker{Writer: int(w), Seq: seq, SentNs: sent})
		n++
		msg = rest
	}
}

// cutNumber reads a non-empty run of decimal digits up to sep; a value
// that does not fit an int64 is refused.
func cutNumber(b []byte, sep byte) (int64, []byte, bool) {
	var v int64
	for i := 0; i < len(b) && i <= 20; i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			d := int64(c - '0')
			if v > (math.MaxInt64-d)/10 {
				return 0, nil, false
			}
			v = v*10 + d
		case c == sep && i > 0:
			return v, b[i+1:], true
		default:
			return 0, nil, false
		}
	}
	return 0, nil, false
}
