package netloop

import (
	"context"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

// DEBUG BUNDLE GENERATE [DURATION s] and DEBUG BUNDLE LIST: diagnostic
// bundles over RESP, the same as /debug/api/bundle/generate and /list. The
// bundles themselves are diaghttp's (diaghttp.Bundles), which imports this
// package: cmd/svcdb hands them in through SetBundles, as a BundleMaker.

// BundleInfo describes one stored diagnostic bundle.
type BundleInfo struct {
	ID        string    // <UTC yyyymmddThhmmssZ>-<8 hex>
	Path      string    // the ZIP file on the server's host
	CreatedAt time.Time // when its generation started (the id's time)
	SizeBytes int64
	// Duration is the CPU profile's and the rates' window; 0: none.
	Duration time.Duration
	Files    []string // the files in the ZIP, in order
}

// BundleMaker generates and lists diagnostic bundles; both are safe from
// any goroutine. Generate may take Duration plus a second or two, so it never
// runs on an event loop (runAsync); while one generation runs, another gets
// an error saying when to retry. List is newest first.
type BundleMaker interface {
	Generate(ctx context.Context, duration time.Duration) (BundleInfo, error)
	List() []BundleInfo
}

// bundleMakerBox lets an interface value live in an atomic.Pointer.
type bundleMakerBox struct{ m BundleMaker }

// SetBundles gives DEBUG BUNDLE its bundle service; until it is called (or
// with nil) DEBUG BUNDLE answers that there is none. Safe at any time.
func (s *Server) SetBundles(m BundleMaker) {
	if m == nil {
		s.bundles.Store(nil)
		return
	}
	s.bundles.Store(&bundleMakerBox{m})
}

const (
	errBundleNone     = "ERR no diagnostic bundle service in this process"
	errBundleDuration = "ERR DURATION must be a non-negative integer number of seconds"
	errBundleUsage    = "ERR syntax error: use DEBUG BUNDLE GENERATE [DURATION <seconds>] or DEBUG BUNDLE LIST"
)

// cmdDebugBundle is DEBUG BUNDLE ...; args[0:2] are DEBUG BUNDLE.
func (s *Server) cmdDebugBundle(c *client, args [][]byte) {
	box := s.bundles.Load()
	opts := args[2:]
	switch {
	case len(opts) >= 1 && resp.EqualFold(opts[0], "generate"):
		var secs int64
		switch {
		case len(opts) == 1:
		case len(opts) == 3 && resp.EqualFold(opts[1], "duration"):
			n, ok := resp.ParseInt(opts[2])
			if !ok || n < 0 {
				c.out = resp.AppendError(c.out, errBundleDuration)
				return
			}
			secs = n // the range is the bundle service's to check
		default:
			c.out = resp.AppendError(c.out, errBundleUsage)
			return
		}
		if box == nil {
			c.out = resp.AppendError(c.out, errBundleNone)
			return
		}
		r3 := c.ctx.RESP3
		// A bundle takes its duration plus about a second: off the loop,
		// which keeps serving its other clients meanwhile. Nothing borrowed
		// from the read buffer is used by work.
		s.runAsync(c, func() []byte {
			info, err := box.m.Generate(context.Background(), time.Duration(secs)*time.Second)
			if err != nil {
				return resp.AppendError(nil, "ERR "+err.Error())
			}
			return appendBundleInfo(nil, info, r3)
		})
	case len(opts) == 1 && resp.EqualFold(opts[0], "list"):
		if box == nil {
			c.out = resp.AppendError(c.out, errBundleNone)
			return
		}
		list := box.m.List()
		c.out = resp.AppendArrayHeader(c.out, len(list))
		for _, b := range list {
			c.out = appendBundleInfo(c.out, b, c.ctx.RESP3)
		}
	default:
		c.out = resp.AppendError(c.out, errBundleUsage)
	}
}

// appendBundleInfo writes one bundle: a map in RESP3, a flat name/value
// array in RESP2, as DEBUG HOTSHARDS.
func appendBundleInfo(dst []byte, b BundleInfo, r3 bool) []byte {
	key := resp.AppendBulkString
	dst = resp.AppendMapHeader(dst, 6, r3)
	dst = key(dst, "id")
	dst = key(dst, b.ID)
	dst = key(dst, "created_at")
	dst = resp.AppendInt(dst, b.CreatedAt.Unix())
	dst = key(dst, "path")
	dst = key(dst, b.Path)
	dst = key(dst, "size_bytes")
	dst = resp.AppendInt(dst, b.SizeBytes)
	dst = key(dst, "duration_secs")
	dst = resp.AppendInt(dst, int64(b.Duration/time.Second))
	dst = key(dst, "files")
	dst = resp.AppendArrayHeader(dst, len(b.Files))
	for _, f := range b.Files {
		dst = key(dst, f)
	}
	return dst
}
