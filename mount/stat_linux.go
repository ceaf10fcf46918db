//go:build linux

package mount

import (
	"io/fs"
	"syscall"
)

// statOf extracts CPython's stat_result fields from a FileInfo.
func statOf(fi fs.FileInfo) statInfo {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return genericStat(fi)
	}
	return statInfo{
		mode:  st.Mode,
		ino:   st.Ino,
		dev:   st.Dev,
		nlink: uint64(st.Nlink),
		uid:   st.Uid,
		gid:   st.Gid,
		size:  st.Size,
		atime: float64(st.Atim.Sec) + float64(st.Atim.Nsec)/1e9,
		mtime: float64(st.Mtim.Sec) + float64(st.Mtim.Nsec)/1e9,
		ctime: float64(st.Ctim.Sec) + float64(st.Ctim.Nsec)/1e9,
	}
}
