//go:build unix

package mount_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/session"
)

// One table per session: a host directory the sandbox may read at /data,
// and an overlay at /scratch where its writes stay in memory, so the host
// directory is never changed. The environment is the table's, not the
// host's.
func ExampleNew() {
	in, err := os.MkdirTemp("", "monty-in")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(in)
	if err := os.WriteFile(filepath.Join(in, "n.txt"), []byte("41"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	scratch, err := os.MkdirTemp("", "monty-scratch")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(scratch)

	table, err := mount.New([]mount.Mount{
		{HostDir: in, VirtualPath: "/data", Mode: mount.ReadOnly},
		{HostDir: scratch, VirtualPath: "/scratch", Mode: mount.Overlay},
	}, mount.Options{Env: map[string]string{"STAGE": "test"}})
	if err != nil {
		fmt.Println(err) // a missing host directory, overlapping paths, ...
		return
	}
	defer table.Close() // releases the host directory handles

	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()
	r, err := s.Run(ctx, `
from pathlib import Path
import os
n = int(Path("/data/n.txt").read_text()) + 1
Path("/scratch/out.txt").write_text(f"{n} {os.getenv('STAGE')}")
Path("/scratch/out.txt").read_text()`, session.WithOS(table))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	_, err = os.Stat(filepath.Join(scratch, "out.txt"))
	fmt.Println("on the host:", !errors.Is(err, os.ErrNotExist))

	_, err = s.Run(ctx, `Path("/data/n.txt").write_text("0")`, session.WithOS(table))
	var pe *session.PythonError
	if errors.As(err, &pe) {
		fmt.Println("python raised:", pe.Type())
	}
	// Output:
	// '42 test'
	// on the host: false
	// python raised: PermissionError
}

// A Go file system mounted in the sandbox: here an fstest.MapFS, but an
// embed.FS, a *zip.Reader or any fs.FS mounts the same way. Read-only at
// /config, and as an overlay at /work, where the sandbox's changes stay in
// the session's memory and the fs.FS is never changed.
func ExampleNew_fs() {
	config := fstest.MapFS{
		"settings.json": {Data: []byte(`{"rate": 3}`)},
		"tmpl/hi.txt":   {Data: []byte("hello, ")},
	}
	table, err := mount.New([]mount.Mount{
		{FS: config, VirtualPath: "/config", Mode: mount.ReadOnly},
		{FS: config, VirtualPath: "/work", Mode: mount.Overlay},
	}, mount.Options{})
	if err != nil {
		fmt.Println(err) // ReadWrite with an FS: mount.ErrReadWriteFS
		return
	}
	defer table.Close()

	ctx := context.Background()
	s, err := session.Start(ctx, session.Launch{}, session.Config{})
	if err != nil {
		fmt.Println("no worker:", err)
		return
	}
	defer s.Close()
	r, err := s.Run(ctx, `
from pathlib import Path
import json
rate = json.loads(Path("/config/settings.json").read_text())["rate"]
Path("/work/tmpl/hi.txt").write_text(Path("/config/tmpl/hi.txt").read_text() + "world")
(rate, sorted(p.name for p in Path("/config").iterdir()), Path("/work/tmpl/hi.txt").read_text())`, session.WithOS(table))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Repr())
	fmt.Printf("in the fs.FS: %q\n", config["tmpl/hi.txt"].Data)

	_, err = s.Run(ctx, `Path("/config/settings.json").write_text("{}")`, session.WithOS(table))
	var pe *session.PythonError
	if errors.As(err, &pe) {
		fmt.Println("python raised:", pe.Type())
	}
	// Output:
	// (3, ['settings.json', 'tmpl'], 'hello, world')
	// in the fs.FS: "hello, "
	// python raised: PermissionError
}
