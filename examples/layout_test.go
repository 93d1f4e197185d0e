package examples

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePrefix is the import path prefix shared by every module of this
// repository; a module's path is modulePrefix + its top-level directory.
const modulePrefix = "github.com/temporalstore/temporalstore-go/"

// depRule allows the packages under from (a slash-separated directory
// relative to the repository root) to import the module in directory to;
// their tests only, when tests is set.
type depRule struct {
	from, to string
	tests    bool
}

// allowedDeps is the dependency direction of docs/ARCHITECTURE.md. An import
// from one module of the workspace into another must match a rule here.
// Imports within a module are always allowed.
var allowedDeps = []depRule{
	{from: "examples", to: "ferricstore"},
	{from: "examples", to: "matrixark"},
	{from: "examples", to: "matrixcache"},
	{from: "examples", to: "matrixobject"},
	{from: "examples", to: "matrixraft"},
	{from: "examples", to: "temporalstore"},
	// The engine declares its storage (package storage); only the default
	// wiring reaches the cache and the log, and the tests' choice of it.
	{from: "temporalstore/storage/disk", to: "matrixcache"},
	{from: "temporalstore/storage/disk", to: "matrixraft"},
	{from: "temporalstore/local", to: "matrixcache"},
	{from: "temporalstore/internal/teststorage", to: "matrixcache"},
	// A shard's log replicated by raft, and the cluster member that runs
	// one per shard; the shard's tests run on replicated logs.
	{from: "temporalstore/storage/raftlog", to: "matrixraft"},
	{from: "temporalstore/cluster", to: "matrixraft"},
	{from: "temporalstore/cluster", to: "matrixcache"}, // placement on its topology ring
	{from: "temporalstore/internal/shard", to: "matrixraft", tests: true},
	// A shard's log on shared storage: its value log a wal log, and a
	// store in a matrixobject bucket; what it shares with raftlog; the
	// contract tests' stores, and the backend's tests.
	{from: "temporalstore/storage/sharedlog", to: "matrixraft"},
	{from: "temporalstore/storage/sharedlog", to: "matrixobject"},
	{from: "temporalstore/storage/internal/valuelog", to: "matrixraft"},
	{from: "temporalstore/storage/storagetest", to: "matrixobject"},
	// Named blobs (/blob): their bytes in a matrixobject store.
	{from: "temporalstore/blob", to: "matrixobject"},
	{from: "temporalstore/cluster", to: "matrixobject", tests: true},
	{from: "temporalstore/backup", to: "matrixobject", tests: true}, // backups to its S3 API
	{from: "ferricstore", to: "matrixraft"},
	// matrixark defines its own Store interface; only its adapter package
	// may reach the engine.
	{from: "matrixark/tsstore", to: "temporalstore"},
}

// surfaceDirs are the engine's front ends: they reach the engine through its
// public packages only, and never its storage wiring (their tests may open
// an engine on it).
var surfaceDirs = []string{"temporalstore/resp", "temporalstore/httpapi", "temporalstore/client"}

// surfaceForbidden are the engine packages a surface may not import.
var surfaceForbidden = []string{"temporalstore/internal", "temporalstore/storage/disk", "temporalstore/local"}

// outOfWorkspace lists module directories kept out of go.work on purpose:
// tools/ (its own workspace, tools/go.work) and tools/natsbench, the
// JetStream peer of `bench streams`, which builds with the workspace off so
// that nats-server's dependencies enter neither workspace.
var outOfWorkspace = []string{"tools", "tools/natsbench"}

// goFile is one parsed Go source file of the workspace.
type goFile struct {
	rel     string // slash-separated path relative to the repository root
	dir     string // slash-separated directory relative to the repository root
	module  string // module directory, e.g. "matrixraft"
	pkg     string // package name
	hasDoc  bool   // the file carries a package doc comment
	docText string
	test    bool
	imports []string
}

// repoRoot returns the repository root: the parent of this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at the repository root %s: %v", root, err)
	}
	return root
}

