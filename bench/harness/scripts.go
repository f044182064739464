package harness

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/svcdb/svcdb/bench/proc"
)

// ScriptCase is a Lua script benchmarked with EVALSHA (issue 16 part 7):
// loaded with SCRIPT LOAD on both servers before its runs, then sent by
// redis-benchmark as EVALSHA <sha1> Args... at each pipeline depth.
type ScriptCase struct {
	// Name labels the case in reports ("EVALSHA GET").
	Name string `json:"name"`
	// Body is the script; Args follow its SHA1 in EVALSHA (numkeys, keys,
	// arguments), with redis-benchmark's __rand_int__ for a random number
	// below -r.
	Body string   `json:"body"`
	Args []string `json:"args"`
}

// DefaultScripts are the EVALSHA cases of a comparison: a script doing one
// redis.call GET, and one doing INCR then EXPIRE (a rate limiter's core),
// each on random keys of the key space.
var DefaultScripts = []ScriptCase{
	{Name: "EVALSHA GET", Body: "return redis.call('GET', KEYS[1])", Args: []string{"1", "key:__rand_int__"}},
	{Name: "EVALSHA INCR+EXPIRE", Body: "local n = redis.call('INCR', KEYS[1])\nredis.call('EXPIRE', KEYS[1], 60)\nreturn n",
		Args: []string{"1", "counter:__rand_int__"}},
}

// scriptSHA is the hex SHA1 of body: its name in both servers' caches.
func scriptSHA(body string) string {
	sum := sha1.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

// runScript loads sc on both servers and runs it at each pipeline depth,
// sized and recorded as a single redis-benchmark test. Its cases are not
// held to MinRatio (the aim for scripts is 0.7x, below the
// commands' bar); the report shows their ratios.
func (r *runner) runScript(ctx context.Context, rep *Report, sc ScriptCase) error {
	sha := scriptSHA(sc.Body)
	for _, side := range []string{SideSvcDB, SideRedis} {
		if err := loadScript(ctx, r.servers[side].Addr, sc.Body, sha); err != nil {
			return fmt.Errorf("%s: SCRIPT LOAD on %s: %w", sc.Name, side, err)
		}
	}
	work := benchWork{command: append([]string{"EVALSHA", sha}, sc.Args...)}
	return r.runWork(ctx, rep, sc.Name, work, false, "  (script: "+strings.ReplaceAll(sc.Body, "\n", " ")+")")
}

// runWork runs work at each pipeline depth as the case "<name> -P <p>":
// calibrated, interleaved and recorded like a single redis-benchmark test.
// A failed calibration fails the case, and the comparison goes on. note
// ends the case's Detail.
func (r *runner) runWork(ctx context.Context, rep *Report, name string, work benchWork, gated bool, note string) error {
	for _, p := range r.cfg.Pipelines {
		c := &Case{Name: fmt.Sprintf("%s -P %d", name, p), Tool: "redis-benchmark", Gated: gated}
		rep.Cases = append(rep.Cases, c)
		n := r.cfg.RequestsFor(p)
		if r.cfg.TargetTime > 0 {
			var err error
			if n, err = r.calibrate(ctx, c.Name, work, p, SideSvcDB, SideRedis); err != nil {
				var be *benchError
				if !errors.As(err, &be) {
					return err
				}
				c.Failure = be.msg
				r.done += 2 * r.cfg.Rounds
				fmt.Fprintf(r.progress, "[fail]  %s (calibration): %s\n", c.Name, be.msg)
				continue
			}
		}
		c.Detail = "redis-benchmark " + strings.Join(work.args(0, r.cfg.Clients, n, r.cfg.KeySpace, p)[4:], " ") + note
		if err := r.rounds(ctx, c, func(ctx context.Context, s *proc.Server) (Sample, error) {
			return r.redisBenchmark(ctx, s, work, p, n)
		}); err != nil {
			return err
		}
	}
	return nil
}

// loadScript sends SCRIPT LOAD body to addr and checks the SHA1 it answers.
func loadScript(ctx context.Context, addr, body, sha string) error {
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.do("SCRIPT", "LOAD", body)
	if err != nil {
		return err
	}
	if got := string(v.Str); got != sha {
		return fmt.Errorf("SCRIPT LOAD answered %q, want %s", got, sha)
	}
	return nil
}
