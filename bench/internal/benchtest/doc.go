// Package benchtest holds test helpers shared by the bench packages: finding
// the Redis tools (failing under CI=true, skipping otherwise), starting a
// throwaway redis-server on a free port, and sending one raw RESP command.
//
// It is imported only by _test.go files under bench/; it must never be
// imported by non-test code, and never by the server.
package benchtest
