package install

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/dirs"
)

// memFS is an in-memory FS for paths of any OS: Windows backslashes are
// stored as slashes. It has no symlinks.
type memFS struct {
	mu    sync.Mutex
	nodes map[string]*memNode
}

type memNode struct {
	data []byte
	mode fs.FileMode // includes fs.ModeDir for folders
}

func newMemFS() *memFS { return &memFS{nodes: map[string]*memNode{}} }

func memKey(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	if name == "" {
		return "."
	}
	return path.Clean(name)
}

func notExist(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
}

type memInfo struct {
	name string
	n    *memNode
}

func (i memInfo) Name() string       { return path.Base(i.name) }
func (i memInfo) Size() int64        { return int64(len(i.n.data)) }
func (i memInfo) Mode() fs.FileMode  { return i.n.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.n.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }

func (m *memFS) Stat(name string) (fs.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey(name)
	n, ok := m.nodes[k]
	if !ok {
		return nil, notExist("stat", name)
	}
	return memInfo{k, n}, nil
}

func (m *memFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.nodes[memKey(name)]
	if !ok {
		return nil, notExist("open", name)
	}
	if n.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return slices.Clone(n.data), nil
}

func (m *memFS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey(name)
	if p, ok := m.nodes[path.Dir(k)]; !ok || !p.mode.IsDir() {
		return notExist("write", name)
	}
	m.nodes[k] = &memNode{data: slices.Clone(data), mode: perm}
	return nil
}

func (m *memFS) MkdirAll(name string, perm fs.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := memKey(name); ; k = path.Dir(k) {
		if n, ok := m.nodes[k]; ok {
			if !n.mode.IsDir() {
				return &fs.PathError{Op: "mkdir", Path: k, Err: errors.New("not a directory")}
			}
			return nil
		}
		m.nodes[k] = &memNode{mode: fs.ModeDir | perm}
		if path.Dir(k) == k {
			return nil
		}
	}
}

func (m *memFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey(name)
	n, ok := m.nodes[k]
	if !ok {
		return notExist("remove", name)
	}
	if n.mode.IsDir() {
		for o := range m.nodes {
			if o != k && path.Dir(o) == k {
				return &fs.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
			}
		}
	}
	delete(m.nodes, k)
	return nil
}

type memEntry struct{ memInfo }

func (e memEntry) Type() fs.FileMode          { return e.n.mode.Type() }
func (e memEntry) Info() (fs.FileInfo, error) { return e.memInfo, nil }

func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := memKey(name)
	if n, ok := m.nodes[k]; !ok || !n.mode.IsDir() {
		return nil, notExist("readdir", name)
	}
	var out []fs.DirEntry
	for o, n := range m.nodes {
		if o != k && path.Dir(o) == k {
			out = append(out, memEntry{memInfo{o, n}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

func (m *memFS) EvalSymlinks(name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.nodes[memKey(name)]; !ok {
		return "", notExist("lstat", name)
	}
	return name, nil
}

// put writes a file, creating its folders.
func (m *memFS) put(name string, data string, perm fs.FileMode) {
	k := memKey(name)
	if err := m.MkdirAll(path.Dir(k), 0o755); err != nil {
		panic(err)
	}
	if err := m.WriteFile(name, []byte(data), perm); err != nil {
		panic(err)
	}
}

// files lists every file (not folder), slash-separated, sorted.
func (m *memFS) files() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, n := range m.nodes {
		if !n.mode.IsDir() {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// snapshot copies every node, to compare before and after.
func (m *memFS) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for k, n := range m.nodes {
		out[k] = n.mode.String() + ":" + string(n.data)
	}
	return out
}

// memRegistry is a fake Windows registry: keys, each with an optional
// default value. Setting a key's value creates it and its parents, as
// RegCreateKeyEx does.
type memRegistry struct {
	mu   sync.Mutex
	keys map[string]string // root\key -> default value
	made map[string]bool   // root\key of every existing key, parents included
}

func newMemRegistry() *memRegistry {
	return &memRegistry{keys: map[string]string{}, made: map[string]bool{}}
}

func (r *memRegistry) Default(root Root, key string) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.keys[string(root)+`\`+key]
	return v, ok, nil
}

func (r *memRegistry) SetDefault(root Root, key, value string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := string(root) + `\` + key
	r.keys[p] = value
	for ; strings.Contains(p, `\`); p = p[:strings.LastIndexByte(p, '\\')] {
		r.made[p] = true
	}
	return nil
}

func (r *memRegistry) DeleteKey(root Root, key string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := string(root) + `\` + key
	for k := range r.made {
		if strings.HasPrefix(k, p+`\`) {
			return fmt.Errorf("delete %s: it has subkeys", p)
		}
	}
	delete(r.keys, p)
	delete(r.made, p)
	return nil
}

func (r *memRegistry) Entries(root Root, key string) (int, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := string(root) + `\` + key
	if !r.made[p] {
		return 0, false, nil
	}
	n := 0
	if _, ok := r.keys[p]; ok {
		n++
	}
	for k := range r.made {
		if rest, ok := strings.CutPrefix(k, p+`\`); ok && !strings.Contains(rest, `\`) {
			n++
		}
	}
	return n, true, nil
}

// all lists every key, parents included.
func (r *memRegistry) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.made))
}

func (r *memRegistry) snapshot() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.keys)
}

// envOf is an Env over a map.
func envOf(m map[string]string) dirs.Env {
	return func(k string) string { return m[k] }
}
