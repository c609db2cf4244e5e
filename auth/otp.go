package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"math/big"
	"time"

	"corkboard/auth/mailaddr"
	"corkboard/board"
	"corkboard/persist"
)

// CodeLength is the number of digits in a one-time code (the spec's contract).
const CodeLength = 6

// errBadCode is the one answer for every code that cannot log in: wrong,
// void, expired, sent to another address or not six digits. One message
// tells an attacker nothing about which.
func errBadCode() error {
	return board.FieldErrorf("code", "The code is invalid or has expired. Ask for a new one.")
}

// SendCode issues a new one-time code for email (replacing any pending one)
// and queues the mail that carries it. It answers the same for every
// well-formed address, known or not, and never waits for the mail. Errors:
// EINVALID for a malformed address, ERATELIMIT (with RetryAfter) past the
// per-IP or per-address limit.
//
// The per-IP limit is checked (and counted) first: a request it refuses
// spends nothing of the address's budget, while one the per-address limit
// refuses has spent one of the IP's — the client did ask, and a client that
// keeps asking for a locked address should run out like any other.
func (s *Service) SendCode(ctx context.Context, email, ip string) error {
	email, err := mailaddr.Canonical("email", email)
	if err != nil {
		return err
	}
	now := s.now()
	if wait, ok := s.ipLimit.Allow(ipKey(ip), now); !ok {
		return rateLimited("Too many login codes requested from your network. Try again later.", wait)
	}
	if wait, ok := s.emailLimit.Allow(email, now); !ok {
		return rateLimited("Too many login codes requested for this address. Try again later.", wait)
	}
	code, err := newCode()
	if err != nil {
		return err
	}
	o := persist.OTP{Hash: s.codeHash(email, code), ExpiresAt: now.Add(s.cfg.CodeTTL), Network: ipKey(ip)}
	if err := s.db.PutOTP(ctx, email, o); err != nil {
		return err
	}
	s.enqueue(ctx, outgoing{
		to:      email,
		subject: "Your Corkboard login code: " + code,
		body: fmt.Sprintf("Your Corkboard login code is %s\r\n\r\n"+
			"It works once, for %s, within %s. If you did not ask for it, ignore this message.\r\n",
			code, email, durationForPeople(s.cfg.CodeTTL)),
	})
	return nil
}

// Login is a session just created by a correct code.
type Login struct {
	// Email is the (normalised) address that logged in.
	Email string
	// Token is the session cookie's value. It exists only here and in the
	// client: storage keeps its SHA-256.
	Token string
	// MaxAge is the session's absolute lifetime, the cookie's Max-Age.
	MaxAge time.Duration
}

