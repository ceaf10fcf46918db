//go:build unix

package session

// Within is within (replybound_test.go), for the tests of package
// session_test.
var Within = within
