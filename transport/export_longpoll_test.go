package transport

// OnWaitHeldForTest makes f run each time a long poll is held in its room
// (after the room took it: a push the room receives later answers it).
// Call it before any request is sent.
func (s *Server) OnWaitHeldForTest(f func()) { s.polls.held = f }
