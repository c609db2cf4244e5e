package transport

import (
	"errors"
	"io"
	"net/http"
	"time"

	"corkboard/board"
	"corkboard/transport/jsondec"
)

// Body size limits (decided in docs/api.md).
const (
	limitAuthBody = 64 << 10 // auth endpoints
	limitJSONBody = 1 << 20  // ordinary JSON bodies
	// limitPushBody admits the spec's largest valid push: 500 notes of 30,000
	// code points, each up to 4 bytes of UTF-8 (60 MB), plus the other fields.
	limitPushBody = 64 << 20
)

// maxLargeBodies is how many bodies over limitJSONBody (pushes and
// changelog writes of up to 64 MiB) are read and decoded at once; others
// wait for a slot. It bounds the memory a burst of large requests can pin.
const maxLargeBodies = 4

// largeBodyWait is how long a large body waits for a slot before 503.
const largeBodyWait = 30 * time.Second

// limitLargeBodies admits at most maxLargeBodies requests whose body may
// be larger than limitJSONBody (declared so, or of unknown length) at once.
// A body declared larger than limit is refused with 413 at once, without
// waiting for a slot or reading it. It belongs after the board guard, so
// strangers cannot take the slots.
func (s *Server) limitLargeBodies(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler { return s.largeBodyGate(limit, next) }
}

func (s *Server) largeBodyGate(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			refuseBody(w)
			s.writeError(w, r, tooLarge(limit))
			return
		}
		if r.ContentLength >= 0 && r.ContentLength <= limitJSONBody {
			next.ServeHTTP(w, r)
			return
		}
		t := time.NewTimer(largeBodyWait)
		defer t.Stop()
		select {
		case s.largeBodies <- struct{}{}:
			defer func() { <-s.largeBodies }()
			next.ServeHTTP(w, r)
		case <-t.C:
			s.writeError(w, r, &board.Error{Code: board.EUNAVAILABLE, Message: "Too many large requests at once; try again shortly.", RetryAfter: 5})
		case <-r.Context().Done():
		}
	})
}

// tooLarge is the error of a body over limit bytes.
func tooLarge(limit int64) error {
	return board.Errorf(board.ETOOLARGE, "Request body is larger than %d bytes.", limit)
}

// refuseBody marks the connection to close after the answer to a body that
// is not read. Without it net/http reads a small unread body (up to 256
// KiB) before answering, to keep the connection: the refusal would wait
// for the very bytes it refuses.
func refuseBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
}

// bodyReader returns r's body cut at limit bytes. A body whose
// Content-Length is over limit is refused at once, before a byte of it is
// read: the header is enough to know it will not fit.
func bodyReader(w http.ResponseWriter, r *http.Request, limit int64) (io.Reader, error) {
	if r.ContentLength > limit {
		refuseBody(w)
		return nil, tooLarge(limit)
	}
	return http.MaxBytesReader(w, r.Body, limit), nil
}

// readError maps an error of reading a body cut at limit to the client's
// error; errors that are already domain errors pass unchanged.
func readError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	var be *board.Error
	switch {
	case errors.As(err, &mbe):
		return tooLarge(limit)
	case errors.As(err, &be):
		return err
	default:
		return board.Errorf(board.EINVALID, "Could not read the request body.")
	}
}

// readBody reads at most limit bytes of r's body; past it the error is
// ETOOLARGE. Only the billing webhook, which must check a signature on the
// exact bytes, reads a body whole; JSON bodies are streamed (decodeBody).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := bodyReader(w, r, limit)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, readError(err, limit)
	}
	return data, nil
}

// decodeBody decodes a JSON body of at most limit bytes with decode, one of
// the functions of decode_types.go, and checks that nothing follows the
// value. The body is streamed: decoding stops, and reading with it, at the
// first thing wrong (docs/api.md, "Request bodies").
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, decode func(*jsondec.Decoder) error) error {
	body, err := bodyReader(w, r, limit)
	if err != nil {
		return err
	}
	return decodeFrom(jsondec.New(body), limit, decode)
}

// decodeFrom runs decode on d and checks the end of the input.
func decodeFrom(d *jsondec.Decoder, limit int64, decode func(*jsondec.Decoder) error) error {
	err := decode(d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return readError(err, limit)
	}
	return nil
}

// decodeBytes decodes data (a WebSocket message) with decode.
func decodeBytes(data []byte, decode func(*jsondec.Decoder) error) error {
	return decodeFrom(jsondec.NewBytes(data), int64(len(data)), decode)
}
