package rooms_test

import (
	"testing"
	"time"

	"corkboard/rooms"
)

// BenchmarkPointerRelay is one connection's pointer reaching another
// through the room's loop: the hottest request a room serves (up to 20 a
// second per connection), unthrottled here.
func BenchmarkPointerRelay(b *testing.B) {
	r := startRoom(b, &memStore{}, rooms.Options{PointerInterval: time.Nanosecond})
	a, _ := subscribeQueue(b, r, "A", "a@example.com", 16)
	other, _ := subscribeQueue(b, r, "B", "b@example.com", 16)
	for b.Loop() {
		if err := a.Pointer(1, 2); err != nil {
			b.Fatal(err)
		}
		<-messages(other)
	}
}
