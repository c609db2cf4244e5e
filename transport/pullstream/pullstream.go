// Package pullstream streams the answers that may be large: pulls, live
// catch-ups and Markdown documents (docs/sync.md, "Large reads"). The
// changes encoder writes a pull part by part as the store hands it over,
// HeldAnswer holds the first LargeReadBuffer bytes back and spools the rest
// until the store's read is over, and Gate bounds how many large answers
// leave at once, per person and in all.
package pullstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"corkboard/persist"
	"corkboard/transport/respond"
)

// Pulls and live catch-ups are streamed (docs/sync.md, "Large reads"): the
// store hands the answer over part by part (persist.ChangePart), the
// encoder below writes each part's JSON as it comes, and what is written
// leaves through a buffer of at most LargeReadBuffer bytes. The bytes are
// exactly those json.Encoder gives for the whole board.Changes (and
// json.Marshal for a live changes message): the golden tests in
// pull_golden_test.go hold them.

// LargeReadBuffer is how much of an answer is held before it is sent; an
// answer that outgrows it is a large read and takes a slot of the gate
// (Gate) before its first byte leaves.
const LargeReadBuffer = 64 << 10

// changesLists are the answer's lists, in the order of its JSON. The
// spec's four come first and are always written; the others (frames and
// connectors, Corkboard's extension) only when they have an element, as
// board.Changes' omitempty leaves them out, so that a spec client sees
// exactly the spec's shape.
var changesLists = [...]string{`,"notes":[`, `,"deletedNoteIds":[`, `,"trackerItems":[`, `,"deletedTrackerItemIds":[`,
	`,"frames":[`, `,"deletedFrameIds":[`, `,"connectors":[`, `,"deletedConnectorIds":[`}

// specLists is how many of changesLists every answer has.
const specLists = 4

// listOf is the index in changesLists of a row part's list.
func listOf(k persist.PartKind) int {
	switch k {
	case persist.PartNote:
		return 0
	case persist.PartDeletedNote:
		return 1
	case persist.PartItem:
		return 2
	case persist.PartDeletedItem:
		return 3
	case persist.PartFrame:
		return 4
	case persist.PartDeletedFrame:
		return 5
	case persist.PartConnector:
		return 6
	default:
		return 7
	}
}

// ChangesEncoder writes a pull answer part by part. The caller writes what
// comes before "board" ("{" or a live message's first fields) and calls
// Finish after the last part.
type ChangesEncoder struct {
	w      io.Writer
	header persist.ChangesHeader
	list   int  // the open list's index in changesLists, -1 before the first
	empty  bool // the open list has no element yet
}

func NewChangesEncoder(w io.Writer) *ChangesEncoder { return &ChangesEncoder{w: w, list: -1} }

// Part writes one part: the header's "board" field, or an element of a
// list (opening the list, and closing the lists before it).
func (e *ChangesEncoder) Part(p *persist.ChangePart) error {
	if p.Kind == persist.PartHeader {
		e.header = p.Header
		b, err := json.Marshal(p.Header.Board)
		if err != nil {
			return fmt.Errorf("encode board header: %w", err)
		}
		return e.write(append([]byte(`"board":`), b...))
	}
	row, err := rowJSON(p)
	if err != nil {
		return err
	}
	if err := e.openList(listOf(p.Kind)); err != nil {
		return err
	}
	if !e.empty {
		if err := e.write([]byte{','}); err != nil {
			return err
		}
	}
	e.empty = false
	return e.write(row)
}

// rowJSON is a row part's element of its list: a live row the store gave
// as stored JSON goes as it is (its wire form, persist.ChangePart.Raw),
// a decoded one or a deleted row's ID is encoded.
func rowJSON(p *persist.ChangePart) ([]byte, error) {
	var v any
	switch {
	case p.Kind == persist.PartNote && p.Note != nil:
		v = p.Note
	case p.Kind == persist.PartItem && p.Item != nil:
		v = p.Item
	case p.Kind == persist.PartFrame && p.Frame != nil:
		v = p.Frame
	case p.Kind == persist.PartConnector && p.Connector != nil:
		v = p.Connector
	case p.Kind == persist.PartNote, p.Kind == persist.PartItem, p.Kind == persist.PartFrame, p.Kind == persist.PartConnector:
		if p.Raw == nil {
			return nil, fmt.Errorf("pull row of kind %d has no value and no JSON", p.Kind)
		}
		return p.Raw, nil
	case p.Kind == persist.PartDeletedNote, p.Kind == persist.PartDeletedItem, p.Kind == persist.PartDeletedFrame, p.Kind == persist.PartDeletedConnector:
		v = p.ID
	default:
		return nil, fmt.Errorf("pull part of unknown kind %d", p.Kind)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode pull row: %w", err)
	}
	return b, nil
}

