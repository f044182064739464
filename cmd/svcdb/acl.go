package main

import (
	"errors"
	"fmt"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/config"
)

// errACLBoth is Redis' refusal of an aclfile together with users in the
// configuration file (ACLLoadUsersAtStartup).
const errACLBoth = "Configuring svcdb with users defined in the configuration file ([[acl.user]]) and at the same time an ACL file path (aclfile) is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in the configuration file, but not both."

// buildACL makes the server's users as Redis does at start-up: the default
// user takes requirepass, then the [[acl.user]] tables or the aclfile (not
// both) define the users. Errors name the file and line.
func buildACL(reg *config.Registry, table *command.Table) (*acl.ACL, error) {
	a := acl.New(table)
	a.SetRequirePass(reg.String("requirepass"))
	users, file := reg.ACLUsers(), reg.String("aclfile")
	if file != "" && len(users) > 0 {
		return nil, errors.New(errACLBoth)
	}
	if len(users) > 0 {
		cu := make([]acl.ConfiguredUser, len(users))
		for i, u := range users {
			cu[i] = acl.ConfiguredUser{Name: u.Name, Rules: u.Rules}
		}
		if err := a.LoadConfigured(cu); err != nil {
			var ue *acl.UserRuleError
			if errors.As(err, &ue) {
				u := users[ue.Index]
				return nil, fmt.Errorf("%s:%d: [acl.user] rules: %w", u.File, u.Line, err)
			}
			return nil, err
		}
	}
	if file != "" {
		if _, err := a.LoadFile(file); err != nil {
			return nil, fmt.Errorf("aborting start-up because of ACL errors: %w", err)
		}
	}
	return a, nil
}
