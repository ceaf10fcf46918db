package codecv4

import (
	"unsafe"

	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/value"
)

// Memory policy of the decoder.
//
// Every allocation a decode makes is charged to the frame's budget before it
// is made, and nothing is refunded:
//
//   - Repeated fields follow the protocol's vector rule: when a vector is
//     full it grows to max(2×cap, 4) and the whole new allocation
//     (capacity × the Go size of one element) is charged. Packed node-id
//     runs of L bytes charge (len+L) slots up front. Node ids cost
//     budget.RefCost per slot and (key, value) pairs budget.PairCost.
//   - Single objects (payload structs of nodes, boxed optional fields,
//     *big.Int, …) are charged at their heap size class.
//   - String and bytes payloads are copied out of the frame (wire.Dec's
//     storage). Payloads of up to 1 KiB are packed into shared chunks, each
//     charged in full when it is allocated; a chunk is at most 32 KiB and
//     never larger than what is left of the frame, so the charge exceeds
//     the payload lengths only by chunk tails. Larger payloads get their own
//     allocation, charged at its heap size. Every copy is charged: a
//     repeated scalar string field that is overwritten does not reuse the
//     earlier buffer, so duplicates pay for each occurrence. This never
//     charges less than the protocol's rule (length when a new buffer is
//     needed).
//   - Node ids of containers, dict entries and attribute pairs live in
//     shared []uint32 chunks as well. Their contract charge (16 or 32 bytes
//     per slot) is credited to the chunk allocator, which spends the credit
//     on the chunks (4 bytes per slot); if the credit ever falls short, the
//     difference is charged too.
const (
	refChunkMax = 1 << 15
	nodeBytes   = int64(unsafe.Sizeof(value.Node{}))
)

// decoder holds the state of one frame decode: the state both codecs'
// decoders share (wire.Dec: budget, depth, string storage, the exceptions'
// missing locations) and what the arena decode adds to it.
type decoder struct {
	wire.Dec

	// v is the protocol version's tag table (dialect4 or dialect5).
	v *dialect

	// refs is the current chunk for node ids; len is the used part. credit
	// is what has been charged for ids but not yet spent on chunks.
	refs   []uint32
	credit int64

	// arm tracks facts about the envelope's current arm payload that the
	// domain types cannot hold; it is reset when a different arm replaces
	// the payload.
	arm armState
}

type armState struct {
	arena    bool // the payload's Arena field was present
	objIDLen int  // length of the last object_id uuid data; -1 when absent
}

func (d *decoder) resetArm() { d.arm = armState{objIDLen: -1} }

// newExt charges and allocates one T as the payload of n.
func newExt[T any](d *decoder, n *value.Node) error {
	x, err := wire.New[T](&d.Dec)
	if err != nil {
		return err
	}
	n.SetExt(x)
	return nil
}

// grow makes room for one more element in s by the protocol's vector rule,
// charging the replacement allocation at the Go size of T.
func grow[T any](d *decoder, s []T) ([]T, error) {
	var z T
	return budget.Grow(&d.Bud, s, int64(unsafe.Sizeof(z)))
}

// refCharge charges n bytes for id or pair slots and credits them to the id
// chunk allocator.
func (d *decoder) refCharge(n int64) error {
	if err := d.Charge(n); err != nil {
		return err
	}
	d.credit += n
	return nil
}

// refRegion is the id storage of the node being decoded: refs[start:len].
// It always sits at the end of the current chunk.
type refRegion struct {
	start int
	n     int // ids in the region
}

// refRoom makes room for extra more ids in the region, moving it to a new
// chunk when the current one is full. vcap is the region's contract
// capacity in ids (what has been charged for it): a moved region gets room
// to double, up to that capacity, so a long vector moves O(log n) times.
func (d *decoder) refRoom(r *refRegion, extra, vcap int) error {
	if cap(d.refs)-len(d.refs) >= extra {
		return nil
	}
	need := r.n + extra
	size := max(need, min(2*r.n, vcap), min(int(d.credit/4), refChunkMax))
	// Use (and pay for) the whole size class the allocator will hand out.
	cost := wire.AllocSize(4 * size)
	size = int(cost / 4)
	if cost > d.credit {
		if err := d.Charge(cost - d.credit); err != nil {
			return err
		}
		d.credit = cost
	}
	d.credit -= cost
	chunk := make([]uint32, r.n, size)
	copy(chunk, d.refs[r.start:r.start+r.n])
	d.refs = chunk
	r.start = 0
	return nil
}

// refPush appends one id; room must have been made.
func (d *decoder) refPush(r *refRegion, id uint32) {
	d.refs = append(d.refs, id)
	r.n++
}

// refDrop discards the region (its payload was displaced by another arm).
func (d *decoder) refDrop(r *refRegion) {
	if r.start+r.n == len(d.refs) {
		d.refs = d.refs[:r.start]
	}
	*r = refRegion{start: len(d.refs)}
}

// refSlice returns the region as a capacity-limited slice (nil when empty),
// and starts a new region after it.
func (d *decoder) refSlice(r *refRegion) []uint32 {
	if r.n == 0 {
		return nil
	}
	s := d.refs[r.start : r.start+r.n : r.start+r.n]
	*r = refRegion{start: len(d.refs)}
	return s
}