// openList closes the open list and opens the next ones up to list; of
// the lists past the spec's, only list itself (they are left out empty).
func (e *ChangesEncoder) openList(list int) error {
	for e.list < list {
		if e.list >= 0 {
			if err := e.write([]byte{']'}); err != nil {
				return err
			}
		}
		e.list++
		if e.list >= specLists && e.list < list {
			// An empty extension list: left out. The next one is open
			// in its place, so that no bracket closes it.
			e.list = list
		}
		e.empty = true
		if err := e.write([]byte(changesLists[e.list])); err != nil {
			return err
		}
	}
	return nil
}

// Finish closes the lists (opening the empty ones) and writes the
// version, the reset flag and end, which comes after the closing brace
// ("\n" for an HTTP answer, as json.Encoder ends it).
func (e *ChangesEncoder) Finish(end string) error {
	if err := e.openList(max(e.list, specLists-1)); err != nil {
		return err
	}
	b := append([]byte(`],"serverVersion":`), strconv.FormatInt(e.header.ServerVersion, 10)...)
	if e.header.Reset {
		b = append(b, `,"reset":true`...)
	}
	b = append(b, '}')
	return e.write(append(b, end...))
}

func (e *ChangesEncoder) write(b []byte) error {
	_, err := e.w.Write(b)
	return err
}

// HeldAnswer holds the first LargeReadBuffer bytes of an answer back.
// While it holds everything written so far, nothing has left and the
// request can still be answered otherwise (an error, a refusal by the
// gate). When the buffer fills, Admit decides whether the answer may go
// on (a large read takes a slot), and the answer goes on into a spool
// file (spool.go) rather than to the client, so that the store's read
// ends as soon as the store has given every row, however slowly the
// client reads. Close, called once the read is over, runs Start and sends
// the spooled bytes and the buffer's; Send gets them in pieces of at most
// LargeReadBuffer bytes, the last one with final set.
type HeldAnswer struct {
	// Ctx is the request's or the connection's: once it ends, the read
	// stops at the next write.
	Ctx context.Context
	// Buf is the buffer, with what comes before the first part.
	Buf []byte
	// SpoolDir is the folder of the spool file ("" is the system's
	// temporary folder).
	SpoolDir string
	// Admit, Start and Send: see the type's comment.
	Admit func() error
	Start func() error
	Send  func(p []byte, final bool) error

	spool    spool
	admitted bool
	started  bool
}

func (h *HeldAnswer) Write(p []byte) (int, error) {
	h.Buf = append(h.Buf, p...)
	if len(h.Buf) < LargeReadBuffer {
		return len(p), nil
	}
	if !h.admitted {
		if err := h.Admit(); err != nil {
			return 0, err
		}
		h.admitted = true
	}
	// A client that has gone stops the read here, as a failed send
	// used to.
	if err := h.Ctx.Err(); err != nil {
		return 0, err
	}
	h.spool.dir = h.SpoolDir
	if _, err := h.spool.Write(h.Buf); err != nil {
		return 0, err
	}
	h.Buf = h.Buf[:0]
	return len(p), nil
}

// Close starts the answer and sends all of it: what was spooled, then
// what is held, as the last piece.
func (h *HeldAnswer) Close() error {
	if err := h.Start(); err != nil {
		return err
	}
	h.started = true
	if h.spool.size > 0 {
		chunk := make([]byte, LargeReadBuffer)
		if err := h.spool.replay(chunk, func(p []byte) error { return h.Send(p, false) }); err != nil {
			return err
		}
	}
	return h.Send(h.Buf, true)
}

// Discard removes the spool file, if the answer needed one.
func (h *HeldAnswer) Discard() { h.spool.remove() }

// Started reports whether the answer has begun to leave (Start ran): an
// error then can no longer be answered on its own.
func (h *HeldAnswer) Started() bool { return h.started }

// JSONStarter returns the start of a streamed JSON answer on w: its
// headers, as respond.JSON sends them, and status 200.
func JSONStarter(w http.ResponseWriter) func() error {
	return func() error {
		h := w.Header()
		h["Content-Type"] = respond.JSONContentType
		h["Cache-Control"] = respond.NoStore
		w.WriteHeader(http.StatusOK)
		return nil
	}
}

// HTTPSender returns the send of a HeldAnswer writing to w.
func HTTPSender(w http.ResponseWriter) func(p []byte, final bool) error {
	return func(p []byte, _ bool) error {
		_, err := w.Write(p)
		return err
	}
}
