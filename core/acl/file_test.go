package acl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSaveFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	a := New(table)
	if _, err := a.LoadFile(path); err == nil || !strings.HasPrefix(err.Error(), "Error loading ACLs, opening file '"+path+"': No such file or directory") {
		t.Fatalf("missing file: %v", err)
	}
	bad := "user alice on >pw ~a* +get\n# comment\nuser bob +nosuch\nuser alice on\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := a.LoadFile(path)
	want := path + ":2 should start with user keyword followed by the username. " +
		path + ":3: Unknown command or category name in ACL. " +
		"WARNING: Duplicate user 'alice' found on line 4. " +
		"WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if err == nil || err.Error() != want {
		t.Fatalf("bad file:\n got %v\nwant %s", err, want)
	}
	if a.User("alice") != nil {
		t.Fatal("a bad file changed the users")
	}
	old := mustSet(t, a, "carol", "on nopass")
	if err := os.WriteFile(path, []byte("user alice on >pw ~a* (+set ~b) +get\n\nuser default on >dpw ~* &* +@all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	retired, err := a.LoadFile(path)
	if err != nil || len(retired) != 1 || retired[0] != old || !old.Deleted() {
		t.Fatalf("load: %v %v", retired, err)
	}
	if !a.AuthRequired() || a.Authenticate([]byte("alice"), []byte("pw")) == nil {
		t.Fatal("loaded users do not authenticate")
	}
	if err := a.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	wantFile := "user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~a* resetchannels -@all +get (~b resetchannels -@all +set)\n" +
		"user default on #" + HashPassword("dpw") + " ~* &* +@all\n"
	if string(data) != wantFile {
		t.Errorf("saved:\n%s\nwant\n%s", data, wantFile)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestLoadConfigured(t *testing.T) {
	a := New(table)
	err := a.LoadConfigured([]ConfiguredUser{{Name: "ro", Rules: "on >x ~* +@read"}, {Name: "w", Rules: "on +@write ~a allkeys ~b"}})
	if err == nil || err.Error() != "Error loading ACL rule '~b' for the user named 'w': "+ErrKeyAfterAll.Error() {
		t.Fatalf("err %v", err)
	}
	if a.User("ro") != nil {
		t.Fatal("partial load")
	}
	if err := a.LoadConfigured([]ConfiguredUser{{Name: "default", Rules: "on >p +@all ~*"}}); err != nil {
		t.Fatal(err)
	}
	if got := a.DescribeUser(a.DefaultUser()); got != "on sanitize-payload #"+HashPassword("p")+" ~* resetchannels +@all" {
		t.Errorf("default = %q", got)
	}
}
