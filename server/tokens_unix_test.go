//go:build unix

package server

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLoadTokensRefusesNonRegularFiles: LoadTokens on a FIFO blocked in
// open until a writer came (montygo serve's SIGHUP reload with it, which
// holds the signal loop); a FIFO or a device is now refused at once.
func TestLoadTokensRefusesNonRegularFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "tokens")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	for _, path := range []string{fifo, os.DevNull} {
		done := make(chan error, 1)
		go func() {
			_, err := LoadTokens(path)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			// Unblock the open so the goroutine ends before goleak looks.
			if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
				f.Close()
			}
			<-done
			t.Fatalf("LoadTokens(%s) blocked", path)
		}
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("LoadTokens(%s): %v, want ErrNotRegular", path, err)
		}
	}
}

// TestLoadTokensThroughSymlinks: a Kubernetes Secret volume holds its
// files behind symbolic links; LoadTokens follows them to the regular file.
func TestLoadTokensThroughSymlinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "..data-tokens")
	if err := os.WriteFile(target, []byte("alice:tok-alice-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "tokens")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	tk, err := LoadTokens(link)
	if err != nil || tk.Len() != 1 {
		t.Fatalf("LoadTokens through a symlink: %v", err)
	}
	if name, ok := tk.Lookup("tok-alice-0123456789"); !ok || name != "alice" {
		t.Fatalf("lookup: %q %v", name, ok)
	}
}
