//go:build unix

package session

import "testing"

// realLaunch is how realSession starts its workers: local processes,
// unless TestRealSuiteOverWebSocket (remote_server_suite_test.go) points
// it at the real Monty server.
var realLaunch Launch

// realSuiteCases are the real-worker feature cases (host functions,
// futures, lookups, objects, OS calls, dump/load, limits, prints) that
// also run over a WebSocket. Cases that need a local process (Reset
// reuse, pids, exit codes, negotiation caching) are not in the list, nor
// is SuspensionLimit: the server enforces max_suspensions itself
// (TestRemoteSuspensionLimitEnforcedByServer).
var realSuiteCases = []struct {
	Name string
	F    func(*testing.T)
}{
	{"GlobalsPersistAndInputs", TestRealGlobalsPersistAndInputs},
	{"PrintStreamingInOrder", TestRealPrintStreamingInOrder},
	{"HostFunctions", TestRealHostFunctions},
	{"AsyncGatherRunsConcurrently", TestRealAsyncGatherRunsConcurrently},
	{"AsyncErrorsAndUnawaitedFutures", TestRealAsyncErrorsAndUnawaitedFutures},
	{"OSCalls", TestRealOSCalls},
	{"DumpLoadIdleAndSuspended", TestRealDumpLoadIdleAndSuspended},
	{"ContextEndsWhileSuspendedAbortsFeed", TestRealContextEndsWhileSuspendedAbortsFeed},
	{"MaxDuration", TestRealMaxDuration},
	{"TypeCheck", TestRealTypeCheck},
	{"HostMethodCallMutatesGoState", TestRealHostMethodCallMutatesGoState},
	{"HostLazyAttributes", TestRealHostLazyAttributes},
	{"HostConstruction", TestRealHostConstruction},
	{"HostInstancePassedBack", TestRealHostInstancePassedBack},
	{"HostObjectErrorsKeepSession", TestRealHostObjectErrorsKeepSession},
	{"HostErrorsRaiseAlikeOnEveryPath", TestRealHostErrorsRaiseAlikeOnEveryPath},
	{"HostExceptionsAreSentAsTheWorkerTakesThem", TestRealHostExceptionsAreSentAsTheWorkerTakesThem},
	{"UncaughtHostErrorUnwrapsToTheGoError", TestRealUncaughtHostErrorUnwrapsToTheGoError},
	{"RawFuncArgumentErrorsAreTypeErrors", TestRealRawFuncArgumentErrorsAreTypeErrors},
}

// RealSuiteCases exposes realSuiteCases to the external test package,
// which can import the server (this package's tests cannot: the server
// imports session).
var RealSuiteCases = realSuiteCases

// SetRealLaunch makes realSession start its sessions with l until the
// returned function is called.
func SetRealLaunch(l Launch) (restore func()) {
	realLaunch = l
	return func() { realLaunch = Launch{} }
}
