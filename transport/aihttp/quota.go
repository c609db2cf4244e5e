package aihttp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"corkboard/billing"
	"corkboard/board"
	"corkboard/transport/reqbody"
	"corkboard/transport/reqctx"
	"corkboard/transport/respond"
)

// payerFunc picks the user an AI call is charged to. It may read the request
// (restoring its body) and returns the request the handler should see,
// which may carry more context. Errors are domain errors, answered as they are.
type payerFunc func(r *http.Request) (payer string, next *http.Request, err error)

// aiGate is the one middleware in front of every AI route. Use it as
//
//	r.With(s.aiGate(aifeature.Chat, nil)).Post("/canvas/chat", s.handleChat)
//	r.With(s.aiGate(aifeature.NotesRewrite, s.boardOwnerPays)).Post("/canvas/notes/rewrite", s.handleNotesRewrite)
//
// inside the session group. payer nil charges the caller; s.boardOwnerPays
// charges the owner of the body's boardId (the spec's rule for
// notes/rewrite). In order it:
//
//  1. asks the Meter whether the caller may make an AI call now (the plan's
//     requests per minute; 429 with Retry-After; a call let through stays
//     counted, whatever follows);
//  2. resolves the payer (400/403/404 from the board guard);
//  3. has the Meter charge the feature's cost to the payer for the current
//     UTC month (billing.Meter.Admit decides; the gate renders its answer):
//     past the payer's monthly credits, 429 with exactly
//     {error, used, limit, plan} and Retry-After to the month's end;
//  4. runs the handler, and refunds the credits when the handler's answer is
//     an error (a status of 400 or more: the model was unreachable (503),
//     its answer stayed invalid (502), the request was invalid (400), a
//     panic) or it wrote nothing. Once a success status is written (a
//     stream has begun) the call stays charged, even if the stream later
//     fails or the client goes away.
//
// Charging before the handler runs is what keeps concurrent calls from
// overspending: the store checks and adds in one transaction. A feature the
// billing table does not charge panics here, when the routes are built.
func (s *Routes) aiGate(feature billing.Feature, payer payerFunc) func(http.Handler) http.Handler {
	// Routes are built at start-up: a feature the table does not charge
	// stops the server there instead of running free or at a guessed price.
	if _, err := billing.Cost(feature); err != nil {
		panic("aihttp: AI route for " + err.Error())
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			caller := reqctx.Email(ctx)
			if err := s.credits.AllowCall(ctx, caller); err != nil {
				s.writeError(w, r, err)
				return
			}

			payerEmail := caller
			if payer != nil {
				var err error
				if payerEmail, r, err = payer(r); err != nil {
					s.writeError(w, r, err)
					return
				}
				ctx = r.Context()
			}

			adm, err := s.credits.Admit(ctx, payerEmail, feature)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if !adm.Admitted() {
				writeQuotaRefusal(w, adm.Refused, payerEmail != caller)
				return
			}

			rec := &chargeRecorder{ResponseWriter: w}
			defer func() {
				if rec.charged() {
					return
				}
				// A detached context: the refund must happen even when the
				// client's disconnect is what ended the handler.
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
				defer cancel()
				if err := s.credits.Refund(rctx, adm.Charge); err != nil {
					s.log.ErrorContext(ctx, "AI credit refund failed", slog.String("payer", payerEmail), slog.String("feature", string(feature)), slog.Any("err", err))
					return
				}
				s.log.DebugContext(ctx, "AI credits refunded", slog.String("payer", payerEmail), slog.String("feature", string(feature)), slog.Int("status", rec.status))
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// CreditGate is what the AI gate asks of billing.Meter: the per-minute
// limit, then the decision on the payer's monthly credits, and the refund
// of a call that failed.
type CreditGate interface {
	AllowCall(ctx context.Context, email string) error
	Admit(ctx context.Context, payer string, feature billing.Feature) (billing.Admission, error)
	Refund(ctx context.Context, c billing.Charge) error
}

// writeQuotaRefusal answers a call the payer's monthly credits refused:
// 429 with exactly {error, used, limit, plan} and Retry-After to the
// month's end.
func writeQuotaRefusal(w http.ResponseWriter, qe *billing.QuotaError, ownerPays bool) {
	w.Header().Set("Retry-After", strconv.Itoa(board.RetryAfterSeconds(qe.RetryAfter)))
	respond.JSON(w, http.StatusTooManyRequests, quotaBody{Error: quotaMessage(ownerPays), Used: qe.Used, Limit: qe.Limit, Plan: qe.Plan})
}

// quotaBody is the spec's AI quota error body, and nothing else.
type quotaBody struct {
	Error string `json:"error"`
	Used  int    `json:"used"`
	Limit int    `json:"limit"`
	Plan  string `json:"plan"`
}

func quotaMessage(ownerPays bool) string {
	if ownerPays {
		return "The board owner's monthly AI credits are used up."
	}
	return "Your monthly AI credits are used up."
}

// chargeRecorder remembers the status an AI handler answered, to decide
// whether its credits are kept. It passes everything through, and unwraps
// for http.ResponseController (flushes and write deadlines of streams).
type chargeRecorder struct {
	http.ResponseWriter
	status int
}

func (c *chargeRecorder) WriteHeader(code int) {
	if c.status == 0 && code >= 200 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *chargeRecorder) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

// Flush lets streaming handlers that assert http.Flusher flush through.
func (c *chargeRecorder) Flush() {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (c *chargeRecorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// charged reports whether the call keeps its credits: a success status was
// written. Nothing written (a panic, an early return) counts as failure.
func (c *chargeRecorder) charged() bool { return c.status != 0 && c.status < 400 }

// limitPayerPeek bounds how much of a body boardOwnerPays reads to find the
// boardId: the largest valid rewrite request is far below it.
const limitPayerPeek = reqbody.LimitJSON

// boardOwnerPays is the payerFunc of AI calls charged to the board's owner
// (notes/rewrite). It reads the JSON body (at most limitPayerPeek bytes,
// else 413), takes its top-level "boardId", runs the board guard for the
// caller (400 for a missing or malformed id, 404 for an unclaimed board, 403
// without access) and returns the owner. The handler gets the body back
// untouched and the guard's result in its context (reqctx.Access), so it need
// not guard again; it must still decode the body with decodeBody, which
// refuses a second "boardId" key.
func (s *Routes) boardOwnerPays(r *http.Request) (string, *http.Request, error) {
	if r.ContentLength > limitPayerPeek {
		return "", r, reqbody.TooLarge(limitPayerPeek)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limitPayerPeek+1))
	// The body is restored first, so the handler sees it whatever happens.
	r.Body = readCloser{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
	if err != nil {
		return "", r, board.Errorf(board.EINVALID, "Could not read the request body.")
	}
	if len(data) > limitPayerPeek {
		return "", r, board.Errorf(board.ETOOLARGE, "Request body is larger than %d bytes.", limitPayerPeek)
	}
	boardID, err := peekBoardID(data)
	if err != nil {
		return "", r, err
	}
	a, err := s.guard.Guard(r.Context(), boardID, reqctx.Email(r.Context()))
	if err != nil {
		return "", r, err
	}
	// Before anything is charged or the owner's quota is checked: a
	// viewer neither spends nor learns of the owner's credits.
	if err := requireAIEdit(r.Context(), &a); err != nil {
		return "", r, err
	}
	return a.Board.OwnerEmail, r.WithContext(reqctx.WithAccess(r.Context(), a)), nil
}

// peekBoardID returns the string value of the top-level "boardId" key of a
// JSON object. Keys match exactly, as the handlers' decoders match them, and
// a second "boardId" is refused, so the board that pays is the board the
// handler works on.
func peekBoardID(data []byte) (string, error) {
	malformed := board.Errorf(board.EINVALID, "Request body must be a JSON object.")
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", malformed
	}
	id, found := "", false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", malformed
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", malformed
		}
		if key != "boardId" {
			continue
		}
		if found {
			return "", board.FieldErrorf("boardId", "Duplicate key \"boardId\".")
		}
		if err := json.Unmarshal(v, &id); err != nil {
			return "", board.FieldErrorf("boardId", "boardId must be a string.")
		}
		found = true
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return "", malformed
	}
	if _, err := dec.Token(); err != io.EOF {
		return "", malformed
	}
	if !found {
		return "", board.FieldErrorf("boardId", "boardId is required.")
	}
	return id, nil
}

// readCloser pairs a reader with the closer of the body it replaces.
type readCloser struct {
	io.Reader
	io.Closer
}
