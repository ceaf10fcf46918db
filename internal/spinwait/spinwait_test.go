//go:build unix

package spinwait

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
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

func fileRead(t *testing.T, f *os.File, b []byte, d time.Duration) (int, bool) {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var (
		n  int
		ok bool
	)
	if err := rc.Control(func(fd uintptr) {
		var e syscall.Errno
		n, e, ok = Read(fd, b, d)
		if e != 0 {
			t.Errorf("read: %v", e)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return n, ok
}

// Read reads what comes within its budget itself, from a blocking pipe
// (the inner worker's stdout) as from a non-blocking one, and leaves
// the read to the caller past it.
func TestRead(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("spins on Linux only")
	}
	for _, blocking := range []bool{true, false} {
		t.Run(map[bool]string{true: "blocking", false: "non-blocking"}[blocking], func(t *testing.T) {
			mk := func() (*os.File, *os.File) {
				r, w := pipe(t)
				if blocking {
					rc, _ := r.SyscallConn()
					rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
				}
				return r, w
			}
			b := make([]byte, 8)
			t.Run("data waiting", func(t *testing.T) {
				r, w := mk()
				w.Write([]byte("ab"))
				if n, ok := fileRead(t, r, b, time.Hour); !ok || string(b[:n]) != "ab" {
					t.Fatalf("read %q, %v", b[:n], ok)
				}
			})
			t.Run("empty until the budget ends", func(t *testing.T) {
				r, w := mk()
				start := time.Now()
				if n, ok := fileRead(t, r, b, 2*time.Millisecond); ok {
					t.Fatalf("read %d bytes from an empty pipe", n)
				}
				if el := time.Since(start); el < 2*time.Millisecond {
					t.Fatalf("gave up after %v, before its budget", el)
				}
				// Nothing was consumed: the bytes written later are there.
				w.Write([]byte("c"))
				if n, ok := fileRead(t, r, b, time.Hour); !ok || string(b[:n]) != "c" {
					t.Fatalf("read %q, %v", b[:n], ok)
				}
			})
			t.Run("data arriving while spinning", func(t *testing.T) {
				r, w := mk()
				go func() {
					time.Sleep(time.Millisecond)
					w.Write([]byte("late"))
				}()
				if n, ok := fileRead(t, r, b, time.Minute); !ok || string(b[:n]) != "late" {
					t.Fatalf("read %q, %v", b[:n], ok)
				}
			})
			t.Run("end of stream", func(t *testing.T) {
				r, w := mk()
				w.Close()
				if n, ok := fileRead(t, r, b, time.Minute); !ok || n != 0 {
					t.Fatalf("read %d, %v at the end of the stream", n, ok)
				}
			})
		})
	}
}

// Writer writes small frames without waiting, a frame larger than the
// pipe's room the ordinary way (all of it arrives, in order, while the
// reader drains the pipe), and reports a closed file as an error.
func TestWriter(t *testing.T) {
	for _, blocking := range []bool{true, false} {
		t.Run(map[bool]string{true: "blocking", false: "non-blocking"}[blocking], func(t *testing.T) {
			r, w := pipe(t)
			if blocking {
				rc, _ := w.SyscallConn()
				rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) })
			}
			wr := NewWriter(w)
			if n, err := wr.Write([]byte("hello")); n != 5 || err != nil {
				t.Fatalf("write: %d, %v", n, err)
			}
			b := make([]byte, 16)
			if n, _ := r.Read(b); string(b[:n]) != "hello" {
				t.Fatalf("read %q", b[:n])
			}
			// Twice the pipe's default room: the non-waiting write takes
			// what fits (or nothing), the File's write the rest.
			big := make([]byte, 128<<10)
			for i := range big {
				big[i] = byte(i % 251)
			}
			got := make(chan []byte)
			go func() {
				all := make([]byte, 0, len(big))
				buf := make([]byte, 8192)
				for len(all) < len(big) {
					n, err := r.Read(buf)
					if err != nil {
						break
					}
					all = append(all, buf[:n]...)
				}
				got <- all
			}()
			if n, err := wr.Write(big); n != len(big) || err != nil {
				t.Fatalf("big write: %d, %v", n, err)
			}
			if all := <-got; string(all) != string(big) {
				t.Fatalf("read %d bytes back, not the %d written", len(all), len(big))
			}
			if err := wr.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := wr.Write([]byte("x")); err == nil {
				t.Fatal("a write after Close succeeded")
			}
		})
	}
}

// Write writes without waiting, and reports a full pipe as not done.
func TestWriteNoWait(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	r, w := pipe(t)
	rc, _ := w.SyscallConn()
	var fd uintptr
	rc.Control(func(f uintptr) { fd = f; syscall.SetNonblock(int(f), false) })
	if n, errno, ok := Write(fd, []byte("ab")); !ok || errno != 0 || n != 2 {
		t.Fatalf("write to an empty pipe: %d, %v, %v", n, errno, ok)
	}
	// Fill the pipe: the writes that cannot wait stop short, never block.
	chunk := make([]byte, 4096)
	done := make(chan bool)
	go func() {
		full := false
		for i := 0; i < 1<<10 && !full; i++ {
			if _, _, ok := Write(fd, chunk); !ok {
				full = true
			}
		}
		done <- full
	}()
	select {
	case full := <-done:
		if !full {
			t.Fatal("4 MiB written to a pipe nobody reads")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write that cannot wait blocked on a full pipe")
	}
	_ = r
}

// With GOMAXPROCS 1 a spinning Read leaves the only P to the program's
// other goroutines between its attempts: here the goroutine that writes
// what the spin waits for, started just before it. Run in a child process
// with asynchronous preemption off, so that within the spin's 5 ms budget
// (the runtime forces a preemption only after 10 ms) nothing but the
// spin's own yields can hand the P over: a spin that kept it would run
// out its budget and return ok false.
func TestReadYieldsToGoroutinesOnOneP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("spins on Linux only")
	}
	if os.Getenv("SPINWAIT_ONE_P") == "1" {
		runtime.GOMAXPROCS(1)
		r, w := pipe(t)
		go w.Write([]byte{7})
		n, ok := fileRead(t, r, make([]byte, 8), 5*time.Millisecond)
		if !ok || n != 1 {
			t.Fatalf("spin returned %d bytes, ok %v: the writer never ran", n, ok)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadYieldsToGoroutinesOnOneP$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SPINWAIT_ONE_P=1", "GODEBUG=asyncpreemptoff=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
