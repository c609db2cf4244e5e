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
	g := guess{email: email, network: ipKey(ip), now: now}
	g.netKey = email + "\x00" + g.network
	if err := s.admitAttempt(g); err != nil {
		return nil, err
	}
	s.reserveGuess(&g)
	v, err := s.tryCode(ctx, g, code)
	s.settleGuess(g, v, err)
	if err != nil {
		return nil, err
	}
	if v.refused {
		return nil, rateLimited("Too many wrong codes for this address. Ask for a new code and enter it on the device that asked for it.", g.wait)
	}
	if !v.ok {
		return nil, errBadCode()
	}
	// The count is of consecutive failures: a login clears it.
	s.guesses.Forget(email)
	s.netGuesses.Forget(g.netKey)
	if _, err := s.db.EnsureUser(ctx, email, s.cfg.DefaultPlan); err != nil {
		return nil, fmt.Errorf("create user at login: %w", err)
	}
	return s.newSession(ctx, email, now)
}

// guess is one login attempt and its hold on the guess budgets (budget 3
// in Verify's list).
type guess struct {
	email, network string
	netKey         string // the address and the network together
	now            time.Time

	open    bool          // under the address's budget of wrong guesses
	guarded bool          // past it, and this network may still try once
	wait    time.Duration // until the address's budget opens again
}

// codeVerdict is what the pending code says of an attempt.
type codeVerdict struct {
	ok      bool // the code matched and is spent
	guessed bool // a wrong code was tried against a pending one
	refused bool // the attempt was not allowed to look at the code
}

// admitAttempt spends the attempt budgets of the network and of the
// address from that network (budgets 1 and 2 in Verify's list).
func (s *Service) admitAttempt(g guess) error {
	if wait, ok := s.verifyLimit.Allow(g.network, g.now); !ok {
		return rateLimited("Too many login attempts from your network. Try again later.", wait)
	}
	if wait, ok := s.verifyEmailLimit.Allow(g.netKey, g.now); !ok {
		return rateLimited("Too many login attempts for this address from your network. Try again later.", wait)
	}
	return nil
}

// reserveGuess takes the guess before the code is looked at, so that
// concurrent attempts cannot overshoot the budget; settleGuess gives it
// back when the attempt turns out not to be a guess.
func (s *Service) reserveGuess(g *guess) {
	g.wait, g.open = s.guesses.Take(g.email, g.now)
	if !g.open {
		_, g.guarded = s.netGuesses.Take(g.netKey, g.now)
	}
}

// tryCode compares code with the address's pending one, counting a wrong
// try and voiding the code when it is spent, expired or out of tries.
func (s *Service) tryCode(ctx context.Context, g guess, code string) (codeVerdict, error) {
	want := s.codeHash(g.email, code)
	var v codeVerdict
	err := s.db.UpdateOTP(ctx, g.email, func(o *persist.OTP) persist.OTPChange {
		v = codeVerdict{} // the callback may not assume it runs once
		switch {
		case o == nil:
			// Nothing to guess at. A guarded address still refuses, so
			// the answer does not tell whether a code is pending.
			v.refused = !g.open && !g.guarded
			return persist.OTPUnchanged
		case !g.now.Before(o.ExpiresAt), o.Attempts >= s.cfg.MaxCodeAttempts:
			v.refused = !g.open && !g.guarded
			return persist.OTPDelete
		case !g.open && (!g.guarded || o.Network != g.network):
			v.refused = true
			return persist.OTPUnchanged
		case hmac.Equal(o.Hash, want):
			v.ok = true
			return persist.OTPDelete // single use
		}
		v.guessed = true
		o.Attempts++
		if !g.open || o.Attempts >= s.cfg.MaxCodeAttempts {
			return persist.OTPDelete // void after the last allowed wrong try
		}
		return persist.OTPSave
	})
	return v, err
}

// settleGuess keeps or gives back what reserveGuess took, given how the
// attempt went.
func (s *Service) settleGuess(g guess, v codeVerdict, err error) {
	switch {
	case err != nil || v.ok || !v.guessed:
		// Not a wrong guess: give the reservations back.
		if g.open {
			s.guesses.Undo(g.email)
		} else if g.guarded {
			s.netGuesses.Undo(g.netKey)
		}
	case g.open:
		// A wrong guess under the budget marks the network too: past the
		// budget it may not try again in this window.
		s.netGuesses.Take(g.netKey, g.now)
	}
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
