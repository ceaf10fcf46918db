//go:build linux

package mount

import (
	"os"
	"path"
	"syscall"
	"unsafe"
)

// atRemoveDir is AT_REMOVEDIR, which the syscall package does not export.
const atRemoveDir = 0x200

// removeEntry removes the file (dir false) or empty directory (dir true)
// named by rel. The parent directory is opened through root, then a single
// unlinkat(2) on that descriptor removes the last component without
// following it, so the kind checked is the kind removed: unlink of a
// directory fails with EISDIR and rmdir of a file with ENOTDIR, with no
// window for the entry to be swapped in between.
func removeEntry(root *os.Root, rel string, dir bool) error {
	flags := 0
	if dir {
		flags = atRemoveDir
	}
	return inParent(root, rel, func(fd int, name string) error { return unlinkat(fd, name, flags) })
}

// renameEntry renames src to dst with one renameat(2) on their parent
// directories, opened through root. Neither last component is followed,
// and POSIX's rules apply as CPython's os.rename sees them: a directory may
// replace an empty directory, a file onto a directory is EISDIR, a
// directory onto a file ENOTDIR, onto a non-empty directory ENOTEMPTY.
// (os.Root.Rename refuses any existing directory target with EEXIST.)
func renameEntry(root *os.Root, src, dst string) error {
	return inParent(root, src, func(sfd int, sname string) error {
		return inParent(root, dst, func(dfd int, dname string) error {
			return ignoringEINTR(func() error { return syscall.Renameat(sfd, sname, dfd, dname) })
		})
	})
}

// inParent opens rel's parent directory through root and calls f with its
// descriptor and rel's last component.
func inParent(root *os.Root, rel string, f func(fd int, name string) error) error {
	parent, name := path.Split(rel)
	if parent == "" {
		parent = "."
	}
	d, err := root.OpenFile(parent, os.O_RDONLY|oDirectory|oNonblock, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	rc, err := d.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd), name) }); err != nil {
		return err
	}
	return ferr
}

// ignoringEINTR retries f while it fails with EINTR.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != syscall.EINTR {
			return err
		}
	}
}

// unlinkat is unlinkat(2) on the directory descriptor fd, retried on EINTR.
func unlinkat(fd int, name string, flags int) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	for {
		_, _, e := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(fd), uintptr(unsafe.Pointer(p)), uintptr(flags))
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return e
	}
}
