package core

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb2 "github.com/gomonty/monty/internal/pb/montyp2v1"
	pb5 "github.com/gomonty/monty/internal/pb/montyp5v1"
	pb4 "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/message"
)

// TestDialectsMatchSchemas checks every tag of each version's table
// against that version's generated descriptor (a field the version lacks
// must be 0 in the table and absent from the schema), so the schemas and
// the tables cannot drift apart.
func TestDialectsMatchSchemas(t *testing.T) {
	for _, c := range []struct {
		v     *Dialect
		files protoreflect.FileDescriptor
	}{
		{Dialect2, pb2.File_montyp2_v1_montyp2_proto},
		{Dialect4, pb4.File_monty_v1_monty_proto},
		{Dialect5, pb5.File_montyp5_v1_montyp5_proto},
	} {
		v := c.v
		field := func(msg, name string) int {
			md := c.files.Messages().ByName(protoreflect.Name(msg))
			if md == nil {
				t.Fatalf("%s: no message %s", v.Name, msg)
			}
			if fd := md.Fields().ByName(protoreflect.Name(name)); fd != nil {
				return int(fd.Number())
			}
			return 0
		}
		for _, f := range []struct {
			got       protowire.Number
			msg, name string
		}{
			{v.LimDuration, "ResourceLimits", "max_duration_micros"},
			{v.LimFeed, "ResourceLimits", "max_feed_duration_micros"},
			{v.LimTurn, "ResourceLimits", "max_turn_duration_micros"},
			{v.LimSleep, "ResourceLimits", "max_total_sleep_micros"},
			{v.CfgPolicy, "Configure", "os_policy"},
			{v.CfgPersistence, "Configure", "persistence"},
			{v.CfgProfile, "Configure", "profile"},
			{v.FeedValues, "Feed", "values"},
			{v.FeedSkip, "Feed", "skip_type_check"},
			{v.FeedCwd, "Feed", "cwd"},
			{v.CallValues, "ResumeCall", "values"},
			{v.LookupValues, "ResumeNameLookup", "values"},
			{v.LookupArm, "ResumeNameLookup", "value"},
			{v.LookupArm + 1, "ResumeNameLookup", "undefined"},
			{v.LookupArm + 2, "ResumeNameLookup", "error"},
			{v.FutureValues, "ResumeFutures", "values"},
			{v.CompleteValue, "Complete", "values"},
			{v.EvDuration, "ChildEvent", "max_duration_micros"},
			{v.EvScriptName, "ChildEvent", "restored_script_name"},
			{v.EvSuspensions, "ChildEvent", "max_suspensions"},
			{v.EvFeedExec, "ChildEvent", "feed_execution_micros"},
			{v.EvFeedLimit, "ChildEvent", "max_feed_duration_micros"},
			{v.EvTurnLimit, "ChildEvent", "max_turn_duration_micros"},
			{v.EvSleep, "ChildEvent", "max_total_sleep_micros"},
			{v.EvSessionID, "ChildEvent", "session_id"},
			{v.FcEager, "FunctionCall", "allow_eager_await"},
			{v.FcValues, "FunctionCall", "values"},
			{v.FcPosition, "FunctionCall", "position"},
			{v.NlPosition, "NameLookup", "position"},
			{v.RfPosition, "ResolveFutures", "position"},
			{v.OsPosition, "OsCall", "position"},
			{v.OsValues, "OsCall", "values"},
			{v.OsEager, "OsCall", "allow_eager_await"},
			{protowire.Number(v.OsLast), "OsCall", map[bool]string{true: "date_time_now", false: "urandom"}[v.OsLast == message.OpDateTimeNow]},
			{v.OsArms[0], "OsCall", "time"},
			{v.OsArms[1], "OsCall", "sleep"},
			{v.OsArms[2], "OsCall", "async_sleep"},
			{v.OsArms[3], "OsCall", "system_sleep"},
			{v.OsArms[4], "OsCall", "async_system_sleep"},
		} {
			if want := field(f.msg, f.name); int(f.got) != want {
				t.Errorf("%s: %s.%s = %d, schema says %d", v.Name, f.msg, f.name, f.got, want)
			}
		}
		segmented := c.files.Messages().ByName("PrintSegment") != nil
		if v.PrintSegmented != segmented {
			t.Errorf("%s: PrintSegmented = %v, schema has PrintSegment: %v", v.Name, v.PrintSegmented, segmented)
		}
		if n := c.files.Messages().ByName("OsCall").Oneofs().ByName("call").Fields().Len(); v.OsArm(v.OsLast) == 0 || n != int(v.OsLast)-1+countArms(v) {
			t.Errorf("%s: OsCall has %d arms, the table %d", v.Name, n, int(v.OsLast)-1+countArms(v))
		}
	}
}

func countArms(v *Dialect) int {
	n := 0
	for _, a := range v.OsArms {
		if a != 0 {
			n++
		}
	}
	return n
}

// TestDialectOrder checks the assumption the encoder makes about the tag
// tables: within each message, the fields it writes are in ascending order
// (ChildEvent's script name and suspension cap, which protocol 2 numbers
// the other way round, are written in whichever order the table gives).
func TestDialectOrder(t *testing.T) {
	for _, v := range []*Dialect{Dialect2, Dialect4, Dialect5} {
		seqs := [][]protowire.Number{
			{v.LimDuration, 2, 3, 4, 5, v.LimFeed, v.LimTurn, v.LimSleep},
			{10, v.CfgPolicy, v.CfgPersistence, v.CfgProfile},
			{2, v.FeedValues, v.FeedSkip, v.FeedCwd},
			{2, v.CallValues},
			{v.LookupValues, v.LookupArm},
			{1, v.FutureValues},
			{1, v.CompleteValue},
			{12, 20, v.EvDuration, min(v.EvScriptName, v.EvSuspensions), max(v.EvScriptName, v.EvSuspensions),
				v.EvFeedExec, v.EvFeedLimit, v.EvTurnLimit, v.EvSleep, v.EvSessionID},
			{5, v.FcEager, v.FcValues, v.FcPosition},
			{2, v.NlPosition},
			{1, v.RfPosition},
			{protowire.Number(v.OsLast), v.OsArms[0], v.OsArms[1], v.OsArms[2], v.OsArms[3], v.OsArms[4], v.OsValues, v.OsEager, v.OsPosition},
		}
		for _, s := range seqs {
			var last protowire.Number
			for _, n := range s {
				if n == 0 {
					continue
				}
				if n <= last {
					t.Errorf("%s: tags %v are not ascending", v.Name, s)
				}
				last = n
			}
		}
		for op := message.OpExists; op <= message.OpAsyncSystemSleep; op++ {
			if arm := v.OsArm(op); arm != 0 && v.OsOp(arm) != op {
				t.Errorf("%s: op %v → arm %d → op %v", v.Name, op, arm, v.OsOp(arm))
			}
		}
	}
}
