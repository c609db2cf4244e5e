package live

import (
	"corkboard/transport/livewire"
	"strconv"

	"corkboard/persist"
	"corkboard/transport/pullstream"
)

// catchUp streams a live connection's catch-up (liveConn.open): hello
// first, once the catch-up's version is known and its bytes are about to
// leave, then the changes message, fragmented when it is larger than
// pullstream.LargeReadBuffer. The payload is exactly what livewire.EncodeChanges gives.
type catchUp struct {
	lc      *liveConn
	hello   *livewire.Hello
	out     pullstream.HeldAnswer
	enc     *pullstream.ChangesEncoder
	version int64
	sent    int // fragments sent
	rel     func()
}

// part returns the function PullTo feeds the catch-up since since to.
func (c *catchUp) part(since int64) func(p *persist.ChangePart) error {
	c.out = pullstream.HeldAnswer{
		Ctx:      c.lc.ctx,
		SpoolDir: c.lc.ch.opts.SpoolDir,
		Buf:      append(append(make([]byte, 0, 4<<10), `{"type":"changes","since":`...), strconv.FormatInt(since, 10)+","...),
		Admit: func() error {
			rel, err := c.lc.ch.largeReads.Acquire(c.lc.ctx, c.lc.email)
			if err == nil {
				c.rel = rel
			}
			return err
		},
		Start: func() error {
			c.hello.ServerVersion = max(c.hello.ServerVersion, c.version)
			return c.lc.out.writeNow(textFrame(mustJSON(c.hello)))
		},
		Send: func(p []byte, final bool) error {
			f := dataFrame(c.sent == 0, final, p)
			c.sent++
			return c.lc.out.writeNow(f)
		},
	}
	c.enc = pullstream.NewChangesEncoder(&c.out)
	return func(p *persist.ChangePart) error {
		if p.Kind == persist.PartHeader {
			c.version = p.Header.ServerVersion
		}
		return c.enc.Part(p)
	}
}

// finish ends the changes message and sends what is left of it.
func (c *catchUp) finish() error {
	if err := c.enc.Finish(""); err != nil {
		return err
	}
	return c.out.Close()
}

// release removes the catch-up's spool and gives back the gate's slot,
// if the catch-up took one.
func (c *catchUp) release() {
	c.out.Discard()
	if c.rel != nil {
		c.rel()
	}
}
