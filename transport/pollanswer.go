package transport

import (
	"corkboard/transport/respond"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// The no-change poll's path, kept free of allocations: every client asks
// it every few seconds (docs/benchmarks.md, BenchmarkPullNoChange).

// queryValue is r.URL.Query().Get(name) and Has(name) in one, without
// building the map of every parameter: polls ask for two parameters on
// every request. Like url.ParseQuery it skips pairs holding a semicolon or
// a bad escape, and the first value of a repeated name wins.
func queryValue(rawQuery, name string) (string, bool) {
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		key, val, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(key, "%+") {
			var err error
			if key, err = url.QueryUnescape(key); err != nil {
				continue
			}
		}
		if key != name {
			continue
		}
		if strings.ContainsAny(val, "%+") {
			v, err := url.QueryUnescape(val)
			if err != nil {
				continue
			}
			val = v
		}
		return val, true
	}
	return "", false
}

// versionBuffers recycle the bytes of {serverVersion} answers.
var versionBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

// writeVersion answers {"serverVersion":v} exactly as writeJSON would, for
// the answer every up-to-date poll gets, allocating nothing.
func writeVersion(w http.ResponseWriter, v int64) {
	h := w.Header()
	h["Content-Type"] = respond.JSONContentType
	h["Cache-Control"] = respond.NoStore
	w.WriteHeader(http.StatusOK)
	bp := versionBuffers.Get().(*[]byte)
	b := append((*bp)[:0], `{"serverVersion":`...)
	b = strconv.AppendInt(b, v, 10)
	b = append(b, "}\n"...)
	_, _ = w.Write(b)
	*bp = b
	versionBuffers.Put(bp)
}
