//go:build unix

package session

// Within is within (replybound_test.go), for the tests of package
// session_test.
var Within = within

// heldCount returns how many new host objects answers not yet sent hold
// (see heldObjects).
func (st *objectStore) heldCount() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.held
}
