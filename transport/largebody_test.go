package transport

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestLimitLargeBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{largeBodies: make(chan struct{}, maxLargeBodies), log: slog.New(slog.DiscardHandler)}
		var inside atomic.Int32
		release := make(chan struct{})
		h := s.limitLargeBodies(limitPushBody)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inside.Add(1)
			<-release
			w.WriteHeader(http.StatusOK)
		}))
		serve := func(size int64) *httptest.ResponseRecorder {
			r := httptest.NewRequest("POST", "/", strings.NewReader(""))
			r.ContentLength = size
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			return rec
		}

		big := make([]*httptest.ResponseRecorder, maxLargeBodies+1)
		for i := range big {
			go func() { big[i] = serve(limitJSONBody + 1) }()
		}
		synctest.Wait()
		if got := inside.Load(); got != maxLargeBodies {
			t.Fatalf("%d large requests inside at once, want %d", got, maxLargeBodies)
		}
		// A small body never waits for a large-body slot.
		go serve(100)
		synctest.Wait()
		if got := inside.Load(); got != maxLargeBodies+1 {
			t.Fatalf("a small request waited behind large ones (inside=%d)", got)
		}
		// The waiting large request gives up with 503 after largeBodyWait.
		time.Sleep(largeBodyWait + time.Second)
		synctest.Wait()
		var refused int
		for _, rec := range big {
			if rec != nil && rec.Code == http.StatusServiceUnavailable {
				refused++
				if rec.Header().Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
			}
		}
		if refused != 1 {
			t.Fatalf("%d large requests refused after the wait, want 1", refused)
		}
		close(release)
		synctest.Wait()
	})
}
