//go:build race

package netloop_test

// raceOn reports a -race build to the external tests (race_on_test.go is
// package netloop's).
const raceOn = true
