package mount

import "testing"

// FuzzOverlayMatchesReadWrite is TestOverlayMatchesReadWrite driven by the
// fuzzer: the same sequence of OS calls, on a read-write mount and on an
// overlay of the same tree, must get the same answers (the overlay keeps
// in memory what the read-write mount does to the disk), and the overlay's
// index must stay linked. Paths may hold "." and ".." components, which
// both modes clean lexically.
//
// Input: per call an op byte, then its path(s): a component count byte
// (1 + n%3), a byte per component (a name from a small set), a suffix
// byte ("/", "/." or nothing); mkdir takes a flags byte after its path
// (see randDiffCall).
func FuzzOverlayMatchesReadWrite(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 3})
	f.Add([]byte{1, 1, 2, 2, 6, 1, 0, 0, 2, 8, 0, 2, 9})
	f.Add([]byte{6, 1, 2, 9, 0, 1, 5, 9, 8, 0, 5, 9, 11, 1, 5, 9})
	f.Add([]byte{0, 2, 0, 1, 9, 3, 6, 0, 6, 1, 2, 9, 1, 0, 9, 8, 1, 1, 9})
	f.Add([]byte{7, 1, 2, 9, 0, 2, 2, 0, 9, 5, 0, 2, 9, 4, 1, 6, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		names := []string{"a", "b", "sub", "x.txt", "bin.dat", "c", "..", "."}
		runDiff(t, &byteChooser{data}, names, 64, "")
	})
}
