//go:build !linux

package mount

import (
	"os"
	"syscall"
)

// removeEntry removes the file (dir false) or empty directory (dir true)
// named by rel. Off Linux the kind is checked with Lstat before os.Root's
// Remove, which leaves a window in which a host process could swap a file
// for an empty directory (or back); the entry removed is still inside the
// root.
func removeEntry(root *os.Root, rel string, dir bool) error {
	fi, err := root.Lstat(rel)
	if err != nil {
		return err
	}
	if fi.IsDir() != dir {
		if dir {
			return syscall.ENOTDIR
		}
		return syscall.EISDIR
	}
	return root.Remove(rel)
}

// renameEntry renames src to dst through os.Root. Off Linux, os.Root's
// rule applies: an existing directory target is refused with EEXIST even
// when it is empty.
func renameEntry(root *os.Root, src, dst string) error { return root.Rename(src, dst) }
