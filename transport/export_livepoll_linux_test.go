package transport

// LivePolledForTest is how many of s's live connections the process's
// poller holds an entry for (the poller is shared by every server in the
// process; only s's are counted).
func LivePolledForTest(s *Server) int {
	p := sharedPoller()
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, lc := range p.conns {
		if lc.s == s {
			n++
		}
	}
	return n
}