// workspaceModules returns the module directories listed in go.work.
func workspaceModules(t *testing.T, root string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dirs []string
	inUse := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "":
		case inUse && line == ")":
			inUse = false
		case inUse:
			dirs = append(dirs, path.Clean(line))
		case line == "use (":
			inUse = true
		case strings.HasPrefix(line, "use "):
			dirs = append(dirs, path.Clean(strings.TrimSpace(strings.TrimPrefix(line, "use "))))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("go.work lists no modules")
	}
	return dirs
}

// modulePath reads the module path from dir/go.mod.
func modulePath(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatalf("%s/go.mod has no module line", dir)
	return ""
}

// skipDir reports whether the go command ignores the directory name when it
// matches packages.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" ||
		strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// parseWorkspace parses the package clause, doc comment and imports of every
// Go file in the workspace modules.
func parseWorkspace(t *testing.T, root string, modules []string) []goFile {
	t.Helper()
	var files []goFile
	fset := token.NewFileSet()
	for _, mod := range modules {
		modDir := filepath.Join(root, filepath.FromSlash(mod))
		err := filepath.WalkDir(modDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p == modDir {
					return nil
				}
				if skipDir(d.Name()) {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // a nested module; checked on its own
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
				return nil
			}
			f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			gf := goFile{
				rel:    filepath.ToSlash(rel),
				dir:    path.Dir(filepath.ToSlash(rel)),
				module: mod,
				pkg:    f.Name.Name,
				test:   strings.HasSuffix(p, "_test.go"),
			}
			if f.Doc != nil {
				gf.hasDoc = true
				gf.docText = f.Doc.Text()
			}
			for _, imp := range f.Imports {
				ip, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					return err
				}
				gf.imports = append(gf.imports, ip)
			}
			files = append(files, gf)
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", mod, err)
		}
	}
	return files
}

