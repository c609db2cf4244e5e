//go:build !unix

package transport

import "net"

// directWriter returns nil: without a portable non-blocking write on a
// socket (Windows, wasm), every live message takes the queued path, written
// by the connection's writer goroutine with a deadline.
func directWriter(net.Conn) func(p []byte) int { return nil }
