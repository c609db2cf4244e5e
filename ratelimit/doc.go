// Package ratelimit owns every rate limit of the server: the algorithms,
// the bookkeeping of keys, the bound on memory and the wait a refusal
// answers (which callers round up into a Retry-After with
// board.RetryAfterSeconds, so the header always tells a wait that is true).
//
// Three needs, three types, all over one rate notation (Rate, "count/window",
// the form every limit flag takes):
//
//   - Window is an exact sliding window (a log of event times): at most
//     Count events in any Window. Login limits use it (send-otp and
//     verify-otp, per address, network or both). A token bucket would let
//     a full burst through again after a short idle and answer a
//     Retry-After that a second refusal may contradict; the log answers
//     exactly when the oldest counted event leaves the window. It costs a
//     timestamp per counted event, which Rate's Count bound (MaxRateCount)
//     and the key bound keep finite.
//   - Budget is a count in a fixed window that opens at the first counted
//     event, with Undo (a reservation given back) and Forget (a success
//     clears it). The wrong-guess budget of login uses it: it counts
//     consecutive failures, so a login must clear it, and a hundred
//     failures cost one counter, not a hundred timestamps. It is not a
//     lockout: callers decide what a spent budget means (auth guards the
//     address rather than refusing its owner; docs/auth.md).
//   - Bucket and Buckets are token buckets (GCRA: one "theoretical arrival
//     time" per bucket, exact integer arithmetic): Count tokens at once,
//     refilled evenly over Window. Throughput limits use them: live push
//     budgets (per connection: one Bucket each; per person: one Bucket in
//     the hub's entry for the person) and the AI per-minute limit (Buckets,
//     keyed by user, through billing.Meter). Bursts are what the clients
//     do (a paste of twenty notes, an AI panel's first calls), and the
//     long-run pace is what matters; credits are the hard AI limit.
//
// # Memory
//
// Window, Budget and Buckets keep at most maxKeys keys each; a new key at
// capacity evicts one, in constant time. Keys are kept in a list ordered by
// the time the algorithm last marked them (Window: the newest counted
// event; Budget: the start of its window; Buckets: the last token taken),
// and an entry whose mark is a window old is worth nothing: the log is
// empty, the fixed window has ended, the bucket is full. So the back entry
// is always the first to be worth nothing: eviction takes it (an empty
// entry whenever one exists, else the one idle longest), and Purge stops at
// the first entry from the back that still counts, costing what it removes
// plus one. A refused event does not move its key. A hostile client that
// makes up keys therefore grows nothing past maxKeys; what it can do is
// push out a key that still counts, which takes maxKeys other keys counted
// within that key's window (docs/auth.md works out the price for login).
//
// # Several nodes
//
// Every limiter here is in memory, per process. With N nodes behind a load
// balancer each node counts its own events, so a short-window limit is up
// to N times as generous as its number (a client whose requests are spread
// over every node gets Count on each), and a restart forgets the counts.
// Login limits whose exactness matters would have to be shared (a store
// both nodes write, or sticky routing by client network); monthly credits
// already are, in the store.
package ratelimit
