package codecv2

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// vectorDir holds the recorded protocol-2 sessions (see its README.md).
const vectorDir = "../../testdata/v2"

// moreVectorDir holds more sessions of the same kind, recorded by
// internal/vecrec (see its README.md).
const moreVectorDir = "../../testdata/v2-more"

type exchange struct {
	RequestHex *string  `json:"request_hex"`
	RawHex     *string  `json:"raw_bytes_written_hex"`
	Responses  []string `json:"response_frames_hex"`
	Decoded    []string `json:"response_decoded"`
	EOFAfter   bool     `json:"eof_after"`
	Timeout    bool     `json:"timeout"`
}

type vector struct {
	Name      string     `json:"name"`
	Code      *string    `json:"python_code"`
	Requests  []string   `json:"request_frames_hex"`
	Responses []string   `json:"response_frames_hex"`
	Exchanges []exchange `json:"exchanges"`
	Nondet    []string   `json:"nondeterministic"`
	file      string
	more      bool // from moreVectorDir
}

var (
	vectorsOnce sync.Once
	vectorsList []*vector
	vectorsErr  error
)

func loadVectors(t testing.TB) []*vector {
	t.Helper()
	vectorsOnce.Do(func() {
		files, err := filepath.Glob(filepath.Join(vectorDir, "*.json"))
		if err != nil {
			vectorsErr = err
			return
		}
		more, err := filepath.Glob(filepath.Join(moreVectorDir, "*.json"))
		if err != nil {
			vectorsErr = err
			return
		}
		files = append(files, more...)
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				vectorsErr = err
				return
			}
			v := &vector{file: filepath.Base(f), more: filepath.Dir(f) == filepath.Clean(moreVectorDir)}
			if err := json.Unmarshal(b, v); err != nil {
				vectorsErr = err
				return
			}
			vectorsList = append(vectorsList, v)
		}
	})
	if vectorsErr != nil {
		t.Fatal(vectorsErr)
	}
	if len(vectorsList) == 0 {
		t.Fatalf("no vectors in %s", vectorDir)
	}
	return vectorsList
}

func vectorByName(t testing.TB, name string) *vector {
	t.Helper()
	for _, v := range loadVectors(t) {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no vector %q", name)
	return nil
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex: %v", err)
	}
	return b
}

// sentFrame is one request frame as the worker received it, with the
// turn-ending response it produced (nil when there was none).
type sentFrame struct {
	frame    []byte
	raw      bool // cut from raw_bytes_written_hex
	response []byte
	decoded  string
}

// sentFrames lists every complete request frame of a session, including
// those cut out of raw byte writes, paired with their turn-ending reply.
func (v *vector) sentFrames(t testing.TB) []sentFrame {
	var out []sentFrame
	for _, ex := range v.Exchanges {
		var frames [][]byte
		raw := false
		switch {
		case ex.RequestHex != nil && *ex.RequestHex != "":
			frames = [][]byte{unhex(t, *ex.RequestHex)}
		case ex.RequestHex != nil:
			frames = [][]byte{{}}
		case ex.RawHex != nil && *ex.RawHex != "STDIN CLOSED":
			raw = true
			b := unhex(t, *ex.RawHex)
			for len(b) >= 4 {
				n := binary.LittleEndian.Uint32(b)
				if uint64(n) > uint64(len(b)-4) {
					break
				}
				frames = append(frames, b[4:4+n])
				b = b[4+n:]
			}
		}
		// Turn-ending responses, in order.
		var ends []int
		for i, r := range ex.Responses {
			if !strings.HasPrefix(r, "0a") {
				ends = append(ends, i)
			}
		}
		for i, f := range frames {
			sf := sentFrame{frame: f, raw: raw}
			if i < len(ends) {
				sf.response = unhex(t, ex.Responses[ends[i]])
				sf.decoded = ex.Decoded[ends[i]]
			}
			out = append(out, sf)
		}
	}
	return out
}
