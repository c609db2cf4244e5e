package storetest

import (
	"context"
	"errors"
	"testing"
	"time"
)

// runPing: an open store answers Ping; a done context fails it with the
// context's error (a readiness check with a deadline never hangs on a
// store that does not answer).
func runPing(t *testing.T, open Opener) {
	db := open(t, NewClock(T0).Now)
	t.Run("OK", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			t.Fatalf("Ping on an open store: %v", err)
		}
	})
	t.Run("ErrCancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := db.Ping(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Ping with a cancelled context = %v, want context.Canceled", err)
		}
	})
}
