//go:build !linux

package livesock

import (
	"errors"
	"log/slog"
	"net/http"
)

// fastEngine is Linux's (fast_linux.go); New refuses Fast elsewhere, and
// Auto is plain.
type fastEngine struct{}

func newFastEngine(*slog.Logger) *fastEngine { return nil }

func (*fastEngine) accept(w http.ResponseWriter, _ *http.Request, _ Handler, _ Options) (Conn, error) {
	http.Error(w, "no fast live sockets on this platform", http.StatusInternalServerError)
	return nil, errors.ErrUnsupported
}

func (*fastEngine) close() error { return nil }

func (*fastEngine) polled() int { return 0 }
