package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"corkboard/access"
	"corkboard/board"
	"corkboard/transport/reqctx"
)

// The server's policy is behind small interfaces, so a handler can be
// tested with fakes instead of stores, meters and a hub.

type fakeGuard struct {
	a   *access.Access
	err error
}

func (g fakeGuard) Guard(context.Context, string, string) (access.Access, error) {
	if g.a == nil {
		return access.Access{}, g.err
	}
	return *g.a, g.err
}

func TestRequireBoardRendersTheGuard(t *testing.T) {
	tests := []struct {
		name       string
		guard      fakeGuard
		wantStatus int
	}{
		{"Member", fakeGuard{a: &access.Access{Board: &board.Board{ID: "b1"}, CanEdit: true}}, http.StatusNoContent},
		{"ErrForbidden", fakeGuard{err: board.Errorf(board.EFORBIDDEN, "no")}, http.StatusForbidden},
		{"ErrUnclaimed", fakeGuard{err: board.Errorf(board.ENOTFOUND, "no")}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{}, Deps{}, nil)
			t.Cleanup(func() { _ = s.Close() })
			s.guard = tt.guard
			var seen *access.Access
			r := chi.NewRouter()
			r.With(s.requireBoard).Get("/boards/{boardId}", func(w http.ResponseWriter, r *http.Request) {
				seen = reqctx.Access(r.Context())
				w.WriteHeader(http.StatusNoContent)
			})
			rec := httptest.NewRecorder()
			r.ServeHTTP(rec, httptest.NewRequest("GET", "/boards/b1", nil))
			if rec.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			if (seen != nil) != (tt.guard.a != nil) || (seen != nil && *seen != *tt.guard.a) {
				t.Fatalf("the handler saw %+v, want the guard's %+v", seen, tt.guard.a)
			}
		})
	}
}
