package auth_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"corkboard/auth"
	"corkboard/board"
	"corkboard/ratelimit"
)

// attackerNet is the i-th network of an attacker (one IPv4 address each).
func attackerNet(i int) string { return fmt.Sprintf("203.0.113.%d", i+1) }

const victimNet = "198.51.100.7"

// plentyOfSends keeps send-otp's limits out of the way, so that a test
// measures verify's budgets alone (an attacker asks for as many codes as
// it likes).
var plentyOfSends = auth.Config{
	EmailRate:    ratelimit.Rate{Count: 10000, Window: time.Minute},
	IPRate:       ratelimit.Rate{Count: 10000, Window: time.Minute},
	VerifyIPRate: ratelimit.Rate{Count: 10000, Window: time.Minute},
}

// TestVictimLogsInAfterWrongGuesses: wrong verify-otp calls for someone
// else's address, from other networks, never keep the owner from logging
// in with a fresh code.
func TestVictimLogsInAfterWrongGuesses(t *testing.T) {
	ctx := context.Background()
	const victim = "victim@example.com"
	tests := []struct {
		name   string
		cfg    auth.Config
		attack func(t *testing.T, e *codeEnv)
	}{
		// The case: ten wrong calls (no code needed) used to lock the
		// address for an hour.
		{"TenWrongCallsOneNetwork", auth.Config{}, func(t *testing.T, e *codeEnv) {
			for range 10 {
				_, _ = e.svc.Verify(ctx, victim, "123456", attackerNet(0))
			}
			if _, err := e.svc.Verify(ctx, victim, "123456", attackerNet(0)); board.ErrorCode(err) != board.ERATELIMIT {
				t.Fatalf("attacker's 11th call: err=%v, want ERATELIMIT (its own budget)", err)
			}
		}},
		{"ManyNetworksNoCode", auth.Config{}, func(t *testing.T, e *codeEnv) {
			for n := range 40 {
				for range 10 {
					_, _ = e.svc.Verify(ctx, victim, "123456", attackerNet(n))
				}
			}
		}},
		// The attacker asks for codes and guesses at every one until the
		// address's budget is spent and guarded, and on past it.
		{"BudgetSpent", plentyOfSends, func(t *testing.T, e *codeEnv) {
			for n := range 40 {
				code := e.send(t, victim, attackerNet(n))
				for range 10 {
					_, _ = e.svc.Verify(ctx, victim, wrong(code), attackerNet(n))
				}
			}
		}},
		// The owner's pending code is guessed at from elsewhere until void.
		{"OwnersCodeVoided", plentyOfSends, func(t *testing.T, e *codeEnv) {
			code := e.send(t, victim, victimNet)
			for n := range 30 {
				for range 5 {
					_, _ = e.svc.Verify(ctx, victim, wrong(code), attackerNet(n))
				}
			}
			_, err := e.svc.Verify(ctx, victim, code, victimNet)
			if board.ErrorCode(err) == board.ERATELIMIT {
				t.Fatalf("the owner's verify was refused by a limit: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newCodeEnv(t, tt.cfg)
			tt.attack(t, e)
			// The owner asks for a fresh code and enters it.
			code := e.send(t, victim, victimNet)
			login, err := e.svc.Verify(ctx, victim, code, victimNet)
			if err != nil {
				t.Fatalf("the owner's login after the attack: %v", err)
			}
			if login.Email != victim {
				t.Fatalf("logged in as %s", login.Email)
			}
		})
	}
}

// TestGuesserStaysBounded: an attacker with many networks, asking for a
// fresh code whenever it likes and guessing around the clock, gets at most
// GuessRate.Count wrong guesses at one address in a window, plus one per
// network once the address is guarded. A guess is an attempt the code was
// compared with: it answers EINVALID while a code is pending.
func TestGuesserStaysBounded(t *testing.T) {
	ctx := context.Background()
	const victim = "victim@example.com"
	const networks = 30
	e := newCodeEnv(t, plentyOfSends)
	budget := e.svc.Config().GuessRate
	guesses, refused := 0, 0
	for hour := range 24 {
		for n := range networks {
			code := e.send(t, victim, attackerNet(n))
			// Guess at this code until it is void or the attempt refused;
			// the code is pending throughout, so EINVALID is a guess.
			for try := 0; try < 5; try++ {
				_, err := e.svc.Verify(ctx, victim, otherDigit(code, try), attackerNet(n))
				if board.ErrorCode(err) == board.ERATELIMIT {
					refused++
					break
				}
				if board.ErrorCode(err) != board.EINVALID {
					t.Fatalf("hour %d network %d: err=%v", hour, n, err)
				}
				guesses++
			}
		}
		e.clock.Advance(time.Hour - time.Second) // within one day in all
	}
	t.Logf("%d guesses, %d refusals in a day from %d networks", guesses, refused, networks)
	if max := budget.Count + networks; guesses > max {
		t.Fatalf("%d guesses at one address in a day from %d networks, want at most %d", guesses, networks, max)
	}
	if guesses < budget.Count {
		t.Fatalf("only %d guesses: the budget (%d) was not even reached", guesses, budget.Count)
	}
	if refused == 0 {
		t.Fatal("no attempt was refused")
	}
	// The guarded address still serves its owner.
	if _, err := e.svc.Verify(ctx, victim, e.send(t, victim, victimNet), victimNet); err != nil {
		t.Fatalf("owner after the day of guessing: %v", err)
	}
}

// TestGuardedAddress: past the budget, a code is checked only from the
// network that asked for it, once; a login clears the count.
func TestGuardedAddress(t *testing.T) {
	ctx := context.Background()
	const victim = "victim@example.com"
	cfg := plentyOfSends
	cfg.GuessRate = ratelimit.Rate{Count: 3, Window: time.Hour}
	e := newCodeEnv(t, cfg)
	code := e.send(t, victim, attackerNet(0))
	for try := range 3 {
		if _, err := e.svc.Verify(ctx, victim, otherDigit(code, try), attackerNet(0)); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("guess %d: err=%v, want EINVALID", try+1, err)
		}
	}
	// Guarded now. Another network, even with the right code, is refused
	// without the code being looked at.
	_, err := e.svc.Verify(ctx, victim, code, attackerNet(1))
	var be *board.Error
	if board.ErrorCode(err) != board.ERATELIMIT {
		t.Fatalf("right code from another network: err=%v, want ERATELIMIT", err)
	}
	if be, _ = err.(*board.Error); be == nil || be.RetryAfter != 3600 {
		t.Fatalf("RetryAfter of %#v, want 3600", err)
	}
	// The asking network has guessed wrong already: refused too.
	if _, err := e.svc.Verify(ctx, victim, code, attackerNet(0)); board.ErrorCode(err) != board.ERATELIMIT {
		t.Fatalf("right code from a network that guessed wrong: err=%v, want ERATELIMIT", err)
	}
	// A fresh network asks for its own code: one try, and a wrong one voids it.
	code = e.send(t, victim, attackerNet(2))
	if _, err := e.svc.Verify(ctx, victim, wrong(code), attackerNet(2)); board.ErrorCode(err) != board.EINVALID {
		t.Fatalf("the asking network's one guess: err=%v, want EINVALID", err)
	}
	if _, err := e.svc.Verify(ctx, victim, code, attackerNet(2)); board.ErrorCode(err) != board.ERATELIMIT {
		t.Fatalf("its second try: err=%v, want ERATELIMIT", err)
	}
	// The owner asks from their network and logs in; that clears the count.
	if _, err := e.svc.Verify(ctx, victim, e.send(t, victim, victimNet), victimNet); err != nil {
		t.Fatalf("owner: %v", err)
	}
	code = e.send(t, victim, attackerNet(3))
	for try := range 3 {
		if _, err := e.svc.Verify(ctx, victim, otherDigit(code, try), attackerNet(3)); board.ErrorCode(err) != board.EINVALID {
			t.Fatalf("after the login, guess %d: err=%v, want EINVALID (a fresh budget)", try+1, err)
		}
	}
	// The window ends: the address is open again.
	e.clock.Advance(time.Hour)
	if _, err := e.svc.Verify(ctx, victim, e.send(t, victim, attackerNet(0)), attackerNet(0)); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

// TestGuessBudgetConcurrent: guesses racing at one address never overshoot
// its budget: exactly Count are compared, the rest refused.
func TestGuessBudgetConcurrent(t *testing.T) {
	ctx := context.Background()
	const victim = "victim@example.com"
	cfg := plentyOfSends
	cfg.GuessRate = ratelimit.Rate{Count: 10, Window: time.Hour}
	cfg.MaxCodeAttempts = 1000 // the code stays pending throughout
	e := newCodeEnv(t, cfg)
	code := e.send(t, victim, victimNet)
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = e.svc.Verify(ctx, victim, wrong(code), attackerNet(i)) })
	}
	wg.Wait()
	counts := map[string]int{}
	for _, err := range errs {
		counts[board.ErrorCode(err)]++
	}
	if counts[board.EINVALID] != 10 || counts[board.ERATELIMIT] != n-10 {
		t.Fatalf("outcomes %v, want 10 compared and %d refused", counts, n-10)
	}
	// The owner's network asked for the code: it is still checked there.
	if _, err := e.svc.Verify(ctx, victim, code, victimNet); err != nil {
		t.Fatalf("owner: %v", err)
	}
}
