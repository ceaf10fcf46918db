// Package hostilebuild compiles the hostile child program
// (internal/hostile/cmd/hostilechild) for tests. It is separate from
// package hostile so that montygo, which links the catalog for `conform
// parent`, does not link package testing.
package hostilebuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Build compiles cmd/hostilechild once per test binary and returns the path
// of the executable. It fails t if the build fails.
//
// The binary goes to a fixed place under the system temp directory (one per
// source tree and platform), written to a temporary name and renamed into
// place, so that concurrent test binaries never see a partial file and no
// per-run directories pile up.
func Build(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() { buildPath, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("hostile: building hostilechild: %v", buildErr)
	}
	return buildPath
}

func build() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the hostile package source")
	}
	pkgDir := filepath.Join(filepath.Dir(file), "..") // internal/hostile
	sum := sha256.Sum256([]byte(pkgDir))
	dir := filepath.Join(os.TempDir(), "gomonty-hostilechild-"+hex.EncodeToString(sum[:6]), runtime.GOOS+"_"+runtime.GOARCH)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "hostilechild")
	tmp, err := os.CreateTemp(dir, "hostilechild-*.tmp")
	if err != nil {
		return "", err
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)

	// go test puts its own GOROOT/bin first on PATH, so this is the
	// toolchain that built the test binary.
	cmd := exec.Command("go", "build", "-o", tmpName, "./cmd/hostilechild")
	cmd.Dir = pkgDir
	// The child is never built with the race detector or coverage: it
	// streams gigabytes and must stay fast whatever the test binary uses.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, msg)
	}
	if err := os.Rename(tmpName, out); err != nil {
		return "", err
	}
	return out, nil
}
