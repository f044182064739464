package harness

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// CommandCase is one command benchmarked on its own (issue 18: bitmaps,
// HyperLogLog, geo): Setup is sent once to both servers before its runs,
// then redis-benchmark sends Command at each pipeline depth, with
// __rand_int__ replaced by a random number below -r. Unlike the scripts,
// command cases are held to MinRatio like redis-benchmark's own tests.
type CommandCase struct {
	// Name labels the case in reports ("SETBIT"); the case at depth p is
	// "<Name> -P <p>".
	Name string `json:"name"`
	// Setup are commands each server must answer without an error before
	// the case's runs (filling the key the case reads).
	Setup [][]string `json:"setup,omitempty"`
	// Command is what redis-benchmark sends.
	Command []string `json:"command"`
}

// GeoKey is the geo set GEOSEARCH's case reads; geoMembers is how many
// places GeoSetup puts in it.
const (
	GeoKey     = "geo:bench"
	geoMembers = 1000
)

// hllKey is the HyperLogLog PFCOUNT's case reads; hllElements is how many
// distinct elements HLLSetup adds to it (past the sparse representation's
// limit, so it is dense on both servers).
const (
	hllKey      = "hll:filled"
	hllElements = 20_000
)

// DefaultCommands are the bitmap, HyperLogLog and geo cases of a
// comparison, in the order they run: SETBIT makes the bm:* keys that
// BITCOUNT then counts (a key not made yet counts 0 bits, cheaply, so
// BITCOUNT must come after SETBIT); PFADD adds random elements to random
// sparse HLLs; PFCOUNT counts one dense HLL of 20,000 elements; GEOSEARCH
// finds the 10 nearest of the places within 200 km of Palermo in a set of
// 1,000 spread over southern Italy (about 150 are within the radius, so
// the search sorts them and returns 10).
var DefaultCommands = []CommandCase{
	{Name: "SETBIT", Command: []string{"SETBIT", "bm:__rand_int__", "1000", "1"}},
	{Name: "BITCOUNT", Command: []string{"BITCOUNT", "bm:__rand_int__"}},
	{Name: "PFADD", Command: []string{"PFADD", "hll:__rand_int__", "e:__rand_int__"}},
	{Name: "PFCOUNT", Setup: HLLSetup(), Command: []string{"PFCOUNT", hllKey}},
	{Name: "GEOSEARCH", Setup: [][]string{{"DEL", GeoKey}, GeoSetup()},
		Command: []string{"GEOSEARCH", GeoKey, "FROMLONLAT", "13.36", "38.11", "BYRADIUS", "200", "km", "ASC", "COUNT", "10"}},
}

// HLLSetup are the commands filling hllKey: DEL, then PFADD of
// hllElements distinct elements in batches of 1,000.
func HLLSetup() [][]string {
	cmds := [][]string{{"DEL", hllKey}}
	for i := 0; i < hllElements; i += 1000 {
		cmd := []string{"PFADD", hllKey}
		for j := i; j < min(i+1000, hllElements); j++ {
			cmd = append(cmd, "e:"+strconv.Itoa(j))
		}
		cmds = append(cmds, cmd)
	}
	return cmds
}

// GeoSetup is the GEOADD of geoMembers places over longitudes 8..19 and
// latitudes 34..42, spread evenly by the additive recurrence of the plastic
// number (the same places on every run and both servers).
func GeoSetup() []string {
	const a1, a2 = 0.7548776662466927, 0.5698402909980532
	cmd := []string{"GEOADD", GeoKey}
	for i := 1; i <= geoMembers; i++ {
		x := frac(0.5 + a1*float64(i))
		y := frac(0.5 + a2*float64(i))
		cmd = append(cmd,
			strconv.FormatFloat(8+11*x, 'f', 6, 64),
			strconv.FormatFloat(34+8*y, 'f', 6, 64),
			"place:"+strconv.Itoa(i))
	}
	return cmd
}

func frac(v float64) float64 { return v - float64(int64(v)) }

// runCommand sends cc's setup to both servers and runs cc at each pipeline
// depth, gated like a single redis-benchmark test.
func (r *runner) runCommand(ctx context.Context, rep *Report, cc CommandCase) error {
	for _, side := range []string{SideSvcDB, SideRedis} {
		if err := sendSetup(ctx, r.servers[side].Addr, cc.Setup); err != nil {
			return fmt.Errorf("%s: setup on %s: %w", cc.Name, side, err)
		}
	}
	return r.runWork(ctx, rep, cc.Name, benchWork{command: cc.Command}, true, setupNote(cc.Setup))
}

// setupNote sums cc's setup up for a case's Detail: each command's name
// and key, and how many arguments follow ("  (setup: DEL geo:bench;
// GEOADD geo:bench +3000 args)").
func setupNote(setup [][]string) string {
	if len(setup) == 0 {
		return ""
	}
	parts := make([]string, len(setup))
	for i, cmd := range setup {
		parts[i] = strings.Join(cmd[:min(len(cmd), 2)], " ")
		if len(cmd) > 3 {
			parts[i] += fmt.Sprintf(" +%d args", len(cmd)-2)
		} else if len(cmd) == 3 {
			parts[i] += " " + cmd[2]
		}
	}
	return "  (setup: " + strings.Join(parts, "; ") + ")"
}

// sendSetup sends cmds to addr one after the other; an error reply ends it.
func sendSetup(ctx context.Context, addr string, cmds [][]string) error {
	if len(cmds) == 0 {
		return nil
	}
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, cmd := range cmds {
		if _, err := c.do(cmd...); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(cmd[:min(len(cmd), 3)], " "), err)
		}
	}
	return nil
}
