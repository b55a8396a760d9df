package client

// Queued returns how many events w holds that Next has not taken, and whether its
// queue overflowed since Next last said so.
func (w *Watch) Queued() (n int, lost bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.queue), w.lost
}
