package acl

import (
	"strings"
)

// describeCommandRules is ACLDescribeSelectorCommandRules: "+@all" or
// "-@all", then the categories that best fit the bitmap, then single
// commands (and first-args) until the bitmap is reproduced exactly.
func (a *ACL) describeCommandRules(sel *selector) string {
	var b strings.Builder
	fake := a.newSelector(false)
	additive := !sel.future
	if sel.future {
		b.WriteString("+@all ")
		_ = a.applySelector(fake, "+@all")
	} else {
		b.WriteString("-@all ")
	}
	temp := a.newSelector(false)
	copy(temp.bits, sel.bits)
	var applied [len(Categories)]bool
	for {
		best, mindiff, maxsame := -1, int(^uint(0)>>1), 0
		for j := range Categories {
			if applied[j] {
				continue
			}
			on, off := a.countCategory(temp, j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
				best, mindiff, maxsame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		a.setCategory(fake, best, additive)
		a.setCategory(temp, best, !additive)
		if additive {
			b.WriteString("+@")
		} else {
			b.WriteString("-@")
		}
		b.WriteString(Categories[best])
		b.WriteByte(' ')
		applied[best] = true
	}
	for _, c := range a.cmds.table.All() {
		a.describeSingle(&b, sel, fake, c.ID)
		for _, sub := range c.Subcommands {
			a.describeSingle(&b, sel, fake, sub.ID)
		}
	}
	out := b.String()
	return out[:len(out)-1] // the final space
}

// describeSingle is one step of ACLDescribeSelectorCommandRulesSingleCommands.
// Redis recurses into subcommands before emitting a command's first-args;
// only commands without subcommands have first-args, so the order is the same.
func (a *ACL) describeSingle(b *strings.Builder, sel, fake *selector, id int) {
	c := a.cmds.table.ByID(id)
	user, have := getBit(sel.bits, id), getBit(fake.bits, id)
	if user != have {
		if user {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
		b.WriteString(c.FullName)
		b.WriteByte(' ')
		fake.changePerm(c, user)
	}
	if !user {
		for _, f := range sel.firstArgs[id] {
			b.WriteString("+" + c.FullName + "|" + f + " ")
		}
	}
}

func (a *ACL) countCategory(s *selector, cat int) (on, off int) {
	cb := a.cmds.catBits[cat]
	for i, w := range cb {
		on += countOnes([]uint64{w & s.bits[i]})
		off += countOnes([]uint64{w &^ s.bits[i]})
	}
	return on, off
}

func patternString(p keyPattern) string {
	switch p.flags {
	case permRead:
		return "%R~" + p.pattern
	case permWrite:
		return "%W~" + p.pattern
	}
	return "~" + p.pattern
}

// describeSelector is ACLDescribeSelector.
func (a *ACL) describeSelector(sel *selector) string {
	var b strings.Builder
	if sel.allKeys {
		b.WriteString("~* ")
	} else {
		for _, p := range sel.keys {
			b.WriteString(patternString(p) + " ")
		}
	}
	if sel.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range sel.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(a.describeCommandRules(sel))
	return b.String()
}

// flagNames lists a user's flags in Redis' order (ACLUserFlags).
func (s *userState) flagNames() []string {
	var f []string
	if s.enabled {
		f = append(f, "on")
	} else {
		f = append(f, "off")
	}
	if s.nopass {
		f = append(f, "nopass")
	}
	switch s.sanitize {
	case sanitizeSkip:
		f = append(f, "skip-sanitize-payload")
	case sanitizePayload:
		f = append(f, "sanitize-payload")
	}
	return f
}

// describeUser is ACLDescribeUser: the rules that recreate the user, as ACL
// LIST and the ACL file show them (password hashes included).
func (a *ACL) describeUser(s *userState) string {
	var b strings.Builder
	for _, f := range s.flagNames() {
		b.WriteString(f + " ")
	}
	for _, p := range s.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, sel := range s.selectors {
		if sel.root {
			b.WriteString(a.describeSelector(sel))
		} else {
			b.WriteString(" (" + a.describeSelector(sel) + ")")
		}
	}
	return b.String()
}

// DescribeUser returns the user's line as ACL LIST shows it without the
// "user <name> " prefix.
func (a *ACL) DescribeUser(u *User) string { return a.describeUser(u.state.Load()) }

// List returns ACL LIST: "user <name> <rules>" for every user in name order.
func (a *ACL) List() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.listLocked()
}

func (a *ACL) listLocked() []string {
	var out []string
	for _, name := range sortedNames(a.users) {
		out = append(out, "user "+name+" "+a.describeUser(a.users[name].state.Load()))
	}
	return out
}

// Redacted returns each user's rules without passwords (for the debug API
// and bundles): the ACL LIST line with "#<hash>" rules dropped.
func (a *ACL) Redacted() []UserSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []UserSummary
	for _, name := range sortedNames(a.users) {
		s := a.users[name].state.Load()
		c := s.clone()
		c.passwords = nil
		out = append(out, UserSummary{
			Name:      name,
			Enabled:   s.enabled,
			NoPass:    s.nopass,
			Passwords: len(s.passwords),
			Rules:     a.describeUser(c),
		})
	}
	return out
}

// UserSummary describes a user without its password hashes.
type UserSummary struct {
	Name      string `json:"name"`
	Enabled   bool   `json:"enabled"`
	NoPass    bool   `json:"nopass"`
	Passwords int    `json:"passwords"` // how many, never which
	Rules     string `json:"rules"`
}
