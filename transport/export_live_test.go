package transport

import "time"

// SetLivePingsForTest shortens the live keeper's ping period, pong timeout
// and step; call it before the first live connection.
func SetLivePingsForTest(s *Server, every, timeout, tick time.Duration) {
	s.live.SetPings(every, timeout, tick)
}

// LivePingsSentForTest returns how many pings the live keeper has sent.
func LivePingsSentForTest(s *Server) int64 { return s.live.PingsSent() }
