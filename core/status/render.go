package status

import (
	"runtime/debug"
	"sync"

	json "github.com/goccy/go-json"
)

// Render encodes d as compact JSON. The output is a pure function of d (see
// the package doc), so two renderings of one Document are byte-identical.
// Encoding cannot fail for a Document (no maps, channels or funcs; floats
// are rounded finite values); should it ever, the result is still JSON: an
// {"error": ...} object naming the cause.
func Render(d *Document) []byte {
	b, err := json.Marshal(d)
	if err != nil {
		e, _ := json.Marshal(struct {
			Error string `json:"error"`
		}{"rendering the status document failed: " + err.Error()})
		return e
	}
	return b
}

// GitCommit is the VCS revision the binary was built from (vcs.revision in
// its build info), or "unknown" when the build recorded none (go test,
// -buildvcs=false, a build outside a checkout).
func GitCommit() string { return gitCommit() }

var gitCommit = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
})
