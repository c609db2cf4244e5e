package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"corkboard/board"
)

func TestRetryable(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name       string
		ctx        context.Context
		err        error
		committing bool
		want       bool
	}{
		{"serialization failure", live, &pgconn.PgError{Code: "40001"}, false, true},
		{"deadlock", live, fmt.Errorf("bump version: %w", &pgconn.PgError{Code: "40P01"}), false, true},
		{"serialization failure at commit", live, &pgconn.PgError{Code: "40001"}, true, true},
		{"unique violation", live, &pgconn.PgError{Code: "23505"}, false, false},
		{"lock timeout", live, &pgconn.PgError{Code: "55P03"}, false, false},
		{"connection lost before commit", live, fmt.Errorf("read: %w", io.ErrUnexpectedEOF), false, true},
		{"connection lost during commit", live, fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, false},
		{"session terminated before commit", live, &pgconn.PgError{Code: "57P01"}, false, true},
		{"session terminated during commit", live, &pgconn.PgError{Code: "57P01"}, true, false},
		{"board error", live, board.Errorf(board.ENOTFOUND, "Board not found."), false, false},
		{"caller gave up", done, &pgconn.PgError{Code: "40001"}, false, false},
		{"deadline", live, context.DeadlineExceeded, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryable(tt.ctx, tt.err, tt.committing); got != tt.want {
				t.Fatalf("retryable(%v, committing=%v) = %v, want %v", tt.err, tt.committing, got, tt.want)
			}
		})
	}
	if !errors.Is(wrap(fmt.Errorf("x: %w", context.Canceled), "op"), context.Canceled) {
		t.Fatal("wrap lost the caller's cancellation")
	}
}