// TestWorkspaceModules checks that go.work lists every module of the
// repository except those kept out on purpose, and that each module's path is
// the repository prefix plus its directory.
func TestWorkspaceModules(t *testing.T) {
	root := repoRoot(t)
	modules := workspaceModules(t, root)

	for _, mod := range modules {
		if got, want := modulePath(t, filepath.Join(root, filepath.FromSlash(mod))), modulePrefix+mod; got != want {
			t.Errorf("%s/go.mod: module path %q, want %q", mod, got, want)
		}
	}

	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !slices.Contains(modules, rel) && !slices.Contains(outOfWorkspace, rel) {
			t.Errorf("module %s is not listed in go.work (run: go work use ./%s)", rel, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPackageDocs checks that every package in the workspace has a package
// doc comment in one of its non-test files, and that a library package's
// comment begins "Package <name> ".
func TestPackageDocs(t *testing.T) {
	root := repoRoot(t)
	files := parseWorkspace(t, root, workspaceModules(t, root))

	type pkgDoc struct {
		name     string
		hasFiles bool
		ok       bool
	}
	pkgs := map[string]*pkgDoc{}
	for _, f := range files {
		if f.test {
			continue
		}
		p := pkgs[f.dir]
		if p == nil {
			p = &pkgDoc{name: f.pkg}
			pkgs[f.dir] = p
		}
		p.hasFiles = true
		if !f.hasDoc {
			continue
		}
		if f.pkg == "main" || strings.HasPrefix(f.docText, "Package "+f.pkg+" ") {
			p.ok = true
		} else {
			t.Errorf("%s: package comment should begin %q", f.rel, "Package "+f.pkg+" ")
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(pkgs)) {
		if p := pkgs[dir]; p.hasFiles && !p.ok {
			t.Errorf("package %s (%s) has no package doc comment; add a doc.go", p.name, dir)
		}
	}
}

// TestModuleImports checks that no module imports another module's internal
// packages and that imports between modules follow allowedDeps.
func TestModuleImports(t *testing.T) {
	root := repoRoot(t)
	modules := workspaceModules(t, root)
	files := parseWorkspace(t, root, modules)

	// The longest module path that prefixes an import names its module.
	byLen := slices.Clone(modules)
	slices.SortFunc(byLen, func(a, b string) int { return len(b) - len(a) })
	moduleOf := func(ip string) (string, bool) {
		for _, m := range byLen {
			if ip == modulePrefix+m || strings.HasPrefix(ip, modulePrefix+m+"/") {
				return m, true
			}
		}
		return "", false
	}
	allowed := func(fromDir, to string, test bool) bool {
		for _, r := range allowedDeps {
			if r.to == to && (fromDir == r.from || strings.HasPrefix(fromDir, r.from+"/")) && (!r.tests || test) {
				return true
			}
		}
		return false
	}

	for _, f := range files {
		for _, ip := range f.imports {
			if !strings.HasPrefix(ip, modulePrefix) {
				continue
			}
			to, ok := moduleOf(ip)
			if !ok {
				t.Errorf("%s imports %s, which is in no workspace module", f.rel, ip)
				continue
			}
			if to == f.module {
				continue
			}
			sub := strings.TrimPrefix(ip, modulePrefix+to)
			if strings.Contains(sub+"/", "/internal/") {
				t.Errorf("%s imports %s: another module's internal package", f.rel, ip)
				continue
			}
			if !allowed(f.dir, to, strings.HasSuffix(f.rel, "_test.go")) {
				t.Errorf("%s imports %s: module %s may not depend on %s (see docs/ARCHITECTURE.md)", f.rel, ip, f.module, to)
			}
		}
	}
}

// TestSurfaceImports checks that the surfaces import no engine internals and
// no storage wiring, and that no package imports examples.
// clientImports are what the client's packages may import: the standard
// library, MessagePack, and the packages beneath them, so that a program
// that only talks to a server links no storage, cache, log or metrics.
var clientImports = map[string]func(ip string) bool{
	"temporalstore/api":  func(ip string) bool { return isStd(ip) },
	"temporalstore/wire": func(ip string) bool { return isStd(ip) || isMsgpack(ip) || ip == modulePrefix+"temporalstore/api" },
	"temporalstore/client": func(ip string) bool {
		return isStd(ip) || isMsgpack(ip) || ip == modulePrefix+"temporalstore/api" || ip == modulePrefix+"temporalstore/wire"
	},
}

var clientRule = map[string]string{
	"temporalstore/api":    "the standard library",
	"temporalstore/wire":   "the standard library, MessagePack and api",
	"temporalstore/client": "the standard library, MessagePack, api and wire",
}

func isStd(ip string) bool     { return !strings.Contains(strings.SplitN(ip, "/", 2)[0], ".") }
func isMsgpack(ip string) bool { return strings.HasPrefix(ip, "github.com/vmihailenco/msgpack/") }

func TestSurfaceImports(t *testing.T) {
	root := repoRoot(t)
	for _, f := range parseWorkspace(t, root, workspaceModules(t, root)) {
		for _, ip := range f.imports {
			if ip == modulePrefix+"examples" || strings.HasPrefix(ip, modulePrefix+"examples/") {
				if f.module != "examples" {
					t.Errorf("%s imports %s: nothing imports examples", f.rel, ip)
				}
			}
			// The client links the request values and the wire shapes, not
			// the engine or a server.
			if allowed, ok := clientImports[f.dir]; ok && !f.test && !allowed(ip) {
				t.Errorf("%s imports %s: %s imports only %s", f.rel, ip, f.dir, clientRule[f.dir])
			}
			if f.test || !slices.ContainsFunc(surfaceDirs, func(d string) bool { return f.dir == d || strings.HasPrefix(f.dir, d+"/") }) {
				continue
			}
			for _, bad := range surfaceForbidden {
				if ip == modulePrefix+bad || strings.HasPrefix(ip, modulePrefix+bad+"/") {
					t.Errorf("%s imports %s: a surface reaches the engine through its public packages", f.rel, ip)
				}
			}
			if !strings.HasPrefix(ip, modulePrefix+"temporalstore") && strings.HasPrefix(ip, modulePrefix) {
				t.Errorf("%s imports %s: a surface imports no other module", f.rel, ip)
			}
		}
	}
}
