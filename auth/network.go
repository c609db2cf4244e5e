package auth

import "net"

// ipKey is the per-IP limit's key for a client address. An IPv6 client
// usually controls a whole /64, so IPv6 addresses count per /64 network.
func ipKey(addr string) string {
	ip := net.ParseIP(addr)
	if ip == nil {
		return addr
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
