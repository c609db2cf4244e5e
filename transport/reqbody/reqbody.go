// Package reqbody reads request bodies: their size limits, the streaming
// decode every JSON body goes through (jsondec, stopping at the first thing
// wrong), and the declared shapes of the board's rows that the sync routes,
// the live channel and the AI routes all read.
package reqbody

import (
	"errors"
	"io"
	"net/http"

	"corkboard/board"
	"corkboard/transport/jsondec"
)

// Body size limits (decided in docs/api.md).
const (
	LimitAuth = 64 << 10 // auth endpoints
	LimitJSON = 1 << 20  // ordinary JSON bodies
	// LimitPush admits the spec's largest valid push: 500 notes of 30,000
	// code points, each up to 4 bytes of UTF-8 (60 MB), plus the other fields.
	LimitPush = 64 << 20
)

// TooLarge is the error of a body over limit bytes.
func TooLarge(limit int64) error {
	return board.Errorf(board.ETOOLARGE, "Request body is larger than %d bytes.", limit)
}

// RefuseBody marks the connection to close after the answer to a body that
// is not read. Without it net/http reads a small unread body (up to 256
// KiB) before answering, to keep the connection: the refusal would wait
// for the very bytes it refuses.
func RefuseBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
}

// bodyReader returns r's body cut at limit bytes. A body whose
// Content-Length is over limit is refused at once, before a byte of it is
// read: the header is enough to know it will not fit.
func bodyReader(w http.ResponseWriter, r *http.Request, limit int64) (io.Reader, error) {
	if r.ContentLength > limit {
		RefuseBody(w)
		return nil, TooLarge(limit)
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
		return TooLarge(limit)
	case errors.As(err, &be):
		return err
	default:
		return board.Errorf(board.EINVALID, "Could not read the request body.")
	}
}

// Read reads at most limit bytes of r's body; past it the error is
// ETOOLARGE. Only the billing webhook, which must check a signature on the
// exact bytes, reads a body whole; JSON bodies are streamed (Decode).
func Read(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
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

// Decode decodes a JSON body of at most limit bytes with decode, one of
// the shapes (shapes.go and the route packages'), and checks that nothing follows the
// value. The body is streamed: decoding stops, and reading with it, at the
// first thing wrong (docs/api.md, "Request bodies").
func Decode(w http.ResponseWriter, r *http.Request, limit int64, decode func(*jsondec.Decoder) error) error {
	body, err := bodyReader(w, r, limit)
	if err != nil {
		return err
	}
	return DecodeFrom(jsondec.New(body), limit, decode)
}

// DecodeFrom runs decode on d and checks the end of the input.
func DecodeFrom(d *jsondec.Decoder, limit int64, decode func(*jsondec.Decoder) error) error {
	err := decode(d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return readError(err, limit)
	}
	return nil
}

// DecodeBytes decodes data (a WebSocket message) with decode.
func DecodeBytes(data []byte, decode func(*jsondec.Decoder) error) error {
	return DecodeFrom(jsondec.NewBytes(data), int64(len(data)), decode)
}

// VisibleASCII reports whether s holds only visible ASCII characters, as
// an idempotency key must (the Idempotency-Key header, a live push's
// idempotencyKey).
func VisibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
