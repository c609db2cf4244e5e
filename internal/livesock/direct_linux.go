package livesock

import (
	"net"
	"syscall"
)

// directWriter returns the socket writer's non-blocking write on c's
// descriptor, or nil when c has none of its own (TLS, net.Pipe). Go keeps
// sockets in non-blocking mode on every unix, so write(2) takes what the
// socket buffer has room for and reports EAGAIN for the rest.
func directWriter(c net.Conn) func(p []byte) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func(p []byte) (n int) {
		// The callback returns true: never wait for the descriptor to be
		// writable; the writer goroutine does that. An error (closed
		// connection, expired deadline) leaves n short, and the writer
		// goroutine meets it again and ends the connection.
		_ = raw.Write(func(fd uintptr) bool {
			for n < len(p) {
				k, err := syscall.Write(int(fd), p[n:])
				if err != nil || k <= 0 {
					break // EAGAIN: the socket buffer is full
				}
				n += k
			}
			return true
		})
		return n
	}
}
