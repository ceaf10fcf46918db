package spinwait

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func fileReadable(t *testing.T, f *os.File, d time.Duration) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := rc.Control(func(fd uintptr) { ok = Readable(fd, d) }); err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestReadable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("spins on Linux only")
	}
	t.Run("data waiting", func(t *testing.T) {
		r, w := pipe(t)
		w.Write([]byte{1})
		if !fileReadable(t, r, time.Hour) {
			t.Fatal("not readable with a byte in the pipe")
		}
	})
	t.Run("empty until the budget ends", func(t *testing.T) {
		r, _ := pipe(t)
		start := time.Now()
		if fileReadable(t, r, 2*time.Millisecond) {
			t.Fatal("an empty pipe reported readable")
		}
		if el := time.Since(start); el < 2*time.Millisecond {
			t.Fatalf("gave up after %v, before its budget", el)
		}
	})
	t.Run("data arriving while spinning", func(t *testing.T) {
		r, w := pipe(t)
		go func() {
			time.Sleep(time.Millisecond)
			w.Write([]byte{1})
		}()
		if !fileReadable(t, r, time.Minute) {
			t.Fatal("missed the byte")
		}
	})
	t.Run("hung up", func(t *testing.T) {
		r, w := pipe(t)
		w.Close()
		if !fileReadable(t, r, time.Hour) {
			t.Fatal("a pipe with no writer left must read (EOF) without blocking")
		}
	})
	t.Run("no budget", func(t *testing.T) {
		r, w := pipe(t)
		w.Write([]byte{1})
		if fileReadable(t, r, 0) {
			t.Fatal("a zero budget must not poll")
		}
	})
}
