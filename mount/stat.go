package mount

import (
	"io/fs"
	"time"

	"github.com/gomonty/monty/value"
)

// StatResultType is the type name of the named tuple answering Path.stat(),
// as CPython spells os.stat_result's type.
const StatResultType = "os.stat_result"

// statFields are CPython's first ten os.stat_result fields, in order.
var statFields = []string{"st_mode", "st_ino", "st_dev", "st_nlink", "st_uid", "st_gid",
	"st_size", "st_atime", "st_mtime", "st_ctime"}

// POSIX file type bits of st_mode.
const (
	sIFIFO  = 0o010000
	sIFCHR  = 0o020000
	sIFDIR  = 0o040000
	sIFBLK  = 0o060000
	sIFREG  = 0o100000
	sIFLNK  = 0o120000
	sIFSOCK = 0o140000
)

// statInfo holds the stat_result fields.
type statInfo struct {
	mode                uint32
	ino, dev, nlink     uint64
	uid, gid            uint32
	size                int64
	atime, mtime, ctime float64
}

// genericStat derives the portable fields from a FileInfo.
func genericStat(fi fs.FileInfo) statInfo {
	m := fi.Mode()
	mode := uint32(m.Perm())
	switch {
	case m&fs.ModeDir != 0:
		mode |= sIFDIR
	case m&fs.ModeSymlink != 0:
		mode |= sIFLNK
	case m&fs.ModeNamedPipe != 0:
		mode |= sIFIFO
	case m&fs.ModeSocket != 0:
		mode |= sIFSOCK
	case m&fs.ModeCharDevice != 0:
		mode |= sIFCHR
	case m&fs.ModeDevice != 0:
		mode |= sIFBLK
	default:
		mode |= sIFREG
	}
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	t := unixSeconds(fi.ModTime())
	return statInfo{mode: mode, nlink: 1, size: fi.Size(), atime: t, mtime: t, ctime: t}
}

// syntheticStat is the stat of an overlay entry that lives only in memory.
func syntheticStat(dir bool, size int64, mtime time.Time) statInfo {
	t := unixSeconds(mtime)
	if dir {
		return statInfo{mode: sIFDIR | 0o755, nlink: 2, size: 4096, atime: t, mtime: t, ctime: t}
	}
	return statInfo{mode: sIFREG | 0o644, nlink: 1, size: size, atime: t, mtime: t, ctime: t}
}

// unixSeconds is t as a float Unix timestamp, as stat_result reports it.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// clampInt converts a uint64 field to int64, saturating.
func clampInt(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

// node adds the os.stat_result named tuple to g and returns its id.
func (s statInfo) node(g *value.Graph) value.NodeID {
	ids := []value.NodeID{
		g.Add(value.Int(int64(s.mode))),
		g.Add(value.Int(clampInt(s.ino))),
		g.Add(value.Int(clampInt(s.dev))),
		g.Add(value.Int(clampInt(s.nlink))),
		g.Add(value.Int(int64(s.uid))),
		g.Add(value.Int(int64(s.gid))),
		g.Add(value.Int(s.size)),
		g.Add(value.Float(s.atime)),
		g.Add(value.Float(s.mtime)),
		g.Add(value.Float(s.ctime)),
	}
	return g.Add(value.NamedTupleNode(StatResultType, append([]string(nil), statFields...), ids...))
}
