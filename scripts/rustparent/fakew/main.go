// Command fakew is the scripted protocol-2 worker of scripts/rustparent: it
// answers a Configure with Ok and a Feed with the frame in cur.bin (beside
// the executable), followed by after.bin when there is one (a Complete,
// after a Print, which does not end a turn). Any other request ends it.
package main

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
)

func main() {
	self, err := os.Executable()
	if err != nil {
		os.Exit(1)
	}
	dir := filepath.Dir(self)
	var hdr [4]byte
	send := func(b []byte) {
		binary.LittleEndian.PutUint32(hdr[:], uint32(len(b)))
		os.Stdout.Write(hdr[:])
		os.Stdout.Write(b)
	}
	for {
		if _, err := io.ReadFull(os.Stdin, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.LittleEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(os.Stdin, body); err != nil || len(body) == 0 {
			return
		}
		switch body[0] >> 3 { // the request's arm (its first key)
		case 1: // Configure
			send([]byte{0x52, 0x00}) // Ok
		case 3: // Feed
			b, err := os.ReadFile(filepath.Join(dir, "cur.bin"))
			if err != nil {
				return
			}
			send(b)
			if after, err := os.ReadFile(filepath.Join(dir, "after.bin")); err == nil {
				send(after)
			}
		default:
			return
		}
	}
}
