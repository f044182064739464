package main

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestLoopSpinSetting: svc-loop-spin-us ([server] loop-spin-us, env
// SVC_SERVER_LOOP_SPIN_US) is read at start: CONFIG GET shows it and CONFIG
// SET refuses it; values outside 0..1000 or not integers stop start-up with
// the config error naming the key; with the spin off, at its default and at
// its largest, pipelined and unpipelined replies flow on many connections
// (the loop's spin finds the next requests or gives up and blocks).
func TestLoopSpinSetting(t *testing.T) {
	bin := buildBinary(t)

	t.Run("bad values are refused naming the key", func(t *testing.T) {
		for _, tc := range []struct{ env, toml, want string }{
			{"SVC_SERVER_LOOP_SPIN_US=-1", "", "[server] loop-spin-us: value -1 out of range; allowed 0..1000"},
			{"SVC_SERVER_LOOP_SPIN_US=1001", "", "[server] loop-spin-us: value 1001 out of range; allowed 0..1000"},
			{"SVC_SERVER_LOOP_SPIN_US=fast", "", "[server] loop-spin-us"},
			{"", "[server]\nloop-spin-us = 5000\n", ":2:16: [server] loop-spin-us: value 5000 out of range; allowed 0..1000"},
		} {
			args := []string{"--check-config"}
			if tc.toml != "" {
				args = append(args, "--config", writeFile(t, "svcdb.toml", tc.toml))
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), tc.env)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("%q %q: exit %d; want 2\n%s", tc.env, tc.toml, code, out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("%q %q: message %q lacks %q", tc.env, tc.toml, out, tc.want)
			}
		}
	})

	ctx := context.Background()
	for _, us := range []string{"0", "", "1000"} {
		name := us
		var env []string
		if us == "" {
			name, us = "default", "50"
		} else {
			env = []string{"SVC_SERVER_LOOP_SPIN_US=" + us}
		}
		t.Run(name, func(t *testing.T) {
			cmd, addr, _, _ := startProcessEnv(t, bin, env)
			c := client(t, addr)
			if got := c.ConfigGet(ctx, "svc-loop-spin-us").Val()["svc-loop-spin-us"]; got != us {
				t.Errorf("CONFIG GET svc-loop-spin-us = %q, want %q", got, us)
			}
			if err := c.ConfigSet(ctx, "svc-loop-spin-us", "10").Err(); err == nil {
				t.Error("CONFIG SET svc-loop-spin-us accepted; it is read at start")
			}
			// 20 connections, each alternating single commands and
			// pipelines of 50, so turns come back to back and with gaps.
			errs := make(chan error, 20)
			for g := 0; g < 20; g++ {
				go func(g int) {
					cl := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
					defer cl.Close()
					for i := 0; i < 100; i++ {
						k := "spin:" + strconv.Itoa(g) + ":" + strconv.Itoa(i)
						if err := cl.Set(ctx, k, i, 0).Err(); err != nil {
							errs <- err
							return
						}
						cmds, err := cl.Pipelined(ctx, func(p redis.Pipeliner) error {
							for j := 0; j < 50; j++ {
								p.Get(ctx, k)
							}
							return nil
						})
						if err != nil {
							errs <- err
							return
						}
						for _, r := range cmds {
							if v := r.(*redis.StringCmd).Val(); v != strconv.Itoa(i) {
								errs <- &mismatch{k, v}
								return
							}
						}
					}
					errs <- nil
				}(g)
			}
			for g := 0; g < 20; g++ {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			_ = cmd.Process.Signal(os.Interrupt)
			waitExit(t, cmd)
		})
	}
}

type mismatch struct{ key, got string }

func (m *mismatch) Error() string { return "GET " + m.key + " = " + strconv.Quote(m.got) }
