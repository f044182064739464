package acl

import (
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/glob"
)

// model is an obviously-correct ACL user with one selector: a set of
// allowed command names, a key pattern list and a channel pattern list,
// built by applying the rules literally, with none of the bitmaps,
// snapshots or caches of the real code.
type model struct {
	allowed     map[string]bool
	allKeys     bool
	keys        []keyPattern
	allChannels bool
	channels    []string
}

func (m *model) setCmd(c *command.Command, on bool) {
	m.allowed[c.FullName] = on
	for _, s := range c.Subcommands {
		m.allowed[s.FullName] = on
	}
}

func (m *model) everyCommand(f func(c *command.Command)) {
	for _, c := range table.All() {
		f(c)
		for _, s := range c.Subcommands {
			f(s)
		}
	}
}

// apply reports false where Redis refuses the rule.
func (m *model) apply(rule string) bool {
	switch {
	case rule == "+@all":
		m.everyCommand(func(c *command.Command) { m.allowed[c.FullName] = true })
	case rule == "-@all":
		m.allowed = map[string]bool{}
	case strings.HasPrefix(rule, "+@") || strings.HasPrefix(rule, "-@"):
		m.everyCommand(func(c *command.Command) {
			if slices.Contains(c.ACLCategories, rule[1:]) {
				m.setCmd(c, rule[0] == '+')
			}
		})
	case rule[0] == '+' || rule[0] == '-':
		m.setCmd(table.LookupFullName([]byte(rule[1:])), rule[0] == '+')
	case rule == "allkeys":
		m.allKeys, m.keys = true, nil
	case rule == "resetkeys":
		m.allKeys, m.keys = false, nil
	case rule[0] == '~' || rule[0] == '%':
		if m.allKeys {
			return false
		}
		fl, pat := permAll, rule[1:]
		if rule[0] == '%' {
			i := strings.IndexByte(rule, '~')
			fl = 0
			if strings.Contains(rule[:i], "R") {
				fl |= permRead
			}
			if strings.Contains(rule[:i], "W") {
				fl |= permWrite
			}
			pat = rule[i+1:]
		}
		for i := range m.keys {
			if m.keys[i].pattern == pat {
				m.keys[i].flags |= fl
				return true
			}
		}
		m.keys = append(m.keys, keyPattern{flags: fl, pattern: pat})
	case rule == "allchannels":
		m.allChannels, m.channels = true, nil
	case rule == "resetchannels":
		m.allChannels, m.channels = false, nil
	case rule[0] == '&':
		if m.allChannels {
			return false
		}
		if !slices.Contains(m.channels, rule[1:]) {
			m.channels = append(m.channels, rule[1:])
		}
	}
	return true
}

// access is what each test command does to its arguments, written out by
// hand from the Redis documentation: "R" reads a key, "W" writes it, "RW"
// both, "-" names a key without reading or writing its value, "C" is a
// channel, "P" a channel pattern, "" is not checked.
var access = map[string][]string{
	"get":        {"R"},
	"mget":       {"R", "R", "R"},
	"del":        {"W", "W"},
	"incr":       {"RW"},
	"lpush":      {"W", ""},
	"lrange":     {"R", "", ""},
	"exists":     {"-", "-"},
	"copy":       {"R", "W"},
	"rename":     {"RW", "W"},
	"set":        {"W", ""},
	"publish":    {"C", ""},
	"subscribe":  {"C", "C"},
	"psubscribe": {"P", "P"},
	"ping":       {},
	"config|get": {"", ""},
	"flushall":   {},
}

func (m *model) check(full string, argv []string) (Reason, int) {
	c := table.LookupFullName([]byte(full))
	if c.Flags&command.FlagNoAuth == 0 && !m.allowed[full] {
		return DeniedCommand, 0
	}
	first := 1
	if strings.Contains(full, "|") {
		first = 2
	}
	acc := access[full]
	for i, a := range acc { // keys first, then channels, as Redis
		if a == "" || a == "C" || a == "P" || m.allKeys {
			continue
		}
		var need uint8
		if strings.Contains(a, "R") {
			need |= permRead
		}
		if strings.Contains(a, "W") {
			need |= permWrite
		}
		ok := false
		for _, p := range m.keys {
			if p.flags&need == need && glob.Match([]byte(p.pattern), []byte(argv[first+i]), false) {
				ok = true
			}
		}
		if !ok {
			return DeniedKey, first + i
		}
	}
	for i, a := range acc {
		if (a != "C" && a != "P") || m.allChannels {
			continue
		}
		ok := false
		for _, p := range m.channels {
			if (a == "P" && p == argv[first+i]) || (a == "C" && glob.Match([]byte(p), []byte(argv[first+i]), false)) {
				ok = true
			}
		}
		if !ok {
			return DeniedChannel, first + i
		}
	}
	return OK, 0
}

var ruleSet = []string{
	"+@all", "-@all", "+@read", "-@read", "+@write", "-@write", "+@string", "-@string", "+@pubsub",
	"-@pubsub", "+@dangerous", "-@dangerous", "+@keyspace", "-@fast", "+get", "-get", "+set", "-del",
	"+config", "-config|get", "+config|get", "+publish", "+subscribe", "-psubscribe", "+psubscribe",
	"allkeys", "resetkeys", "~k*", "~*1", "%R~r*", "%W~w*", "%RW~x*", "%R~*", "%W~k?",
	"allchannels", "resetchannels", "&c*", "&d1", "&c?",
}

var words = []string{"k1", "r1", "w1", "x1", "kk", "c1", "d1", "c*", "cc"}

func TestCheckAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	a := New(table)
	full := make([]string, 0, len(access))
	for k := range access {
		full = append(full, k)
	}
	slices.Sort(full)
	for iter := range 3000 {
		m := &model{allowed: map[string]bool{}}
		var rules []string
		for range 1 + rng.Intn(7) {
			r := ruleSet[rng.Intn(len(ruleSet))]
			if !m.apply(r) {
				if _, _, err := a.SetUser("p", append(append([]string{"reset"}, rules...), r)); err == nil {
					t.Fatalf("rules %q + %q: Redis refuses it, svcdb accepted", rules, r)
				}
				continue
			}
			rules = append(rules, r)
		}
		u := mustSet(t, a, "p", "reset "+strings.Join(rules, " "))
		for range 20 {
			name := full[rng.Intn(len(full))]
			argv := strings.Split(name, "|")
			for range access[name] {
				argv = append(argv, words[rng.Intn(len(words))])
			}
			c := table.LookupFullName([]byte(name))
			bargv := make([][]byte, len(argv))
			for i := range argv {
				bargv[i] = []byte(argv[i])
			}
			gr, gi := u.Check(c, bargv)
			wr, wi := m.check(name, argv)
			if gr != wr || gi != wi {
				t.Fatalf("iteration %d, rules %q, %q: got %v@%d, model %v@%d", iter, rules, argv, gr, gi, wr, wi)
			}
		}
	}
}
