package ai

import "time"

// SetTrackerDeadline shortens the tracker deadline of s for a test.
func SetTrackerDeadline(s *Service, d time.Duration) { s.trackerDeadline = d }
