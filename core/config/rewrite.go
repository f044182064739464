package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Rewrite is CONFIG REWRITE: it writes the running values into the TOML file
// at path, keeping everything else in it.
//
// go-toml re-encodes a document without its comments, so the rewrite is
// textual, on the byte ranges go-toml's parser reports:
//   - a key already in the file gets its value replaced in place when the
//     running value differs (unless that value came from the environment or a
//     flag: overrides stay out of the file);
//   - a parameter changed at runtime (CONFIG SET) to a non-default value that
//     the file lacks is added after the last key of its table, or as dotted
//     key next to its siblings, or in a new [table] at the end;
//   - every other byte (comments, blank lines, unknown formatting, order) is
//     kept.
//
// The result is loaded back into a fresh registry and must give the running
// values before it atomically replaces the file (temporary file in the same
// directory, fsync, rename, fsync of the directory), keeping the file's
// permissions (0600 for a new file: it may hold a secret set at runtime).
// A file that holds a secret (requirepass, http token) loses every group and
// other permission bit: 0644 becomes 0600, so a password set with CONFIG
// SET and written here is not left world-readable.
// A missing file is created. The one layout it cannot extend is an inline
// table (table = { ... }) that lacks the key; that is an error saying so.
func (r *Registry) Rewrite(path string) error {
	r.setMu.Lock()
	defer r.setMu.Unlock()
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // replace the link's target, not the link
	}
	mode := fs.FileMode(0o600)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if st, err := os.Stat(path); err == nil {
			mode = st.Mode().Perm()
		}
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	default:
		return fmt.Errorf("config: rewrite: %w", err)
	}
	out, want, err := r.rewriteBytes(path, data)
	if err != nil {
		return err
	}
	chk := New()
	if err := chk.LoadTOML(path, out); err != nil {
		return fmt.Errorf("config: rewrite of %s would not load back: %w", path, err)
	}
	for p, v := range want {
		if got, _ := chk.Value(p.Name); got != v {
			return fmt.Errorf("config: BUG: rewrite of %s reads back [%s] %s as %s", path, p.Table, p.Key, shown(p, got))
		}
	}
	if holdsSecret(chk) {
		mode &^= 0o077
	}
	return writeAtomic(path, out, mode)
}

// holdsSecret reports whether a registry loaded from a file has a non-empty
// secret from that file.
func holdsSecret(fromFile *Registry) bool {
	for _, p := range fromFile.Params() {
		if v, src := fromFile.Value(p.Name); p.Secret && src == SourceFile && v != "" {
			return true
		}
	}
	return false
}

// SecretsFrom lists the secret parameters with a non-empty value that came
// from src: cmd/svcdb warns about secrets given as flags (visible to every
// user in ps) and about secrets in a file others may read.
func (r *Registry) SecretsFrom(src Source) []string {
	var out []string
	for _, p := range r.Params() {
		if v, s := r.Value(p.Name); p.Secret && s == src && v != "" {
			out = append(out, p.Name)
		}
	}
	return out
}

type textEdit struct {
	start, end int64
	text       string
}

// rewriteBytes computes the new file text and the values it must hold.
// Caller holds setMu.
func (r *Registry) rewriteBytes(name string, data []byte) ([]byte, map[*Param]string, error) {
	d := &tomlDoc{values: map[string]any{}, inline: map[string]bool{}}
	if len(data) > 0 {
		var perr *ConfigError
		if d, perr = parseTOML(name, data); perr != nil {
			return nil, nil, fmt.Errorf("config: cannot rewrite %s: %w", name, perr)
		}
	}
	fileVals, _ := r.collect(name, d)
	fileCanon := map[*Param]string{}
	for _, l := range fileVals {
		fileCanon[l.p] = l.val
	}
	present := map[*Param]tomlEntry{}
	for _, e := range d.entries {
		if len(e.path) < 2 {
			continue
		}
		table := strings.Join(e.path[:len(e.path)-1], ".")
		if p := r.byPath[table+"\x1f"+e.path[len(e.path)-1]]; p != nil {
			present[p] = e
		}
	}

	r.mu.RLock()
	states := append([]state(nil), r.vals...)
	r.mu.RUnlock()

	var edits []textEdit
	want := map[*Param]string{}
	added := map[string][]*Param{}
	for i, p := range r.params {
		s := states[i]
		if e, ok := present[p]; ok {
			if s.src == SourceEnv || s.src == SourceFlag {
				continue
			}
			want[p] = s.val
			if c, ok := fileCanon[p]; ok && c == s.val {
				continue
			}
			if !e.valOK {
				return nil, nil, fmt.Errorf("config: cannot rewrite [%s] %s in %s: its value is not a plain value", p.Table, p.Key, name)
			}
			edits = append(edits, textEdit{int64(e.val.Offset), int64(e.val.Offset + e.val.Length), tomlValue(p, s.val)})
			continue
		}
		if s.src == SourceRuntime && s.val != p.Default {
			want[p] = s.val
			added[p.Table] = append(added[p.Table], p)
		}
	}

	var tail strings.Builder
	for _, t := range tableDocs {
		ps := added[t.name]
		if len(ps) == 0 {
			continue
		}
		parts := strings.Split(t.name, ".")
		for i := 1; i <= len(parts); i++ {
			if d.inline[joinPath(parts[:i])] {
				return nil, nil, fmt.Errorf("config: cannot rewrite %s: [%s] is an inline table there and lacks %s; write it as a [%s] section",
					name, t.name, ps[0].Key, t.name)
			}
		}
		at, prefix := int64(-1), ""
		for _, h := range d.headers {
			if h.path == t.name && !h.array {
				at = h.end
				for _, e := range d.entries {
					if e.section == t.name && !e.inline && e.end > at {
						at = e.end
					}
				}
			}
		}
		if at < 0 { // the table exists only through dotted keys: add siblings
			for _, e := range d.entries {
				if !e.inline && strings.Join(e.path[:len(e.path)-1], ".") == t.name {
					at = e.end
					rel := e.path[:len(e.path)-1]
					if e.section != "" {
						rel = rel[len(strings.Split(e.section, ".")):]
					}
					prefix = strings.Join(rel, ".") + "."
				}
			}
		}
		var lines strings.Builder
		for _, p := range ps {
			lines.WriteString(prefix + p.Key + " = " + tomlValue(p, want[p]) + "\n")
		}
		if at >= 0 {
			text := lines.String()
			if at == int64(len(data)) && len(data) > 0 && data[len(data)-1] != '\n' {
				text = "\n" + text
			}
			edits = append(edits, textEdit{at, at, text})
			continue
		}
		tail.WriteString("\n# Added by CONFIG REWRITE.\n[" + t.name + "]\n" + lines.String())
	}

	sort.SliceStable(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out []byte
	last := int64(0)
	for _, e := range edits {
		out = append(out, data[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	out = append(out, data[last:]...)
	if tail.Len() > 0 {
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		t := tail.String()
		if len(out) == 0 {
			t = strings.TrimPrefix(t, "\n")
		}
		out = append(out, t...)
	}
	return out, want, nil
}

// writeAtomic replaces path with data: temporary file in the same directory,
// fsync, rename, fsync of the directory.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".rewrite-*")
	if err != nil {
		return fmt.Errorf("config: rewrite: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil {
		if err = f.Chmod(mode); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("config: rewrite: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("config: rewrite: %w", err)
	}
	if dh, derr := os.Open(dir); derr == nil {
		_ = dh.Sync() // durability of the rename; not all filesystems support it
		dh.Close()
	}
	return nil
}
