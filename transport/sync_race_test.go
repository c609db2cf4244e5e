//go:build race

package transport_test

// raceEnabled is set when the race detector is on; tests that move tens of
// megabytes of strings skip then (the detector makes them take minutes).
const raceEnabled = true
