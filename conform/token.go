//go:build unix

package conform

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"
)

// The judge learns that every scripted child the parent under test will
// ever start has recorded its spawn (or ended) from a pipe, the token: the
// parent gets its write end as file descriptor 3, so every process it
// forks inherits a copy, and keeps it through exec unless it closes
// inherited descriptors. A scripted child closes its copy once its spawn
// is recorded; any other process keeps its copy until it exits. The judge
// reads the read end until EOF: then the parent and everything it started
// that kept the token have ended, and every child that had it is in the
// control file. A child whose parent closed inherited descriptors before
// exec (Python's close_fds) never had a copy; those are found by their
// arguments instead (inFlight).

// tokenID returns the identity of the token's write end, DEV:INO, which
// the scripted child looks for among its descriptors.
func tokenID(w *os.File) (string, error) {
	fi, err := w.Stat()
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("no device and inode for %s", w.Name())
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}

// releaseToken closes every descriptor of this process above 2 that is a
// pipe with identity id (DEV:INO, from tokenID).
func releaseToken(id string) {
	var fds []int
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
				fds = append(fds, fd)
			}
		}
		break
	}
	for _, fd := range fds {
		var st syscall.Stat_t
		if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
			continue
		}
		if fmt.Sprintf("%d:%d", st.Dev, st.Ino) == id {
			_ = syscall.Close(fd)
		}
	}
}

// awaitRelease reads the token's read end until every copy of the write
// end is closed, and closes it. It reports false when bound passed first
// (something the parent started still holds a copy); it returns at once
// when ctx ends.
func awaitRelease(ctx context.Context, r *os.File, bound time.Duration) bool {
	defer r.Close()
	stop := context.AfterFunc(ctx, func() { _ = r.SetReadDeadline(time.Now()) })
	defer stop()
	if err := r.SetReadDeadline(time.Now().Add(bound)); err != nil {
		return false
	}
	_, err := io.Copy(io.Discard, r)
	return err == nil
}
