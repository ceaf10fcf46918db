//go:build !linux

package mount

import "io/fs"

// statOf extracts CPython's stat_result fields from a FileInfo. Off Linux
// only the portable fields are known; inode, device and owner are 0 and
// the link count is 1.
func statOf(fi fs.FileInfo) statInfo { return genericStat(fi) }
