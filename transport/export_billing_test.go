package transport

import (
	"net/http"

	"corkboard/billing"
)

// AIRouteForTest mounts h the way an AI route is mounted: behind the session
// check and the quota gate of feature, charged to the caller, or to the
// board's owner when ownerPays (as notes/rewrite is).
func (s *Server) AIRouteForTest(feature billing.Feature, ownerPays bool, h http.Handler) http.Handler {
	var payer payerFunc
	if ownerPays {
		payer = s.boardOwnerPays
	}
	if ownerPays {
		// notes/rewrite makes an edit: a viewer is refused (aiMakesEdits).
		return s.requireSession(aiMakesEdits(s.aiGate(feature, payer)(h)))
	}
	return s.requireSession(s.aiGate(feature, payer)(h))
}