// Verify checks code against the one pending for email. On success it
// deletes the code, creates the user on first login and opens a new session.
// Errors: EINVALID for a malformed address or for any code that cannot log
// in (one message for all), ERATELIMIT (with RetryAfter) past the per-IP
// or the per-address-and-network verify limit, or when the address is
// guarded and this attempt may not guess (see Config.GuessRate).
//
// The budgets, in order (docs/auth.md):
//  1. per client network, every well-formed attempt (VerifyIPRate);
//  2. per address and network, every well-formed attempt (VerifyEmailRate):
//     an attacker's network cannot spend the owner's;
//  3. per address, wrong guesses from everywhere (GuessRate), cleared by a
//     login. Past it the address is guarded: only the network that asked
//     for the pending code may try it, once per window, and a wrong try
//     voids the code;
//  4. per code, MaxCodeAttempts wrong tries void it.
//
// A refused attempt does not look at the code: it is not a guess.
func (s *Service) Verify(ctx context.Context, email, code, ip string) (*Login, error) {
	email, err := mailaddr.Canonical("email", email)
	if err != nil {
		return nil, err
	}
	if !validCode(code) {
		return nil, errBadCode()
	}
	now := s.now()
	network := ipKey(ip)
	if wait, ok := s.verifyLimit.Allow(network, now); !ok {
		return nil, rateLimited("Too many login attempts from your network. Try again later.", wait)
	}
	netKey := email + "\x00" + network
	if wait, ok := s.verifyEmailLimit.Allow(netKey, now); !ok {
		return nil, rateLimited("Too many login attempts for this address from your network. Try again later.", wait)
	}
	// Reserve the guess before looking at the code, so that concurrent
	// attempts cannot overshoot the budget; given back below when the
	// attempt turns out not to be a guess.
	guardWait, open := s.guesses.Take(email, now)
	guarded := false // past the budget, and this network may still try once
	if !open {
		_, guarded = s.netGuesses.Take(netKey, now)
	}
	want := s.codeHash(email, code)
	var ok, guessed, refused bool
	err = s.db.UpdateOTP(ctx, email, func(o *persist.OTP) persist.OTPChange {
		ok, guessed, refused = false, false, false // the callback may not assume it runs once
		switch {
		case o == nil:
			// Nothing to guess at. A guarded address still refuses, so
			// the answer does not tell whether a code is pending.
			refused = !open && !guarded
			return persist.OTPUnchanged
		case !now.Before(o.ExpiresAt), o.Attempts >= s.cfg.MaxCodeAttempts:
			refused = !open && !guarded
			return persist.OTPDelete
		case !open && (!guarded || o.Network != network):
			refused = true
			return persist.OTPUnchanged
		case hmac.Equal(o.Hash, want):
			ok = true
			return persist.OTPDelete // single use
		}
		guessed = true
		o.Attempts++
		if !open || o.Attempts >= s.cfg.MaxCodeAttempts {
			return persist.OTPDelete // void after the last allowed wrong try
		}
		return persist.OTPSave
	})
	switch {
	case err != nil || ok || !guessed:
		// Not a wrong guess: give the reservations back.
		if open {
			s.guesses.Undo(email)
		} else if guarded {
			s.netGuesses.Undo(netKey)
		}
	case open:
		// A wrong guess under the budget marks the network too: past the
		// budget it may not try again in this window.
		s.netGuesses.Take(netKey, now)
	}
	if err != nil {
		return nil, err
	}
	if refused {
		return nil, rateLimited("Too many wrong codes for this address. Ask for a new code and enter it on the device that asked for it.", guardWait)
	}
	if !ok {
		return nil, errBadCode()
	}
	// The count is of consecutive failures: a login clears it.
	s.guesses.Forget(email)
	s.netGuesses.Forget(netKey)
	if _, err := s.db.EnsureUser(ctx, email, s.cfg.DefaultPlan); err != nil {
		return nil, fmt.Errorf("create user at login: %w", err)
	}
	return s.newSession(ctx, email, now)
}

// newCode draws a uniform code: rand.Int rejects out-of-range draws instead
// of reducing modulo 10^6, so no code is likelier than another.
func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("generate code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// validCode reports whether code is exactly six ASCII digits.
func validCode(code string) bool {
	if len(code) != CodeLength {
		return false
	}
	for i := 0; i < len(code); i++ {
		if code[i] < '0' || code[i] > '9' {
			return false
		}
	}
	return true
}

// codeHash is HMAC-SHA256(server secret, email 0x00 code). A plain hash of a
// six-digit code is reversed by trying all million; the key makes the stored
// value useless without the secret. The address in the MAC binds the code to
// it (the zero byte keeps address and code apart).
func (s *Service) codeHash(email, code string) []byte {
	mac := hmac.New(sha256.New, s.db.Secret())
	mac.Write([]byte(email))
	mac.Write([]byte{0})
	mac.Write([]byte(code))
	return mac.Sum(nil)
}

// rateLimited is the ERATELIMIT error with Retry-After in whole seconds.
func rateLimited(msg string, wait time.Duration) error {
	e := board.Errorf(board.ERATELIMIT, "%s", msg)
	e.RetryAfter = board.RetryAfterSeconds(wait)
	return e
}
