//go:build !race

package clientmem

const raceEnabled = false
