package node

// SetCutPieces makes each piece of a snapshot's cut n entries, and calls between(n)
// after each piece is copied (nil: nothing), until the returned function restores
// them.
func SetCutPieces(n int, between func()) (restore func()) {
	oldBudget, oldHook := cutBudget, tookPiece
	cutBudget, tookPiece = n, between
	return func() { cutBudget, tookPiece = oldBudget, oldHook }
}
