package transport

import (
	"net/http"

	"corkboard/billing"
)

// AIRouteForTest mounts h the way an AI route is mounted: behind the session
// check and the quota gate of feature, charged to the caller, or to the
// board's owner when ownerPays (as notes/rewrite is).
func (s *Server) AIRouteForTest(feature billing.Feature, ownerPays bool, h http.Handler) http.Handler {
	return s.requireSession(s.aiRoutes.Gate(feature, ownerPays, h))
}
