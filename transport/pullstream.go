package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"corkboard/persist"
	"corkboard/transport/livewire"
)

// Pulls and live catch-ups are streamed (docs/sync.md, "Large reads"): the
// store hands the answer over part by part (persist.ChangePart), the
// encoder below writes each part's JSON as it comes, and what is written
// leaves through a buffer of at most largeReadBuffer bytes. The bytes are
// exactly those json.Encoder gives for the whole board.Changes (and
// json.Marshal for a live changes message): the golden tests in
// pull_golden_test.go hold them.

// largeReadBuffer is how much of an answer is held before it is sent; an
// answer that outgrows it is a large read and takes a slot of the gate
// (largeread.go) before its first byte leaves.
const largeReadBuffer = 64 << 10

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

// changesEncoder writes a pull answer part by part. The caller writes what
// comes before "board" ("{" or a live message's first fields) and calls
// finish after the last part.
type changesEncoder struct {
	w      io.Writer
	header persist.ChangesHeader
	list   int  // the open list's index in changesLists, -1 before the first
	empty  bool // the open list has no element yet
}

func newChangesEncoder(w io.Writer) *changesEncoder { return &changesEncoder{w: w, list: -1} }

// part writes one part: the header's "board" field, or an element of a
// list (opening the list, and closing the lists before it).
func (e *changesEncoder) part(p *persist.ChangePart) error {
	var v any
	switch p.Kind {
	case persist.PartHeader:
		e.header = p.Header
		b, err := json.Marshal(p.Header.Board)
		if err != nil {
			return fmt.Errorf("encode board header: %w", err)
		}
		return e.write(append([]byte(`"board":`), b...))
	case persist.PartNote:
		v = p.Note
	case persist.PartItem:
		v = p.Item
	case persist.PartFrame:
		v = p.Frame
	case persist.PartConnector:
		v = p.Connector
	case persist.PartDeletedNote, persist.PartDeletedItem, persist.PartDeletedFrame, persist.PartDeletedConnector:
		v = p.ID
	default:
		return fmt.Errorf("pull part of unknown kind %d", p.Kind)
	}
	if err := e.openList(listOf(p.Kind)); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode pull row: %w", err)
	}
	if !e.empty {
		b = append([]byte{','}, b...)
	}
	e.empty = false
	return e.write(b)
}

// openList closes the open list and opens the next ones up to list; of
// the lists past the spec's, only list itself (they are left out empty).
func (e *changesEncoder) openList(list int) error {
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

// finish closes the lists (opening the empty ones) and writes the
// version, the reset flag and end, which comes after the closing brace
// ("\n" for an HTTP answer, as json.Encoder ends it).
func (e *changesEncoder) finish(end string) error {
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

func (e *changesEncoder) write(b []byte) error {
	_, err := e.w.Write(b)
	return err
}

// heldAnswer holds the first largeReadBuffer bytes of an answer back.
// While it holds everything written so far, nothing has left and the
// request can still be answered otherwise (an error, a refusal by the
// gate). When the buffer fills, admit decides whether the answer may go
// on (a large read takes a slot), and the answer goes on into a spool
// file (spool.go) rather than to the client, so that the store's read
// ends as soon as the store has given every row, however slowly the
// client reads. close, called once the read is over, runs start and sends
// the spooled bytes and the buffer's; send gets them in pieces of at most
// largeReadBuffer bytes, the last one with final set.
type heldAnswer struct {
	ctx      context.Context
	buf      []byte
	spool    spool
	admitted bool
	started  bool
	admit    func() error
	start    func() error
	send     func(p []byte, final bool) error
}

func (h *heldAnswer) Write(p []byte) (int, error) {
	h.buf = append(h.buf, p...)
	if len(h.buf) < largeReadBuffer {
		return len(p), nil
	}
	if !h.admitted {
		if err := h.admit(); err != nil {
			return 0, err
		}
		h.admitted = true
	}
	// A client that has gone stops the read here, as a failed send
	// used to.
	if err := h.ctx.Err(); err != nil {
		return 0, err
	}
	if _, err := h.spool.Write(h.buf); err != nil {
		return 0, err
	}
	h.buf = h.buf[:0]
	return len(p), nil
}

// close starts the answer and sends all of it: what was spooled, then
// what is held, as the last piece.
func (h *heldAnswer) close() error {
	if err := h.start(); err != nil {
		return err
	}
	h.started = true
	if h.spool.size > 0 {
		chunk := make([]byte, largeReadBuffer)
		if err := h.spool.replay(chunk, func(p []byte) error { return h.send(p, false) }); err != nil {
			return err
		}
	}
	return h.send(h.buf, true)
}

// discard removes the spool file, if the answer needed one.
func (h *heldAnswer) discard() { h.spool.remove() }

// jsonStarter returns the start of a streamed JSON answer on w: its
// headers, as writeJSON sends them, and status 200.
func jsonStarter(w http.ResponseWriter) func() error {
	return func() error {
		h := w.Header()
		h["Content-Type"] = jsonContentType
		h["Cache-Control"] = noStore
		w.WriteHeader(http.StatusOK)
		return nil
	}
}

// httpSender returns the send of a heldAnswer writing to w.
func httpSender(w http.ResponseWriter) func(p []byte, final bool) error {
	return func(p []byte, _ bool) error {
		_, err := w.Write(p)
		return err
	}
}

// catchUp streams a live connection's catch-up (liveConn.open): hello
// first, once the catch-up's version is known and its bytes are about to
// leave, then the changes message, fragmented when it is larger than
// largeReadBuffer. The payload is exactly what livewire.EncodeChanges gives.
type catchUp struct {
	lc      *liveConn
	hello   *livewire.Hello
	out     heldAnswer
	enc     *changesEncoder
	version int64
	sent    int // fragments sent
	rel     func()
}

// part returns the function PullTo feeds the catch-up since since to.
func (c *catchUp) part(since int64) func(p *persist.ChangePart) error {
	c.out = heldAnswer{
		ctx:   c.lc.ctx,
		spool: spool{dir: c.lc.s.cfg.SpoolDir},
		buf:   append(append(make([]byte, 0, 4<<10), `{"type":"changes","since":`...), strconv.FormatInt(since, 10)+","...),
		admit: func() error {
			rel, err := c.lc.s.largeReads.acquire(c.lc.ctx, c.lc.email)
			if err == nil {
				c.rel = rel
			}
			return err
		},
		start: func() error {
			c.hello.ServerVersion = max(c.hello.ServerVersion, c.version)
			return c.lc.out.writeNow(textFrame(mustJSON(c.hello)))
		},
		send: func(p []byte, final bool) error {
			f := dataFrame(c.sent == 0, final, p)
			c.sent++
			return c.lc.out.writeNow(f)
		},
	}
	c.enc = newChangesEncoder(&c.out)
	return func(p *persist.ChangePart) error {
		if p.Kind == persist.PartHeader {
			c.version = p.Header.ServerVersion
		}
		return c.enc.part(p)
	}
}

// finish ends the changes message and sends what is left of it.
func (c *catchUp) finish() error {
	if err := c.enc.finish(""); err != nil {
		return err
	}
	return c.out.close()
}

// release removes the catch-up's spool and gives back the gate's slot,
// if the catch-up took one.
func (c *catchUp) release() {
	c.out.discard()
	if c.rel != nil {
		c.rel()
	}
}
