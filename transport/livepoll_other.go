//go:build !linux

package transport

// livePoller is Linux's (livepoll_linux.go); elsewhere every live
// connection keeps a reader goroutine.
type livePoller struct{}

func sharedPoller() *livePoller { return nil }

func (p *livePoller) register(*liveConn) {}

func (p *livePoller) forget(*liveConn) {}

func (p *livePoller) arm(*liveConn) bool { return false }

func (lc *liveConn) readNB([]byte) (int, error) { return 0, errWouldBlock }
