package ratelimit

// Scanned returns how many entries w's eviction and purges have looked at,
// and sets the count back to zero.
func (w *Window) Scanned() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.keys.scanned
	w.keys.scanned = 0
	return n
}
