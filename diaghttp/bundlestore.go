package diaghttp

import (
	"archive/zip"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// The bundle store: one directory of svcdb-bundle-<id>.zip files, listed
// from the directory itself (an operator may delete files by hand), and
// pruned by age (ttl) and count (max-bundles). Every name is built from an
// id that matched bundleIDPattern: nothing a client sends reaches a path
// unchecked.

const (
	bundlePrefix = "svcdb-bundle-"
	bundleExt    = ".zip"
	// bundleTimeLayout is the id's time part: UTC, to the second.
	bundleTimeLayout = "20060102T150405Z"
	// bundleTmpPrefix marks a bundle being written; renamed when complete,
	// so a listed bundle is always whole.
	bundleTmpPrefix = ".tmp-"
)

// bundleIDPattern is an id: <UTC yyyymmddThhmmssZ>-<8 lowercase hex>.
var bundleIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$`)

// ErrBadBundleID is returned for an id that is not <yyyymmddThhmmssZ>-<8
// hex>; ErrBundleNotFound for a well-formed id with no bundle.
var (
	ErrBadBundleID    = errors.New("malformed bundle id: want <yyyymmddThhmmssZ>-<8 hex digits>")
	ErrBundleNotFound = errors.New("no such bundle")
)

// ValidBundleID reports whether id is a well-formed bundle id (the pattern
// and a real calendar time).
func ValidBundleID(id string) bool {
	if !bundleIDPattern.MatchString(id) {
		return false
	}
	_, err := time.Parse(bundleTimeLayout, id[:len(bundleTimeLayout)])
	return err == nil
}

// newBundleID makes the id of a bundle started at now.
func newBundleID(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go 1.24+)
	return now.UTC().Format(bundleTimeLayout) + "-" + hex.EncodeToString(r[:])
}

// bundleFileName is the ZIP's name for a valid id.
func bundleFileName(id string) string { return bundlePrefix + id + bundleExt }

// bundleIDTime is the instant an id names (valid ids only).
func bundleIDTime(id string) time.Time {
	t, _ := time.Parse(bundleTimeLayout, id[:len(bundleTimeLayout)])
	return t
}

// bundleStore is the directory. Its mutex orders writes, listings and
// deletions with each other (generation, the sweeper, requests); none of
// them is on the data path.
type bundleStore struct {
	dir string

	mu    sync.Mutex
	metas map[string]bundleMeta // by id: what List needs from inside a ZIP
}

// bundleMeta is what a listing reads from a bundle's manifest, cached while
// the file keeps its size and modification time.
type bundleMeta struct {
	size     int64
	mod      time.Time
	duration time.Duration
	files    []string
}

func newBundleStore(dir string) *bundleStore {
	return &bundleStore{dir: dir, metas: map[string]bundleMeta{}}
}

// path is the ZIP's path for a valid id.
func (st *bundleStore) path(id string) string { return filepath.Join(st.dir, bundleFileName(id)) }

// write stores a complete bundle: a temporary file first, renamed into place
// once synced, so neither a listing nor a crash ever sees half a bundle.
func (st *bundleStore) write(id string, files []bundleFile, d time.Duration) (BundleInfo, error) {
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return BundleInfo{}, fmt.Errorf("bundle directory: %w", err)
	}
	tmp, err := os.CreateTemp(st.dir, bundleTmpPrefix+bundleFileName(id)+"-*")
	if err != nil {
		return BundleInfo{}, fmt.Errorf("bundle file: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	zw := zip.NewWriter(tmp)
	created := bundleIDTime(id)
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.name
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: f.method(), Modified: created})
		if err == nil {
			_, err = w.Write(f.data)
		}
		if err != nil {
			tmp.Close()
			return BundleInfo{}, fmt.Errorf("writing %s: %w", f.name, err)
		}
	}
	err = zw.Close()
	if err == nil {
		err = tmp.Chmod(0o600) // bundles describe the server: owner only
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return BundleInfo{}, fmt.Errorf("writing the bundle: %w", err)
	}
	path := st.path(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := os.Rename(tmp.Name(), path); err != nil {
		return BundleInfo{}, fmt.Errorf("storing the bundle: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return BundleInfo{}, fmt.Errorf("storing the bundle: %w", err)
	}
	st.metas[id] = bundleMeta{size: fi.Size(), mod: fi.ModTime(), duration: d, files: names}
	return BundleInfo{ID: id, Path: path, CreatedAt: created, SizeBytes: fi.Size(), Duration: d, Files: names}, nil
}

// list returns the stored bundles, newest first. Files whose name is not a
// bundle's, and bundles that cannot be read, are left out (a damaged one
// is logged by the caller through the error list).
func (st *bundleStore) list() ([]BundleInfo, []error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	entries, err := os.ReadDir(st.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []BundleInfo{}, nil // nothing generated yet
	}
	if err != nil {
		return []BundleInfo{}, []error{err}
	}
	out := []BundleInfo{}
	var errs []error
	seen := map[string]bool{}
	for _, e := range entries {
		id, ok := idFromFileName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := st.infoLocked(id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen[id] = true
		out = append(out, info)
	}
	for id := range st.metas { // forget files deleted by hand
		if !seen[id] {
			delete(st.metas, id)
		}
	}
	// Ids tell the second; within one, the file's modification time (when
	// it was stored) orders bundles generated in a row.
	slices.SortFunc(out, func(a, b BundleInfo) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), st.metas[b.ID].mod.Compare(st.metas[a.ID].mod), cmp.Compare(b.ID, a.ID))
	})
	return out, errs
}

// idFromFileName returns the id of a bundle file name.
func idFromFileName(name string) (string, bool) {
	id, ok := strings.CutPrefix(name, bundlePrefix)
	if !ok {
		return "", false
	}
	id, ok = strings.CutSuffix(id, bundleExt)
	if !ok || !ValidBundleID(id) {
		return "", false
	}
	return id, true
}

// open opens a bundle for reading; id must be valid. Only regular files are
// served: a symbolic link planted in the directory is not followed.
func (st *bundleStore) open(id string) (*os.File, BundleInfo, error) {
	if !ValidBundleID(id) {
		return nil, BundleInfo{}, ErrBadBundleID
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	info, err := st.infoLocked(id)
	if err != nil {
		return nil, BundleInfo{}, err
	}
	f, err := os.Open(info.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, BundleInfo{}, ErrBundleNotFound
	}
	if err != nil {
		return nil, BundleInfo{}, err
	}
	return f, info, nil
}

// infoLocked describes the bundle id from its file and manifest (cached).
// Caller holds mu.
func (st *bundleStore) infoLocked(id string) (BundleInfo, error) {
	path := st.path(id)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return BundleInfo{}, ErrBundleNotFound
	}
	if err != nil {
		return BundleInfo{}, err
	}
	m, ok := st.metas[id]
	if !ok || m.size != fi.Size() || !m.mod.Equal(fi.ModTime()) {
		m, err = readBundleMeta(path)
		if err != nil {
			return BundleInfo{}, fmt.Errorf("bundle %s: %w", id, err)
		}
		m.size, m.mod = fi.Size(), fi.ModTime()
		st.metas[id] = m
	}
	return BundleInfo{ID: id, Path: path, CreatedAt: bundleIDTime(id), SizeBytes: fi.Size(), Duration: m.duration, Files: m.files}, nil
}

// readBundleMeta reads the window from manifest.json and the file names
// from the ZIP's directory.
func readBundleMeta(path string) (bundleMeta, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return bundleMeta{}, err
	}
	defer zr.Close()
	var m bundleMeta
	for _, f := range zr.File {
		m.files = append(m.files, f.Name)
		if f.Name != manifestName || f.UncompressedSize64 > 1<<20 {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return bundleMeta{}, err
		}
		var man struct {
			DurationSecs int64 `json:"duration_secs"`
		}
		err = json.NewDecoder(rc).Decode(&man)
		rc.Close()
		if err != nil {
			return bundleMeta{}, fmt.Errorf("%s: %w", manifestName, err)
		}
		m.duration = time.Duration(man.DurationSecs) * time.Second
	}
	return m, nil
}

// prune deletes bundles older than ttl, then the oldest beyond max, and
// returns the ids it deleted.
func (st *bundleStore) prune(max int, ttl time.Duration, now time.Time) ([]string, []error) {
	list, errs := st.list()
	st.mu.Lock()
	defer st.mu.Unlock()
	var gone []string
	for i, b := range list { // newest first
		if i < max && now.Sub(b.CreatedAt) <= ttl {
			continue
		}
		if err := os.Remove(b.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		delete(st.metas, b.ID)
		gone = append(gone, b.ID)
	}
	return gone, errs
}

// removeTemps deletes temporary files a crash left behind; only call it when
// no generation runs.
func (st *bundleStore) removeTemps() {
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), bundleTmpPrefix+bundlePrefix) && e.Type().IsRegular() {
			_ = os.Remove(filepath.Join(st.dir, e.Name()))
		}
	}
}
